"""The superpixel mode's plans: the shared reverse search (with the digital mode's two searches and its
scheduling) run on the integer kernels, each plan scored by its cost once lowered to words and pattern loads
on the tile layout (`cain.backend.superpixel`: ICWs + `LOAD_COST` per load); the cheapest is verified bit for
bit and kept."""

from __future__ import annotations

import time as clock
from typing import Any

from cain.backend.digital import schedule
from cain.backend.dreg_alloc import DigitalAllocationError
from cain.backend.superpixel import (
    STRATEGIES,
    SuperpixelProgram,
    ensure_superpixel_verified,
    superpixel_program,
)
from cain.diagnostics import CainError
from cain.model.dreg import Encoding
from cain.model.filter import Filter
from cain.model.program import Program
from cain.model.superpixel import Superpixel
from cain.search import digital
from cain.search.config import DEFAULT_TIME
from cain.search.digital import configs, integer_filter, plan_searches


class Lowered(digital.Lowered):
    """Every plan lowered so far (in its order and `schedule`'s, under each flag strategy): the search's
    score of a plan (its cost), and the pool the program is chosen from."""

    mode = "superpixel"

    def __init__(self, filt: Filter, sp: Superpixel):
        super().__init__(filt, Encoding((sp.bits,) * len(filt.inputs), sp.bits))
        self.sp = sp

    def cheapest(self, plan: Program) -> SuperpixelProgram | None:
        return self.fewest([(o, s) for o in (plan, schedule(plan, self.encoding)) for s in STRATEGIES])

    def lower(self, plan: Program, strategy: Any) -> SuperpixelProgram:
        return superpixel_program(plan, self.filt, self.sp, strategy)

    def rank(self, program: Any) -> tuple[int, ...]:
        """Its cost (ICWs + `LOAD_COST` per load), then its ICWs."""
        return (program.cost, program.icws)

    def short(self, errors: list[DigitalAllocationError]) -> CainError:
        return min(errors, key=lambda e: e.needed)


SEARCH_REGISTERS = ("A", "B", "C", "D", "E", "F")
"""The register file the search plans in (its pruning only): the DREG file's limit is the allocation's."""


def search_filter(filt: Filter) -> Filter:
    """The integer kernels of `filt` on registers the search knows (a superpixel filter's registers are
    `bank:REG` names or the analogue defaults; its values live in DREG planes, not in them)."""
    integer = integer_filter(filt)
    n = max(len(filt.inputs), len(filt.kernels))
    registers = SEARCH_REGISTERS if n < len(SEARCH_REGISTERS) else tuple(f"V{i}" for i in range(n + 2))
    return Filter.of_goals(
        filt.name,
        integer.final_goals(),
        0,
        registers[: len(filt.inputs)],
        registers[: len(filt.kernels)],
        registers,
    )


def compile_superpixel(
    filt: Filter,
    sp: Superpixel,
    budget: int | None = None,
    seed: int = 0,
    time: float | None = None,
) -> SuperpixelProgram:
    """The verified superpixel program of least cost the searches found for `filt` within `budget` search
    nodes (deterministic) or `time` seconds (with neither, `DEFAULT_TIME`)."""
    start = clock.perf_counter()
    seconds = time if time is not None or budget is not None else DEFAULT_TIME
    lowered = Lowered(filt, sp)
    plan_searches(search_filter(filt), lowered, configs(budget, seconds, seed, fixed=True), seconds, start)
    best = lowered.best()
    ensure_superpixel_verified(best, seed)
    return best
