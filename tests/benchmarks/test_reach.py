"""The reach diagnostic: a recorded program read back as the program it was, and replayed in reverse
against the search's pair generation, step by step."""

from __future__ import annotations

from benchmarks import reach
from cain.api import read_filters
from cain.backend.verify import verify_for_filter
from cain.search import SearchConfig

TWO_KERNELS = read_filters(
    "filter t\ninput A\noutput k0 -> A = 1/2 [0 -1 1; 1 0 -1; 1 0 1]\n"
    "output k1 -> B = 1/2 [0 1 -1; 1 1 0; 0 0 1]\n"
)[0]

JAVA = [  # Cain-Java's nine-macro program of TWO_KERNELS (benchmarks/results/cain-java-60s, cnn_ternary2)
    "div(B, E, A)", "movx(E, B, east)", "neg(A, E)", "mov2x(E, A, west, west)", "sub2x(C, B, E, east, south)",
    "addx(E, B, A, north)", "sub2x(D, B, E, south, west)", "add3(B, B, C, E)", "add3(A, C, A, D)",
]


def test_a_recorded_program_reads_back_as_the_program_it_was():
    """The lines name registers; read back, each kernel ends in its register and the program verifies."""
    program = reach.program_of(JAVA, TWO_KERNELS)
    assert program.macros == 9
    assert [r for _, r in program.outputs] == ["A", "B"]
    verify_for_filter(program, TWO_KERNELS)


def test_every_step_of_the_two_kernels_program_is_offered():
    """Each of the nine steps is among the children the search keeps: the first, one `add3` per kernel
    around the part they share, is the one pair generation once lacked."""
    steps = reach.replay(reach.program_of(JAVA, TWO_KERNELS), TWO_KERNELS, SearchConfig())
    assert [s["step"] for s in steps] == list(range(8, -1, -1))
    assert all(s["rank"] is not None for s in steps)


def test_a_step_not_offered_is_listed_and_the_replay_goes_on():
    """With `add3` left out of the instruction set, the two last steps are not offered; the steps before
    them still are."""
    only = ("div", "movx", "neg", "mov2x", "sub2x", "addx", "add", "sub", "mov", "res")
    blind = reach.replay(reach.program_of(JAVA, TWO_KERNELS), TWO_KERNELS, SearchConfig(macros=only))
    assert [s["step"] for s in blind if s["rank"] is None] == [8, 7]
    assert all(s["rank"] is not None for s in blind if s["step"] < 7)
