"""The digital mode's plans: the shared reverse search run on a filter's integer kernels, each plan lowered to
DREG words, allocated on the DREG file and verified bit for bit by the back end (`cain.backend.digital`);
the shortest in ICWs is the program. The search's traversal is the analogue one, handed other macros."""

from __future__ import annotations

from cain.backend.digital import (
    DigitalAllocationError,
    DigitalProgram,
    digital_program,
    schedule,
    verify_digital,
)
from cain.diagnostics import CainError
from cain.model.dreg import Encoding
from cain.model.filter import Filter
from cain.model.program import Program
from cain.search.config import SearchConfig
from cain.search.engine import search

DEFAULT_BUDGET = 6000
"""Search nodes of the plan with the digital macros (the whole instruction set gets a third)."""


PLAN_MACROS = ("res", "mov", "movx", "add", "sub", "neg")
"""The macros the search is first asked to plan with: each is a move or one adder in digital."""


def integer_filter(filt: Filter) -> Filter:
    """The filter whose kernels are `filt`'s goals as integer weights (depth 0): a digital program computes
    them exactly, so its outputs are 2^depth times the kernels as written."""
    return Filter.of_goals(
        filt.name,
        filt.final_goals(),
        0,
        inputs=[r for _, r in filt.inputs],
        outputs=[k.register for k in filt.kernels],
        registers=filt.registers,
    )


def plans(filt: Filter, budget: int, seed: int, fixed: bool) -> list[Program]:
    """Plans of the shared reverse search for the integer kernels: one with the digital plan macros only (and
    exact halving unless the width is fixed), all kernels at once; one with the whole instruction set and a
    third of the budget, which always has a plan (the constructive fallback)."""
    integer = integer_filter(filt)
    quick = {"exact_reach": 0, "cp_sat": False, "progress": False, "seed": seed}
    configs = [
        SearchConfig(
            node_budget=budget,
            macros=PLAN_MACROS + (() if fixed else ("div4",)),
            kernel_by_kernel=0,
            fallback=False,
            **quick,
        ),
        SearchConfig(node_budget=max(1, budget // 3), **quick),
    ]
    found = []
    for config in configs:
        result = search(integer, config)
        plan = result.plan or result.program
        if plan is not None:
            found.append(plan)
    return found


def compile_digital(
    filt: Filter, encoding: Encoding, budget: int = DEFAULT_BUDGET, seed: int = 0
) -> DigitalProgram:
    """The shortest verified digital program (in ICWs) of the plans found for `filt`; a clear error when
    none fits the DREG file."""
    best: DigitalProgram | None = None
    failures: list[CainError] = []
    for plan in plans(filt, budget, seed, encoding.bits is not None):
        for ordered in (plan, schedule(plan, encoding)):
            try:
                program = digital_program(ordered, filt, encoding)
            except CainError as e:
                failures.append(e)
                continue
            if best is None or program.icws < best.icws:
                best = program
    if best is None:
        # the fewest DREGs any plan needed says most about the filter; other errors only without such a plan
        short = [e for e in failures if isinstance(e, DigitalAllocationError)]
        if short:
            raise min(short, key=lambda e: e.needed)
        raise failures[0] if failures else CainError(f"digital: the search found no plan for {filt.name}")
    verify_digital(best, seed)
    return best
