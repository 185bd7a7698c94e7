"""The digital mode's plans: the shared reverse search run on a filter's integer kernels, its plans scored by
their ICWs once lowered to DREG words, allocated on the DREG file (`cain.backend.digital`); the fewest ICWs
is the program, verified bit for bit. The search's traversal is the analogue one, handed other macros and
this score."""

from __future__ import annotations

import time as clock
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from cain.backend.digital import DigitalProgram, digital_program, ensure_digital_verified, schedule
from cain.backend.digital_bound import not_found, proven_no_fit
from cain.backend.digital_order import VARIANTS, reorder
from cain.backend.dreg_alloc import DigitalAllocationError
from cain.diagnostics import CainError
from cain.model.dreg import Encoding
from cain.model.filter import Filter, Kernel
from cain.model.program import Program
from cain.search.config import DEFAULT_TIME, SearchConfig
from cain.search.constructive.accumulators import accumulator_plan, kernel_orders
from cain.search.constructive.planes import WALKS, plane_plan, split_filter
from cain.search.engine import search

PLAN_MACROS = ("res", "mov", "movx", "add", "sub", "neg")
"""The macros the search is first asked to plan with: each is a move or one adder in digital."""

PLAN_SHARE = 0.6
"""Of a time budget, the search with the digital plan macros; the search with the whole instruction set has
until `SEARCH_SHARE`, and the rest is kept for choosing, lowering and verifying the program. The first
gets most: on the digital table's filters it was never worse, and a node of the second costs about three."""
SEARCH_SHARE = 0.8
LEAST_SHARE = 0.05
"""Of a time budget, the least either search gets, even past `SEARCH_SHARE`: the second always has a plan."""
WHOLE_NODES = 1 / 3
"""Of a node budget, the search with the whole instruction set (the one with the plan macros has it all)."""


def integer_filter(filt: Filter) -> Filter:
    """The filter whose kernels are `filt`'s goals as integer weights (depth 0), names and registers kept: a
    digital program computes them exactly, so its outputs are 2^depth times the kernels as written."""
    channels = len(filt.inputs)
    kernels = tuple(Kernel.exact(k.name, k.register, k.goal, 0, channels) for k in filt.kernels)
    return replace(filt, kernels=kernels, depth=0, encoding=None)


Variant = tuple[Any, bool]
"""How a plan is lowered: the word-level reorder (`cain.backend.digital_order`; None: the plan's order) and
whether in offset binary (`cain.backend.digital.Lowering.offsets`)."""

PLAIN: list[Variant] = [(None, False)]
REORDERED: list[Variant] = [(partial(reorder, variant=v), False) for v in VARIANTS]
OFFSET: list[Variant] = [(None, True)] + [(partial(reorder, variant=v), True) for v in VARIANTS]
"""When the plain lowering does not fit: reordered bit plane by bit plane; when that does not either, both in
offset binary."""


class Lowered:
    """Every plan lowered so far, in its own order and in `schedule`'s, allocated on the DREG file: the
    search's score of a plan (the first of its `rank`), and the pool the program is chosen from. The
    superpixel mode's (`cain.search.superpixel`) lowers and ranks its own way."""

    mode = "digital"

    def __init__(self, filt: Filter, encoding: Encoding):
        self.filt = filt
        self.encoding = encoding
        self.programs: dict[tuple, Any] = {}
        self.failures: list[CainError] = []

    def program(self, plan: Program) -> Any:
        """The lowest-ranked program of `plan` (None: it does not fit, or cannot be lowered)."""
        key = (tuple(plan.inputs), tuple(plan.instrs), tuple(plan.outputs))
        if key not in self.programs:
            self.programs[key] = self.cheapest(plan)
        return self.programs[key]

    def cheapest(self, plan: Program) -> DigitalProgram | None:
        """The fewest-ICW program of `plan`: in its own order or `schedule`'s, else (when neither fits) with
        its words reordered bit plane by bit plane, else both again in offset binary. A reordered variant's
        words are in its own order, so it lowers the plan's own order only."""
        orders = (plan, schedule(plan, self.encoding))

        def tries(variants: Sequence[Variant]) -> list[tuple[Program, Variant]]:
            return [(o, v) for v in variants for o in (orders[:1] if v[0] is not None else orders)]

        return self.fewest(tries(PLAIN)) or self.fewest(tries(REORDERED)) or self.fewest(tries(OFFSET))

    def fewest(self, tries: Sequence[tuple[Program, Any]], deadline: float | None = None) -> Any:
        """The lowest-ranked program of the plans lowered with their variants (`lower`), those tried before
        `deadline` if given; the first on ties."""
        best = None
        for plan, variant in tries:
            if deadline is not None and clock.perf_counter() > deadline:
                break
            try:
                program = self.lower(plan, variant)
            except CainError as e:
                self.failures.append(e)
                continue
            if best is None or self.rank(program) < self.rank(best):
                best = program
        return best

    def lower(self, plan: Program, variant: Any) -> DigitalProgram:
        reorder_words, offsets = variant
        return digital_program(plan, self.filt, self.encoding, reorder_words, offsets)

    def rank(self, program: Any) -> tuple[int, ...]:
        """What a program is chosen by (the least wins): its ICWs."""
        return (program.icws,)

    def score(self, plan: Program) -> int | None:
        program = self.program(plan)
        return None if program is None else self.rank(program)[0]

    def best(self) -> Any:
        """The program of least rank (then macros) lowered; else the clear error of why none fits."""
        found = [p for p in self.programs.values() if p is not None]
        if found:
            return min(found, key=lambda p: (*self.rank(p), p.macros))
        short = [e for e in self.failures if isinstance(e, DigitalAllocationError)]
        if short:
            raise self.short(short)
        if self.failures:
            raise self.failures[0]
        raise CainError(f"{self.mode}: the search found no plan for {self.filt.name}")

    def short(self, errors: list[DigitalAllocationError]) -> CainError:
        """The error when no plan fits the DREG file: the fewest DREGs any plan needed says most about the
        filter (other errors are raised only without such a plan)."""
        return proven_no_fit(self.filt, self.encoding) or not_found(
            self.filt, self.encoding, min(e.needed for e in errors)
        )


def plane_program(
    filt: Filter, encoding: Encoding, deadline: float | None = None, failures: list[CainError] | None = None
) -> DigitalProgram | None:
    """The fewest-ICW program of the bit-plane plan (`cain.search.constructive.planes`), with the inputs and
    kernels of `filt` (each channel's planes joined again); None when it does not fit the DREG file (or none
    was found to by `deadline`), the lowerings' errors then added to `failures` if given."""
    split = plan_filter(filt, encoding, planes=True)
    plans = [plane_plan(split, *variant) for variant in WALKS]
    return joined(fewest_fitting(split, split.encoding, plans, deadline, failures), filt, encoding)


def accumulator_program(
    filt: Filter, encoding: Encoding, deadline: float | None = None, failures: list[CainError] | None = None
) -> DigitalProgram | None:
    """The fewest-ICW program of the accumulator plans (`cain.search.constructive.accumulators`), one per
    order of the kernels: on the inputs, and on their planes with the last kernel's sum or with the bit-plane
    plan's walks for it; None when none fits the DREG file (or none was found to by `deadline`), the
    lowerings' errors then added to `failures` if given."""
    orders = kernel_orders(len(filt.kernels))
    integer, split = integer_filter(filt), plan_filter(filt, encoding, planes=True)
    on_planes = [accumulator_plan(split, o, w) for o in orders for w in (None, *WALKS)]
    found = [
        fewest_fitting(filt, encoding, [accumulator_plan(integer, o) for o in orders], deadline, failures),
        joined(fewest_fitting(split, split.encoding, on_planes, deadline, failures), filt, encoding),
    ]
    return min((p for p in found if p is not None), key=lambda p: p.icws, default=None)


def fewest_fitting(
    filt: Filter,
    encoding: Encoding | None,
    plans: Sequence[Program],
    deadline: float | None = None,
    failures: list[CainError] | None = None,
) -> DigitalProgram | None:
    """The fewest-ICW program of `plans` of the digital filter `filt` on `encoding` in two's complement, else
    (when none fits the DREG file) in offset binary; None when none fits either way (of the lowerings tried
    before `deadline`), the lowerings' errors then added to `failures` if given."""
    assert encoding is not None
    lowered = Lowered(filt, encoding)
    program = lowered.fewest([(plan, v) for plan in plans for v in PLAIN], deadline)
    program = program or lowered.fewest([(plan, v) for plan in plans for v in OFFSET], deadline)
    if program is None and failures is not None:
        failures.extend(lowered.failures)
    return program


def joined(program: DigitalProgram | None, filt: Filter, encoding: Encoding) -> DigitalProgram | None:
    """A program of `filt` split into its input planes (`plan_filter` with `planes`) as a program of `filt`:
    each channel's planes joined again into its inputs."""
    if program is None:
        return None
    regs = iter(r for _, (r,) in program.inputs)
    inputs = [
        (c, tuple(next(regs) for _ in range(encoding.input_width(z)))) for z, (c, _) in enumerate(filt.inputs)
    ]
    joined = {"inputs": inputs, "goals": filt.final_goals(), "encoding": encoding, "depth": filt.depth}
    return replace(program, name=filt.name, planes=True, **joined)


def plan_filter(filt: Filter, encoding: Encoding, planes: bool = False) -> Filter:
    """The filter a digital plan computes, as its `scamp5.kernel` holds it: the integer kernels
    (`integer_filter`) with the encoding, on the inputs' bit planes for a plan of `plane_program`
    (`split_filter`), so that `lower_plan` can lower it again."""
    if planes:
        return split_filter(integer_filter(filt), encoding)
    return replace(integer_filter(filt), encoding=encoding)


def lower_plan(plan: Program, filt: Filter) -> DigitalProgram:
    """The verified program of fewest ICWs for the plan (in its order or `schedule`'s) of the digital filter
    `filt` (`plan_filter`); the clear error when it does not fit the DREG file."""
    if filt.encoding is None:
        raise CainError(
            f"lower-dreg: kernel @{filt.name} is for the analogue plane (no digital encoding); plan it with "
            "digital-plan"
        )
    lowered = Lowered(filt, filt.encoding)
    lowered.program(plan)
    best = lowered.best()
    ensure_digital_verified(best)
    return best


def configs(budget: int | None, seconds: float | None, seed: int, fixed: bool) -> list[SearchConfig]:
    """The two searches, scored in ICWs by the lowering: one with the digital plan macros only (and exact
    halving unless the width is fixed), all kernels at once; one with the whole instruction set, which always
    has a plan (the constructive fallback). Their time budgets are set as they start (`compile_digital`)."""
    quick = {"exact_reach": 0, "cp_sat": False, "progress": False, "seed": seed, "cost": "icws"}
    return [
        SearchConfig(
            node_budget=budget,
            time_budget=None if seconds is None else seconds * PLAN_SHARE,
            macros=PLAN_MACROS + (() if fixed else ("div4",)),
            kernel_by_kernel=0,
            fallback=False,
            **quick,
        ),
        SearchConfig(
            node_budget=None if budget is None else max(1, int(budget * WHOLE_NODES)),
            time_budget=None if seconds is None else seconds * SEARCH_SHARE,
            **quick,
        ),
    ]


def plan_searches(
    integer: Filter, lowered: Lowered, searches: Sequence[SearchConfig], seconds: float | None, start: float
) -> None:
    """Run `searches` (`configs`) in turn on the integer filter, each scored by `lowered`, and lower each
    one's plan into it. With a time budget of `seconds` from `start`, each search ends at its own share of
    it, but runs at least `LEAST_SHARE` of it: the last search always has a plan."""
    for config in searches:
        if seconds is not None and config.time_budget is not None:
            left = config.time_budget - (clock.perf_counter() - start)
            config = replace(config, time_budget=max(left, LEAST_SHARE * seconds))
        result = search(integer, replace(config, score=lowered.score))
        plan = result.plan or result.program
        if plan is not None:
            lowered.program(plan)


def compile_digital(
    filt: Filter,
    encoding: Encoding,
    budget: int | None = None,
    seed: int = 0,
    time: float | None = None,
) -> DigitalProgram:
    """The verified digital program of fewest ICWs the searches found for `filt` within `budget` search nodes
    (deterministic) or `time` seconds (with both, whichever ends first; with neither, `DEFAULT_TIME`); a
    clear error when none fits the DREG file, at once (no search) when a bound proves that no program fits
    (`cain.backend.digital_bound`: the outputs' bits, or their values after the last move). When no searched
    plan fits, the bit-plane plan's program (`plane_program`), else the accumulator plans'
    (`accumulator_program`), if one fits, among those lowered within the time budget."""
    start = clock.perf_counter()
    impossible = proven_no_fit(filt, encoding)
    if impossible is not None:
        raise impossible
    seconds = time if time is not None or budget is not None else DEFAULT_TIME
    lowered = Lowered(filt, encoding)
    searches = configs(budget, seconds, seed, encoding.bits is not None)
    plan_searches(integer_filter(filt), lowered, searches, seconds, start)
    try:
        best = lowered.best()
    except DigitalAllocationError:
        deadline = None if seconds is None else start + seconds  # a node budget alone: no deadline
        tried = list(lowered.failures)
        best = plane_program(filt, encoding, deadline, tried) or accumulator_program(
            filt, encoding, deadline, tried
        )
        if best is None:  # the fewest DREGs any plan needed, the constructive ones too
            raise lowered.short([e for e in tried if isinstance(e, DigitalAllocationError)]) from None
    ensure_digital_verified(best, seed)
    return best
