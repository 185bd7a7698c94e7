"""A simulator of the DREG plane, written from the SDK's semantics (reference/scamp5-digital.md sections 2-3),
vectorised with numpy: one boolean plane per DREG over the whole array.

It knows nothing of how words were chosen: it executes them. Its array orientation is the analogue
simulator's (`cain.backend.sim.shift`): row 0 is north, the east neighbour is the next column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from cain.model.dreg import DREGS, FLAGS, MASKED, Load, Word, check_word
from cain.model.isa import SimulationError

NEIGHBOUR: dict[str, tuple[int, int]] = {"north": (-1, 0), "south": (1, 0), "east": (0, 1), "west": (0, -1)}
"""(row, column) step from a PE to its neighbour on each side."""


def _from_neighbour(plane: np.ndarray, side: str) -> np.ndarray:
    """Each PE's view of its neighbour on `side`: `out[p] = plane[p + step]`, 0 beyond the edge (DNEWS0)."""
    dr, dc = NEIGHBOUR[side]
    out = np.zeros_like(plane)
    h, w = plane.shape[-2:]
    out[..., max(0, -dr) : h - max(0, dr), max(0, -dc) : w - max(0, dc)] = plane[
        ..., max(0, dr) : h - max(0, -dr), max(0, dc) : w - max(0, -dc)
    ]
    return out


def pattern_plane(load: Load, shape: tuple[int, ...]) -> np.ndarray:
    """The plane `scamp5_load_pattern` writes, on an array window whose row i has address i and column j
    address 255 - j (the SDK counts columns from the east): the north-west corner of the device."""
    rows = np.arange(shape[-2])[:, None]
    cols = 255 - np.arange(shape[-1])[None, :]
    hit = ((rows | load.rx) == (load.r | load.rx)) & ((cols | load.cx) == (load.c | load.cx))
    return np.broadcast_to(hit, shape).copy()


def run_words(
    words: Iterable[Word | Load],
    planes: Mapping[str, np.ndarray],
    registers: Sequence[str] = DREGS,
    rng: np.random.Generator | None = None,
) -> dict[str, np.ndarray]:
    """Execute `words` (and host pattern loads) on DREG planes (`{register: bool array}`) of the register file
    `registers`; a register read before it is written raises SimulationError. A write to R12 lands only
    where R0 = 1. With `rng`, a PE with no direction flag set reads random bits under `DNEWS0` (the SDK does
    not say what it reads: reference section 8), else 0 (as JSS); a `DNEWS0` into R12 is refused, since
    whether R0 masks it is not known either."""
    state = dict(planes)
    shape = next(iter(state.values())).shape if state else None

    def read(name: str) -> np.ndarray:
        if name not in state:
            raise SimulationError(f"{name} is read before it is written")
        return state[name]

    for word in words:
        if isinstance(word, Load):
            if shape is None or word.dest not in registers:
                raise SimulationError(f"{word}: no array, or {word.dest} is not a writable DREG")
            value = pattern_plane(word, shape)
        else:
            check_word(word, registers)
            value = _value(word, read, shape, rng)
        for d in word.dests:
            if d in MASKED:
                mask = read(MASKED[d])
                value = np.where(mask, value, read(d) if d in state else False)
            state[d] = value.copy()
    return state


def _value(word: Word, read, shape, rng: np.random.Generator | None) -> np.ndarray:
    """The plane one kernel word computes."""
    if word.kind in ("SET", "CLR", "ALL"):
        if shape is None:
            raise SimulationError(f"{word}: the array's shape is unknown (no register holds a value)")
        return np.full(shape, word.kind != "CLR")
    if word.kind in ("MOV", "OR", "NOR", "NOT", "WHERE"):
        value = np.logical_or.reduce([read(s) for s in word.srcs])
        return ~value if word.kind in ("NOR", "NOT") else value
    # DNEWS0: OR over the neighbours each PE has flagged
    (src,) = word.srcs
    if rng is not None and any(d in MASKED for d in word.dests):
        raise SimulationError(
            f"{word}: whether R0 masks a DNEWS0 into R12 is unknown; move into a scratch DREG"
        )
    value = np.zeros_like(read(src))
    flagged = np.zeros_like(value)
    for side, flag in FLAGS.items():
        value |= read(flag) & _from_neighbour(read(src), side)
        flagged |= read(flag)
    if rng is not None:
        value = np.where(flagged, value, rng.random(value.shape) < 0.5)
    return value


def to_planes(values: np.ndarray, registers: Iterable[str], signed: bool = False) -> dict[str, np.ndarray]:
    """Integer images as bit planes, least significant bit first, one per register (two's complement)."""
    values = np.asarray(values, dtype=np.int64)
    return {r: ((values >> i) & 1).astype(bool) for i, r in enumerate(registers)}


def from_planes(state: Mapping[str, np.ndarray], registers: list[str], signed: bool) -> np.ndarray:
    """The integers held by bit planes, least significant bit first; the top bit is the sign if `signed`."""
    total = np.zeros(state[registers[0]].shape, dtype=np.int64)
    for i, r in enumerate(registers):
        weight = -(1 << i) if signed and i == len(registers) - 1 else 1 << i
        total += weight * state[r].astype(np.int64)
    return total
