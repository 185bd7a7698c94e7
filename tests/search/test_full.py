"""The proof that a full goal-bag (as many outputs as registers) has no program in the goal model
(`cain.search.full`): refuted bags, bags that can shrink, and soundness against the search itself."""

from __future__ import annotations

import random

import pytest

from cain.frontend.kernel import parse_filter
from cain.model.filter import Filter
from cain.search import SearchConfig, search
from cain.search.exact.full import full_bag_refuted
from cain.search.goals import atoms


def goals_of(source: str) -> tuple[Filter, list[atoms.Atoms]]:
    filt = parse_filter(source, "t.cain")
    return filt, [atoms.from_goal(g) for g in filt.final_goals()]


def test_sum_and_difference_in_two_registers_is_refuted():
    # (a + east a) / 2 and (a - east a) / 2: neither holds a copy of the other, and no division fits
    _, final = goals_of("filter t\ninput A\noutput s -> A = 1/2 [1 1]\noutput d -> B = 1/2 [1 -1]\n")
    assert full_bag_refuted(final, inputs=1, registers=2)


def test_a_bag_that_can_shrink_is_not_refuted_and_compiles():
    # b = a + east a holds a moved copy of a, which leaves a copy of a: movx then add
    src = "filter t\ninput A\noutput a -> A = [1]\noutput b -> B = [1 1]\noption registers = A B\n"
    filt, final = goals_of(src)
    assert not full_bag_refuted(final, inputs=1, registers=2)
    assert search(filt, SearchConfig(node_budget=200, progress=False)).program is not None


def test_only_full_bags_with_fewer_inputs_than_registers_are_judged():
    _, final = goals_of("filter t\ninput A\noutput s -> A = 1/2 [1 1]\noutput d -> B = 1/2 [1 -1]\n")
    assert not full_bag_refuted(final, inputs=1, registers=3)  # a free register: not a full bag
    assert not full_bag_refuted(final[:1], inputs=1, registers=1)  # the input itself may become the output


@pytest.mark.slow
def test_the_search_never_finds_a_program_for_a_refuted_bag():
    """Random filters with as many outputs as registers, made so that many can shrink: whenever the
    search finds a (verified) program, the bag must not have been refuted."""
    rng = random.Random(5)
    found = refuted = 0
    for _ in range(40):
        registers = rng.choice([2, 3])
        depth = rng.choice([0, 1])
        one = 1 << depth

        def taps(one: int = one) -> atoms.Atoms:
            cells = {(rng.randint(-1, 1), rng.randint(-1, 1), 0): rng.choice([1, -1]) * one for _ in range(3)}
            return atoms.from_counts(cells)

        final = [taps()]
        while len(final) < registers:
            if rng.random() < 0.7:  # a moved earlier goal plus one tap: such bags can often shrink
                moved = atoms.shift(rng.choice(final), rng.randint(-1, 1), rng.randint(-1, 1))
                g = atoms.add(
                    moved, ((rng.randint(-1, 1), rng.randint(-1, 1), 0, rng.choice([1, -1]) * one),)
                )
            else:
                g = taps()
            if g and g not in final:
                final.append(g)
        filt = Filter.of_goals(
            "t", [atoms.to_goal(g) for g in final], depth, registers=("A", "B", "C")[:registers]
        )
        proof = full_bag_refuted(final, inputs=1, registers=registers)
        # a refuted bag stops before any hand-over, so the exact search (proving optima) is left out
        cfg = SearchConfig(
            node_budget=150,
            instruction_set=rng.choice(["all", "basic"]),
            progress=False,
            fallback=False,
            exact_reach=0,
        )
        result = search(filt, cfg)
        found += result.program is not None
        refuted += proof
        assert not (proof and result.program is not None), final
    assert found >= 10 and refuted >= 2  # both outcomes occur: the check is not vacuous


@pytest.mark.slow
def test_centre_plan_without_a_spare_register():
    """A kernel whose factors leave a centre atom, searched kernel by kernel with no register to spare
    for it (a crash once): the search still returns a verified program."""
    src = (
        "filter t\ninput A\noutput o0 -> A = [0 1 0; 0 0 -1; 0 0 1]\n"
        "output o1 -> B = [0 1 0 0 0; 0 0 -1 0 0; 0 -1 1 0 0; 0 0 0 0 0; 0 0 0 0 0]\n"
        "option registers = A B\n"
    )
    filt = parse_filter(src, "t.cain")
    assert search(filt, SearchConfig(node_budget=300, progress=False)).program is not None
