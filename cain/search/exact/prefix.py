"""Exact prefixes: a plan's first instructions replaced by fewer, found by the exact search.

The values a plan holds after its first `m` instructions are a goal-bag. The exact search
(`cain.search.exact.deepening`, one depth-first search at `m - 1`) looks for a program of the goal model
computing that bag from the inputs in fewer macros; one it finds replaces those instructions. Near the inputs the bag is small and
the exact search answers within a second, while the heuristic's reverse search takes those steps last, far
from where its choices were made. The plan that results is register-allocated and verified whole.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

from cain.diagnostics import CainError
from cain.model.filter import Filter, Kernel
from cain.model.program import Program
from cain.search.allocate import allocated, verify
from cain.search.budget import Budget
from cain.search.exact.deepening import ExactSearch

HORIZON = 2
"""The forward table's horizon in a prefix's exact search: at 3 (the deepening's own) building the table
took most of each try's time on prewitt_sixth's bags, and no try got to search."""

TRY_SHARE = 1 / 4
"""Of the time (or nodes) left, the most one prefix's exact search may use: a long one does not starve the
next, which holds one more instruction."""


def alive_after(plan: Program, m: int) -> list[int]:
    """The values `plan` holds after its first `m` instructions that an instruction after them or an output
    reads (the inputs among them), in the order they were defined."""
    last = plan.last_uses()
    defined = [v for v, _ in plan.inputs] + [r for instr in plan.instrs[:m] for r in instr.results]
    return [v for v in defined if last.get(v, -1) >= m]


def splice(plan: Program, m: int, alive: list[int], prefix: Program) -> Program:
    """`plan` with its first `m` instructions replaced by `prefix`, a program from the same inputs whose
    outputs are the values `alive` (`alive_after`), in order; an output of `prefix` that is its input
    stands for the plan's input wherever the rest of the plan reads it."""
    fresh = itertools.count(
        1 + max([v for v, _ in plan.inputs] + [r for i in plan.instrs for r in i.results])
    )
    name = {p: v for (p, _), (v, _) in zip(prefix.inputs, plan.inputs, strict=True)}
    after: dict[int, int] = {}
    for (p, _), v in zip(prefix.outputs, alive, strict=True):
        if p in name:
            after[v] = name[p]
        else:
            name[p] = v
    instrs = []
    for instr in prefix.instrs:
        results = tuple(name.setdefault(r, next(fresh)) for r in instr.results)
        instrs.append(replace(instr, results=results, operands=tuple(name[o] for o in instr.operands)))
    for instr in plan.instrs[m:]:
        instrs.append(replace(instr, operands=tuple(after.get(o, o) for o in instr.operands)))
    outputs = [(after.get(v, v), reg) for v, reg in plan.outputs]
    return Program(plan.name, list(plan.inputs), instrs, outputs)


def _bag_filter(filt: Filter, goals: dict, alive: list[int], names: tuple[str, ...]) -> Filter:
    """The filter whose kernels are the `goals` of the values `alive` (each in a register of its own)."""
    channels = len(filt.inputs)
    kernels = tuple(
        Kernel.exact(f"v{v}", names[i], goals[v], filt.depth, channels) for i, v in enumerate(alive)
    )
    return replace(filt, kernels=kernels)


def shorten(
    filt: Filter,
    plan: Program,
    macros: int,
    instruction_set: str,
    names: tuple[str, ...],
    budget: Budget,
    only: frozenset[str] | None = None,
) -> tuple[Program, Program] | None:
    """The shortest (allocated program, plan) found by replacing prefixes of `plan`, whose allocation has
    `macros` macros, each length `m` from the shortest up, on the plan as shortened so far; None when none
    has fewer. Each prefix's exact search gets `TRY_SHARE` of what is left of `budget`, and the macros
    `only` (None: the whole instruction set)."""
    best: tuple[Program, Program] | None = None
    nodes_left = budget.nodes
    goals = plan.evaluate(filt.initial_goals())
    m = 2
    while m < plan.macros:
        now = time.perf_counter()
        seconds = None if budget.time is None else budget.start + budget.time - now
        if (seconds is not None and seconds <= 0) or (nodes_left is not None and nodes_left <= 0):
            break
        alive = alive_after(plan, m)
        if any(not goals[v] for v in alive):  # a zero is no kernel: leave its prefix as it is
            m += 1
            continue
        part = Budget(
            time=None if seconds is None else seconds * TRY_SHARE,
            nodes=None if nodes_left is None else max(1, int(nodes_left * TRY_SHARE)),
            memory=budget.memory,
        )
        try:
            bag = _bag_filter(filt, goals, alive, names)
            exact = ExactSearch(
                bag, instruction_set, names, lambda p: p, part, max_horizon=HORIZON, only=only
            )
            found = exact.find(m - 1)
        except CainError:
            m += 1
            continue
        if nodes_left is not None:
            nodes_left -= exact.nodes
        if found.plan is not None and found.plan.macros < m:
            shorter = splice(plan, m, alive, found.plan)
            program = allocated(shorter, names)
            if program is not None and program.macros < macros:
                verify(program, filt)
                macros, plan, best = program.macros, shorter, (program, shorter)
                goals = plan.evaluate(filt.initial_goals())
                m = found.plan.macros
        m += 1
    return best
