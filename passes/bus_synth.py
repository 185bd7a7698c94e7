"""`bus-synth`: every allocated macro kernel becomes bus micro-ops optimised in ICWs (cain.backend.bus_synth).

Replaces `expand-bus` where the count of device cycles matters: values stay negated until an output needs
them positive, neighbour reads fold into multi-source sums, halvings are single `bus2`s, NEWS is reused
across the former macros. The program is verified at bus level before it replaces the kernel
(`remember`ed, so `emit` does not verify it again), and the macros' own expansion is kept when it is no
longer (verified with the allocated program, whose verification runs it).
"""

from __future__ import annotations

import time as clock
from dataclasses import dataclass, replace

from cain.dialects.scamp5 import BusMicroOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.bus_synth import DEFERRALS, Options, counts, synthesize
from cain.backend.convert import bus_kernel, kernels_of, program_from_kernel
from cain.backend.verify import remember_bus
from cain.diagnostics import CainError


@dataclass(frozen=True)
class BusSynthPass(ModulePass):
    """Lower macros to bus micro-ops by a beam search over fused patterns (fewer ICWs than expand-bus)."""

    name = "bus-synth"

    beam: int = 48
    """States the beam search keeps per step (more: slower, sometimes shorter)."""
    max_bus2: int | None = None
    """Most bus2/bus3 micro-ops (the noisiest) the program may hold; default: no limit."""
    defer: tuple[str, ...] = DEFERRALS
    """The deferral modes tried, one run of the beam search each (`shared`, `single`, `none`): fewer, faster."""
    work: int | None = None
    """Most states the beam search builds per kernel (deterministic); default: no limit."""
    time: int | float | None = None
    """Seconds the synthesis may take per kernel; default: no limit. Out of either budget, a kernel keeps the
    shortest program found by then, or the macros' own expansion (verified either way), and its C says so."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        unknown = ",".join(mode for mode in self.defer if mode not in DEFERRALS)
        if unknown or not self.defer:
            raise CainError(
                f"bus-synth: unknown defer= mode '{unknown}' (choose from {', '.join(DEFERRALS)})"
            )
        options = Options(beam=self.beam, max_bus2=self.max_bus2, defer=tuple(self.defer), work=self.work)
        for kernel in kernels_of(op, "bus-synth", allocated=True):
            if self.time is not None:
                options = replace(options, deadline=clock.perf_counter() + self.time)
            name = kernel.sym_name.data
            if kernel.is_bus_level:
                raise CainError(
                    f"bus-synth: kernel @{name} is already at bus level (use bus-synth instead of expand-bus)"
                )
            program = program_from_kernel(kernel)
            try:
                result = synthesize(program, kernel.filter, options)
            except ValueError as e:
                raise CainError(f"bus-synth: {e}") from None
            if result.synthesized:
                remember_bus(kernel.filter, result.ops)
            found = {"macros": program.macros, **counts(result.ops), "expansion_icws": result.expansion_icws}
            if result.stopped:
                found["synthesis_stopped"] = 1
            Rewriter.replace_op(kernel, bus_kernel(kernel, map(BusMicroOp.of, result.ops), found))
