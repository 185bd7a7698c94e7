"""The constructive program (the fallback): counts shared between kernels, kernels built from ones built
before them, and counts added over copies of the halved input, each allocated and verified."""

from __future__ import annotations

from dataclasses import replace

from search_cases import check

from cain.backend.verify import verify_program
from cain.frontend.kernel import parse_filter
from cain.search.allocate import allocated, allocated_and_verified
from cain.search.constructive.program import constructive, shortest_constructive


def test_two_kernels_in_three_registers_add_their_common_part_once():
    """Two kernels and their input in three registers leave none to divide or double: both add halved
    copies of the input once per count. Added once into an accumulator both go on from, the counts they
    share cost half, and the program allocates on the three registers and computes the filter."""
    f = parse_filter(
        "filter pair\ninput A\noutput k0 -> A = 1/4 [1 2 0; 4 3 1; 3 2 3]\n"
        "output k1 -> B = 1/4 [1 1 3; 0 3 2; 3 3 3]\noption registers = A B C\n",
        "pair.cain",
    )
    alone = constructive(f, "all", [1, 0], 0, 2, sharing=False)
    shared = constructive(f, "all", [1, 0], 0, 2, sharing=True)
    assert shared.macros < alone.macros
    done = shortest_constructive(f, "all", f.registers, lambda p: allocated_and_verified(p, f, f.registers))
    assert done is not None and done[1].macros <= shared.macros
    check(done[0], f)


def _second_over_first(k0: str, k1: str):
    """A filter of kernels `k0` into B and `k1` into C in registers A to D; the filter of `k1` alone in A, C
    and D; and `k0`'s goal as a kernel built before it, kept in B."""
    f = parse_filter(
        f"filter two\ninput A\noutput k0 -> B = {k0}\noutput k1 -> C = {k1}\noption registers = A B C D\n",
        "two.cain",
    )
    return f, replace(f, kernels=(f.kernels[1],), registers=("A", "C", "D")), (("B", f.kernels[0].goal),)


def test_a_kernel_starts_from_one_built_before_it():
    """A kernel that is one built before it, moved, with a count less, adds that kernel once and builds only
    the difference; allocated with the earlier kernel kept in its register, it computes both."""
    f, sub, bases = _second_over_first("1/4 [3 1 2; 1 3 1; 2 1 3]", "1/4 [0 3 1 2; 0 1 3 1; 0 2 1 2]")
    alone = constructive(sub, "all", [0], 0, 0, bases=bases)
    shared = constructive(sub, "all", [0], 0, 0, sharing=True, bases=bases)
    assert shared.macros < alone.macros
    names = (*sub.registers, "B")
    done = shortest_constructive(sub, "all", names, lambda p: allocated(p, names), bases)
    assert done is not None and done[1].macros <= shared.macros
    verify_program(done[0], [*sub.initial_goals(), bases[0][1]], [*sub.final_goals(), bases[0][1]], f.depth)


def test_a_kernel_doubles_what_is_left_after_one_built_before_it():
    """From the input halved in place, a kernel that is one built before it, moved, plus large counts at two
    positions adds that kernel once and builds the difference by doubling: shorter than either alone, and
    it computes the kernel with the earlier one kept."""
    f, sub, bases = _second_over_first("1/8 [7 5 6; 5 7 3; 6 5 7]", "1/8 [15 7 5 6; 0 5 7 3; 13 6 5 7]")
    names = (*sub.registers, "B")

    def build(doubling: bool, sharing: bool):
        return constructive(sub, "all", [0], 0, 3, doubling=doubling, sharing=sharing, bases=bases)

    both = build(doubling=True, sharing=True)
    assert both.macros < min(build(True, False).macros, build(False, True).macros)
    done = allocated(both, names)
    verify_program(done, [*sub.initial_goals(), bases[0][1]], [*sub.final_goals(), bases[0][1]], f.depth)


def test_a_count_is_added_over_two_copies_of_the_halved_input():
    """Two kernels of large counts and their input in three registers: halved in place three times, the
    input leaves its quarter beside its eighth, and the first kernel adds each count as `2a + r` over
    both (seven is three adds, not seven); the quarter's register then holds the second kernel. Shorter
    than adding the eighth once per unit, it allocates on the three registers and computes both."""
    f = parse_filter(
        "filter pair\ninput A\noutput k0 -> A = 1/8 [7 1 6; 5 8 3; 2 7 4]\n"
        "output k1 -> B = 1/8 [3 7 5; 8 2 6; 4 6 7]\noption registers = A B C\n",
        "pair.cain",
    )
    once = constructive(f, "all", [1, 0], 0, 3)
    wide = constructive(f, "all", [1, 0], 0, 3, copies=(1,), staircase=True)
    assert wide.macros < once.macros
    check(allocated_and_verified(wide, f, f.registers), f)
    done = shortest_constructive(f, "all", f.registers, lambda p: allocated_and_verified(p, f, f.registers))
    assert done is not None and done[1].macros <= wide.macros
    check(done[0], f)
