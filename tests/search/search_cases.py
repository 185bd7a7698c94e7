"""The example filters the search tests read, and the check that a search's program computes its filter."""

from __future__ import annotations

from pathlib import Path

from cain.backend.verify import verify_program
from cain.frontend.kernel import parse_filter
from cain.model.goal import Goal

EXAMPLES = Path(__file__).parents[2] / "examples"

CNN6 = """filter cnn6
input  A
output k0 -> A = 1/2 [-1 1 1; 1 0 0; 1 -1 -1]
output k1 -> B = 1/2 [-1 1 -1; -1 0 1; 1 0 0]
output k2 -> C = 1/2 [1 -1 1; -1 1 0; 0 1 0]
output k3 -> D = 1/2 [0 1 -1; 0 0 0; 0 1 1]
output k4 -> E = 1/2 [-1 -1 0; -1 0 0; 1 0 0]
output k5 -> F = 1/2 [1 1 -1; 0 1 1; -1 0 0]
"""
"""Six kernels in six registers: no program of the goal model fits (`cain.search.exact.full`)."""


def example(name: str):
    return parse_filter((EXAMPLES / f"{name}.cain").read_text(), f"{name}.cain")


def kernel_filter(matrix: str, name: str = "t"):
    return parse_filter(f"filter {name}\ninput A\noutput o -> B = {matrix}\n", f"{name}.cain")


def goal(*rows) -> Goal:
    return Goal.from_matrices([rows])


def check(program, f) -> None:
    """The program is allocated and computes the filter: checked by the back end's verifier."""
    assert program is not None
    assert program.registers, "search results are register-allocated"
    verify_program(program, f.initial_goals(), f.final_goals(), f.depth)
    assert program.output_goals(f.initial_goals()) == f.final_goals()
