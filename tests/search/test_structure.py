"""Kernels that are convolutions of small ones: factoring a goal, and the chain of small steps built
from the factors, checked by the verifier (symbolically and in the simulator)."""

from __future__ import annotations

import pytest

from cain.backend.regalloc import allocate
from cain.backend.verify import verify_program
from cain.frontend.kernel import parse_filter
from cain.model.goal import Goal
from cain.model.isa import MACROS
from cain.model.program import Program
from cain.search import SearchConfig, search
from cain.search.goals import atoms
from cain.search.goals.space import Space
from cain.search.heuristic import structure


def binomial(n: int) -> list[int]:
    row = [1]
    for _ in range(n - 1):
        row = [a + b for a, b in zip([0, *row], [*row, 0], strict=True)]
    return row


def gaussian(n: int) -> Goal:
    b = binomial(n)
    return Goal.from_matrices([[[p * q for q in b] for p in b]])


def chain(
    goal: Goal, depth: int, iset: str, only: frozenset[str] | None = None
) -> tuple[list[structure.Step], Program]:
    """The steps of `goal`'s chain, whose remainder must be the input in place, and the chain from the
    input, allocated and verified."""
    space = Space(iset, depth, 6, [atoms.from_goal(Goal.identity(2**depth))], only=only)
    steps, rest = structure.factor(atoms.from_goal(goal), space.shift_offsets, depth)
    assert rest == ((0, 0, 0, 2**depth),)
    start = Program("g", [(0, "A")], [], [(0, "A")])
    plan = structure.chain_program(start, steps, structure.ChainForms.of(space))
    program = allocate(plan, ("A", "B", "C", "D", "E", "F"))
    verify_program(program, [Goal.identity(2**depth)], [goal], depth)
    return steps, program


def test_divide_is_exact_polynomial_division():
    g = atoms.counts(atoms.from_goal(Goal.from_matrices([[[1, 2, 1]]])))
    q = structure.divide(g, (1, 0), 1)
    assert q is not None and sorted(q.values()) == [1, 1]
    assert structure.divide(q, (1, 0), 1) == {(-1, 0, 0): 1}
    assert structure.divide(g, (0, 1), 1) is None  # [1 2 1] has no vertical factor
    assert structure.divide(g, (1, 0), -1) is None
    edge = atoms.counts(atoms.from_goal(Goal.from_matrices([[[-1, 0, 1]]])))
    assert structure.divide(edge, (2, 0), -1) == {(-1, 0, 0): -1}  # x - 1/x = -(1 - x^2) / x


@pytest.mark.parametrize("iset", ["all", "basic"])
@pytest.mark.parametrize("n", [3, 5, 7, 9])
def test_binomial_gaussians_become_short_verified_chains(n, iset):
    depth = 2 * (n - 1)
    # nothing left but the input (`chain` checks it): every factor carries a halving
    steps, program = chain(gaussian(n), depth, iset)
    assert sum(s.factors for s in steps) == depth and sum(s.halvings for s in steps) == depth
    # a [1 2 1] factor pair: two divisions, two moves and one add (two adds without add3)
    assert program.macros == (n - 1) * (5 if iset == "all" else 6)


def test_factor_finds_box_and_derivative_factors_and_declines_others():
    space = Space("all", 4, 6, [atoms.from_goal(Goal.identity(16))])
    box = atoms.from_goal(Goal.from_matrices([[[1] * 4 for _ in range(4)]]))
    steps, rest = structure.factor(box, space.shift_offsets, 4)
    # (1 + y)(1 + y^2)(1 + x)(1 + x^2): each axis's two factors one box step
    assert sorted((s.m, s.sign, s.box) for s in steps) == [((0, 1), 1, True), ((1, 0), 1, True)]
    assert atoms.total(rest) == 16 and len(rest) == 1
    laplacian = atoms.from_goal(Goal.from_matrices([[[0, 1, 0], [1, -4, 1], [0, 1, 0]]]))
    assert structure.factor(laplacian, space.shift_offsets, 4) is None


@pytest.mark.parametrize(("only", "macros"), [(None, 10), (frozenset(MACROS) - {"add3", "add2x"}, 12)])
def test_a_box_of_four_taps_is_a_move_a_moved_add_and_a_three_operand_add(only, macros):
    # per axis two halvings, movx, add2x and add3: 5, against two single steps' 6 without those macros
    box = Goal.from_matrices([[[1] * 4 for _ in range(4)]])  # the lags put its remainder at the input's place
    assert chain(box, 4, "all", only)[1].macros == macros


@pytest.mark.parametrize(("only", "macros"), [(None, 6), (frozenset(MACROS) - {"subx", "sub2x"}, 7)])
def test_a_difference_factor_is_one_moved_difference(only, macros):
    # [1 0 -1] x [1 2 1] / 4, the input at its remainder's place: a [1 2 1] pair (5 macros), then (1 - x^2)
    # as one sub2x (a mov2x and a sub without it)
    smooth = Goal({(x, y, 0): c * s for x, s in ((-2, 1), (0, -1)) for y, c in ((-1, 1), (0, 2), (1, 1))})
    assert chain(smooth, 2, "all", only)[1].macros == macros


def test_the_search_starts_from_the_chain():
    f = parse_filter("filter g\ninput A\noutput o -> A = 1/16 [1 2 1; 2 4 2; 1 2 1]\n", "g.cain")
    seeded = search(f, SearchConfig(node_budget=1, progress=False))
    assert seeded.program is not None and seeded.events[0].macros == 10  # two [1 2 1] pairs
    verify_program(seeded.program, f.initial_goals(), f.final_goals(), f.depth)
    plain = search(f, SearchConfig(node_budget=1, progress=False, structure_nodes=0, fallback=False))
    assert plain.program is None


def test_a_blur_against_the_centre_is_factored_around_it():
    g5 = gaussian(5)
    unsharp = Goal({(0, 0, 0): 512}) - g5  # 2 x input - the 5x5 blur, over 256
    space = Space("all", 8, 6, [atoms.from_goal(Goal.identity(256))])
    steps, rest, centre = structure.factor_with_centre(atoms.from_goal(unsharp), space.shift_offsets, 8)
    assert centre == ((0, 0, 0, 512),) and len(steps) == 4 and len(rest) == 1
    f = parse_filter(
        "filter u\ninput A\noutput o -> A = 1/256 [-1 -4 -6 -4 -1; -4 -16 -24 -16 -4; -6 -24 476 -24 -6;"
        " -4 -16 -24 -16 -4; -1 -4 -6 -4 -1]\n",
        "u.cain",
    )
    result = search(f, SearchConfig(node_budget=5, progress=False))
    verify_program(result.program, f.initial_goals(), f.final_goals(), f.depth)
    assert result.program.macros <= 25  # the search alone: about 100 in 5 s


@pytest.mark.parametrize(
    ("kernel", "macros"),
    [
        # blur - 16: the last pair's second move is a subx of the centre (12 with a sub of its own)
        ("1/16 [1 2 1; 2 -12 2; 1 2 1]", 11),
        # the cross - 4: the last single step's move is a sub2x of the centre (10 with a sub)
        ("[0 1 0; 1 -4 1; 0 1 0]", 9),
    ],
)
def test_the_centre_joins_the_last_step(kernel, macros):
    f = parse_filter(f"filter c\ninput A\noutput o -> A = {kernel}\n", "c.cain")
    result = search(f, SearchConfig(node_budget=1, progress=False, fallback=False))
    assert result.events[0].macros == macros
    verify_program(result.program, f.initial_goals(), f.final_goals(), f.depth)


def test_a_pair_with_one_halving_keeps_its_centre():
    # 1/8 [1 2 1; 2 2 2; 1 2 1] is a binomial at depth 4 against its centre: at depth 3 one [1 2 1] pair of
    # its chain carries a single halving, whose centre is the unhalved value (a wrong chain fails finish())
    f = parse_filter("filter g\ninput A\noutput o -> A = 1/8 [1 2 1; 2 2 2; 1 2 1]\n", "g.cain")
    result = search(f, SearchConfig(node_budget=1, progress=False, fallback=False))
    assert result.program is not None and not result.constructive
    verify_program(result.program, f.initial_goals(), f.final_goals(), f.depth)
