"""Exact windows: a stretch of a plan's instructions replaced by fewer, found by the exact search.

The values a plan holds before its instruction `i` and after its instruction `j - 1` are two goal-bags. The
exact search (`cain.search.exact.deepening`, one depth-first search at depth `j - i - 1` from the first
bag's values) looks for a program of the goal model computing the second bag from the first in fewer
macros; one it finds replaces those instructions, and the plan that results is register-allocated and
verified whole. The heuristic's reverse search chooses each step for the goal-bag in front of it, so a
stretch of its plan may be longer than it needs, most of all its first steps (a prefix, `i = 0`), which it
takes last, far from where its choices were made. Narrow windows and those near the inputs have small
bags, and the exact search answers them within a second.
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
from cain.search.goals import atoms

HORIZON = 2
"""The forward table's horizon in a window's exact search: at 3 (the deepening's own) building the table
took most of each try's time on prewitt_sixth's bags, and no try got to search."""

TRY_SHARE = 1 / 4
"""Of the time (or nodes) left, the most one window's exact search may use: a long one does not starve the
next."""

WIDEST = 6
"""The most instructions a window other than a prefix replaces (a prefix may have any length): inside a
plan the bags are larger, and a wider window's search rarely ends in its share."""


def alive_after(plan: Program, m: int) -> list[int]:
    """The values `plan` holds after its first `m` instructions that an instruction after them or an output
    reads (the inputs among them), in the order they were defined."""
    last = plan.last_uses()
    defined = [v for v, _ in plan.inputs] + [r for instr in plan.instrs[:m] for r in instr.results]
    return [v for v in defined if last.get(v, -1) >= m]


def splice(plan: Program, i: int, j: int, window: Program) -> Program:
    """`plan` with its instructions `i` to `j - 1` replaced by `window`, a program whose inputs are the
    values `alive_after(plan, i)` and whose outputs are the values `alive_after(plan, j)`, in order; an
    output of `window` that is one of its inputs stands for that value wherever the rest of the plan reads
    it."""
    fresh = itertools.count(
        1 + max([v for v, _ in plan.inputs] + [r for x in plan.instrs for r in x.results])
    )
    before = alive_after(plan, i)
    name = {p: v for (p, _), v in zip(window.inputs, before, strict=True)}
    after: dict[int, int] = {}
    for (p, _), v in zip(window.outputs, alive_after(plan, j), strict=True):
        if p in name:
            after[v] = name[p]
        else:
            name[p] = v
    instrs = list(plan.instrs[:i])
    for instr in window.instrs:
        results = tuple(name.setdefault(r, next(fresh)) for r in instr.results)
        instrs.append(replace(instr, results=results, operands=tuple(name[o] for o in instr.operands)))
    for instr in plan.instrs[j:]:
        instrs.append(replace(instr, operands=tuple(after.get(o, o) for o in instr.operands)))
    outputs = [(after.get(v, v), reg) for v, reg in plan.outputs]
    return Program(plan.name, list(plan.inputs), instrs, outputs)


def _window_filter(filt: Filter, goals: dict, before: list[int], after: list[int], names) -> Filter:
    """The filter from the values `before` to the values `after` (its registers are nominal: the exact search
    allocates nothing, the plan is allocated whole)."""
    channels = len(filt.inputs)
    return replace(
        filt,
        inputs=tuple((f"v{v}", names[k % len(names)]) for k, v in enumerate(before)),
        kernels=tuple(
            Kernel.exact(f"v{v}", names[k % len(names)], goals[v], filt.depth, channels)
            for k, v in enumerate(after)
        ),
    )


class _Shortening:
    """A plan as its windows are replaced, and what is left of the budget."""

    def __init__(self, filt, plan, macros, instruction_set, names, budget, only):  # `shorten`'s arguments
        self.filt, self.plan, self.macros = filt, plan, macros
        self.instruction_set, self.names, self.budget, self.only = instruction_set, names, budget, only
        self.nodes = 0
        """Nodes the windows' exact searches have spent of `budget`."""
        self.goals = plan.evaluate(filt.initial_goals())
        self.best: tuple[Program, Program] | None = None

    def over(self) -> bool:
        """Whether the budget has ended."""
        return self.budget.late(time.perf_counter()) or self.budget.out_of_nodes(self.nodes)

    def attempt(self, i: int, j: int) -> int | None:
        """Replace the window `(i, j)` by a shorter program if the exact search finds one within its share
        and the plan that results allocates to fewer macros: the window's new length, else None."""
        plan, goals, budget = self.plan, self.goals, self.budget
        before, after = alive_after(plan, i), alive_after(plan, j)
        if any(not goals[v] for v in before + after):  # a zero is no kernel: leave the window as it is
            return None
        part = Budget(
            time=None if budget.deadline is None else (budget.deadline - time.perf_counter()) * TRY_SHARE,
            nodes=None if budget.nodes is None else max(1, int((budget.nodes - self.nodes) * TRY_SHARE)),
            memory=budget.memory,
        )
        try:
            exact = ExactSearch(
                _window_filter(self.filt, goals, before, after, self.names),
                self.instruction_set,
                self.names,
                lambda p: p,
                part,
                max_horizon=HORIZON,
                only=self.only,
                inputs=[atoms.from_goal(goals[v]) for v in before],
            )
            found = exact.find(j - i - 1)
        except CainError:
            return None
        self.nodes += exact.nodes
        if found.plan is None or found.plan.macros >= j - i:
            return None
        shorter = splice(plan, i, j, found.plan)
        program = allocated(shorter, self.names)
        if program is None or program.macros >= self.macros:
            return None
        verify(program, self.filt)
        self.macros, self.plan, self.best = program.macros, shorter, (program, shorter)
        self.goals = shorter.evaluate(self.filt.initial_goals())
        return found.plan.macros


def shorten(
    filt: Filter,
    plan: Program,
    macros: int,
    instruction_set: str,
    names: tuple[str, ...],
    budget: Budget,
    only: frozenset[str] | None = None,
) -> tuple[Program, Program] | None:
    """The shortest (allocated program, plan) found by replacing windows of `plan`, whose allocation has
    `macros` macros, on the plan as shortened so far; None when none has fewer. The windows are tried from
    the narrowest (two instructions) up, each width from the plan's start: the prefixes at every width, the
    others up to `WIDEST`. Each window's exact search gets `TRY_SHARE` of what is left of `budget`, and the
    macros `only` (None: the whole instruction set)."""
    state = _Shortening(filt, plan, macros, instruction_set, names, budget, only)
    width = 2
    while width < state.plan.macros and not state.over():
        i = 0
        while i + width <= state.plan.macros and (i == 0 or width <= WIDEST) and not state.over():
            if state.attempt(i, i + width) is None:  # else the plan changed there: try it again
                i += 1
        width += 1
    return state.best
