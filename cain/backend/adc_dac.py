"""Analogue instructions around a superpixel kernel (its ADC and DAC) and their ideal, noise-free model.

The model of the SDK's analogue/digital link (reference/scamp5-digital.md section 7; the SDK does not
document it exactly, so this is what Cain assumes and verifies against):

- `where(x)` sets FLAG := x > 0 on every PE; `WHERE(d)` sets FLAG := d; `all()` sets FLAG := 1;
- an analogue write (`add`, `sub`, `scamp5_in`) lands only on PEs where FLAG = 1; DREG words ignore FLAG;
- `MOV(d, FLAG)` copies FLAG into a DREG;
- `scamp5_in(a, v)` (a host call between kernels, v in -128..127) sets a := v exactly.

The ADC never compares a value on a level boundary (its inputs are verified between levels), so whether
`where` is strict or not does not matter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cain.backend.dreg_sim import run_words
from cain.backend.sim import numeric_algebra, run_bus
from cain.model.dreg import DREGS, Load, Word
from cain.model.isa import MACROS, SimulationError, expand

ANALOGUE_KINDS = ("in", "add", "sub", "where", "all", "WHERE", "ALL")


@dataclass(frozen=True)
class Analogue:
    """One analogue-side SDK call: `in` (host `scamp5_in(reg, value)`), `add`/`sub` (y, x0, x1), `where`
    (x), `all`, or the DREG-driven `WHERE(d)` / `ALL()`; `srcs` holds the DREG `WHERE` reads."""

    kind: str
    regs: tuple[str, ...] = ()
    value: int = 0
    srcs: tuple[str, ...] = ()

    @property
    def dests(self) -> tuple[str, ...]:
        return ()

    @property
    def host(self) -> bool:
        """A host call: it ends the running kernel, like a pattern load."""
        return self.kind == "in"

    def __str__(self) -> str:
        if self.kind == "in":
            return f"scamp5_in({self.regs[0]}, {self.value});"
        return f"{self.kind}({', '.join(self.regs + self.srcs)});"


def run_analogue(item: Analogue, analogue: dict[str, np.ndarray], dregs: dict[str, np.ndarray]) -> None:
    """Execute one analogue call on the analogue registers and FLAG (`dregs["FLAG"]`), in place."""
    flag = dregs["FLAG"]
    if item.kind in ("where", "WHERE", "all", "ALL"):
        if item.kind == "where":
            dregs["FLAG"] = analogue[item.regs[0]] > 0
        else:
            dregs["FLAG"] = dregs[item.srcs[0]].copy() if item.kind == "WHERE" else np.ones_like(flag)
        return
    if item.kind == "in":
        if not -128 <= item.value <= 127:
            raise SimulationError(f"{item}: scamp5_in takes -128 to 127")
        new = {item.regs[0]: np.full(flag.shape, float(item.value))}
    elif item.kind in ("add", "sub"):
        ops = expand(MACROS[item.kind], dict(zip(("y", "x0", "x1"), item.regs, strict=True)))
        new = run_bus(ops, dict(analogue), numeric_algebra(flag.shape))
    else:
        raise SimulationError(f"{item}: unknown analogue call (choose from {', '.join(ANALOGUE_KINDS)})")
    for reg, value in new.items():  # NEWS too: every analogue write
        if reg in analogue:
            analogue[reg] = np.where(flag, value, analogue[reg])


def run_mixed(
    items: Sequence[Word | Load | Analogue],
    dregs: dict[str, np.ndarray],
    analogue: dict[str, np.ndarray],
    rng: np.random.Generator | None = None,
) -> dict[str, np.ndarray]:
    """Run DREG words, pattern loads and analogue calls in order (FLAG starts at 1); returns the DREGs, and
    updates `analogue` in place."""
    state = {**dregs, "FLAG": np.ones_like(next(iter(dregs.values())))}
    run: list[Word | Load] = []
    for item in [*items, None]:
        if isinstance(item, Word | Load):
            run.append(item)
            continue
        if run:  # FLAG is readable (MOV(d, FLAG)) and no word writes it
            state = run_words(run, state, DREGS, rng)
            run = []
        if item is not None:
            run_analogue(item, analogue, state)
    return state
