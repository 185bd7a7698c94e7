"""A lower bound on the DREGs any program of a digital filter needs, with its proof.

At the end of a kernel every output bit is held in a DREG of the PE (the C header names one per bit), so
two output bits that are different functions of the input, and that are not constant, sit in different
DREGs. Witness windows (input values at the kernels' positions) prove that bits differ: the number of
different non-constant bit columns over the witnesses is a lower bound on the DREGs of any program,
whatever its instructions, schedule or moves. The PE has at most the data DREGs, the direction flags
R1-R4 (free after the last move) and R12 (writable where R0 = 1, so only when R0 is free for data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cain.backend.dreg_alloc import DigitalAllocationError
from cain.model.dreg import FLAGS, Encoding
from cain.model.filter import Filter
from cain.model.goal import Goal

WITNESSES = 512
"""Random witness windows (besides the all-0 and all-largest ones): enough to tell every pair of different
output bits of the small kernels apart; a pair they miss is counted once, so the bound stays a bound."""


@dataclass(frozen=True)
class Bound:
    """The DREGs every program needs at the end (`needed`), the PE's most (`capacity`), and why."""

    needed: int
    capacity: tuple[str, ...]
    widths: tuple[tuple[str, int], ...]
    """(output, distinct non-constant bits it adds), in output order."""

    @property
    def proves_no_fit(self) -> bool:
        return self.needed > len(self.capacity)

    def proof(self) -> str:
        """One sentence: what every program must hold at its end, against what the PE has."""
        parts = " + ".join(f"{name} {bits}" for name, bits in self.widths)
        return (
            f"every program ends holding the outputs' {self.needed} different non-constant bits ({parts}), "
            f"one DREG each, and the PE has {len(self.capacity)} DREGs in all ({' '.join(self.capacity)})"
        )


def capacity(encoding: Encoding) -> tuple[str, ...]:
    """Every DREG a program may leave a bit in: the data DREGs, the direction flags, and R12 when R0 is
    free for data (R12 is written only where R0 = 1)."""
    regs = list(encoding.dregs)
    regs += [f for f in FLAGS.values() if f not in regs]
    if "R0" in regs and "R12" not in regs:
        regs.append("R12")
    return tuple(regs)


def witness_windows(goals: Sequence[Goal], encoding: Encoding, seed: int = 0) -> tuple[list, np.ndarray]:
    """The positions the goals read (x, y, channel) and windows of input values there, one per row: all 0,
    all largest, then random values of each channel's width."""
    atoms = sorted({atom for goal in goals for atom, _ in goal})
    tops = np.array([(1 << encoding.input_width(z)) - 1 for _, _, z in atoms], dtype=np.int64)
    rng = np.random.default_rng(seed)
    random = rng.integers(0, tops + 1, size=(WITNESSES, len(atoms)))
    return atoms, np.vstack([np.zeros_like(tops), tops, random])


def output_bits(goals: Sequence[Goal], encoding: Encoding, windows: np.ndarray, atoms: list) -> list:
    """Each goal's output bits on the windows (two's complement in its width): `[goal][bit] -> bool array`."""
    index = {atom: i for i, atom in enumerate(atoms)}
    out = []
    for goal in goals:
        total = np.zeros(len(windows), dtype=np.int64)
        for atom, count in goal:
            total += count * windows[:, index[atom]]
        width, _ = encoding.width(goal)
        total %= 1 << width
        out.append([((total >> i) & 1).astype(bool) for i in range(width)])
    return out


def output_bound(goals: Sequence[Goal], names: Sequence[str], encoding: Encoding, seed: int = 0) -> Bound:
    """The DREGs every program of the goals must hold at its end: its different non-constant output bits,
    told apart by witness windows."""
    atoms, windows = witness_windows(goals, encoding, seed)
    seen: set[bytes] = set()
    widths = []
    for name, bits in zip(names, output_bits(goals, encoding, windows, atoms), strict=True):
        new = 0
        for column in bits:
            key = column.tobytes()
            if column.all() or not column.any() or key in seen:
                continue
            seen.add(key)
            new += 1
        widths.append((name, new))
    return Bound(len(seen), capacity(encoding), tuple(widths))


def filter_bound(filt: Filter, encoding: Encoding) -> Bound:
    """`output_bound` of a filter's integer goals."""
    return output_bound(filt.final_goals(), [k.name for k in filt.kernels], encoding)


def move_bits(encoding: Encoding) -> tuple[int, str]:
    """The most bits of a PE that can depend on the image right after a `DNEWS0`, and which: the DREGs a
    program may leave a bit in (`capacity`) but the direction flags, which hold the move's side, and FLAG
    (which `WHERE` could write) and the bit moved in, which may land in a flag. After a program's last
    move its outputs are a function of these bits alone."""
    regs = [r for r in capacity(encoding) if r not in FLAGS.values()]
    return len(regs) + 2, f"{' '.join(regs)}, FLAG and the bit moved in"


def values(goals: Sequence[Goal], encoding: Encoding, enough: int) -> int:
    """How many values the goals take together at a pixel away from the edge (each modulo 2^bits at a fixed
    width), counted until they pass `enough`: the sums of each position's counts times every input value of
    its width, one sum per goal. A tuple of sums is one int, each sum in a field of `width` bits (offset by
    its least, or reduced modulo 2^bits by a mask), so the sets are of ints and a step is one addition."""
    counts: dict[tuple[int, int, int], list[int]] = {}
    for k, goal in enumerate(goals):
        for atom, count in goal:
            counts.setdefault(atom, [0] * len(goals))[k] += count
    # fewer input values than a wide input has: fewer sums, still a bound
    tops = {atom: min((1 << encoding.input_width(atom[2])) - 1, enough) for atom in counts}
    fields = range(len(goals))
    if encoding.bits is None:  # a field holds its sum less the least it can be, never negative
        spans = [sum(abs(cs[k]) * tops[atom] for atom, cs in counts.items()) for k in fields]
        width, mask = max(1, max(spans).bit_length()), None
        least = [sum(min(cs[k], 0) * tops[atom] for atom, cs in counts.items()) for k in fields]
        sums = {sum(-low << (width * k) for k, low in enumerate(least))}
    else:  # a field's carry out of its low `bits` bits is masked off: the sum modulo 2^bits
        width, modulus = encoding.bits + 1, 1 << encoding.bits
        mask = sum((modulus - 1) << (width * k) for k in fields)
        sums = {0}
    for atom, cs in counts.items():
        steps = [
            sum((c * v if mask is None else c * v % modulus) << (width * k) for k, c in enumerate(cs))
            for v in range(tops[atom] + 1)
        ]
        sums = {s + d for s in sums for d in steps}
        if mask is not None:
            sums = {s & mask for s in sums}
        if len(sums) > enough:
            break
    return len(sums)


def value_proof(filt: Filter, encoding: Encoding) -> tuple[str, int, str] | None:
    """Why no program of DREG words fits when the outputs take more values together than `move_bits` bits
    hold (and some kernel reads a neighbour, so every program moves): the proof, the bits the last move
    would need, and the proof in a few words; None when they do not."""
    goals = filt.final_goals()
    if all((x, y) == (0, 0) for goal in goals for (x, y, _), _ in goal):
        return None
    bits, which = move_bits(encoding)
    if sum(encoding.width(goal)[0] for goal in goals) <= bits:
        return None  # the outputs' own bits are never more values than that (a file larger than the device's)
    enough = 1 << bits
    most = values(goals, encoding, enough)
    if most <= enough:
        return None
    names = ", ".join(k.name for k in filt.kernels)
    takes = f"{names} takes" if len(goals) == 1 else f"the outputs {names} take together"
    proof = (
        f"after its last move a PE holds at most {bits} bits that depend on the image ({which}; the "
        f"direction flags hold the side), so the outputs take at most {enough} values at a pixel, and "
        f"{takes} at least {most} (a proof for programs of DREG words whose moves read fixed sides)"
    )
    return proof, (most - 1).bit_length(), f"{takes} {most}+ values, past {bits} bits after the last move"


def proven_no_fit(filt: Filter, encoding: Encoding) -> DigitalAllocationError | None:
    """The error that no program of `filt` fits the DREG file, with its proof: the outputs' bits at the end
    (`filter_bound`), else their values after the last move (`value_proof`); None when neither rules a
    program out."""
    bound = filter_bound(filt, encoding)
    advice = "; use fewer bits, a narrower input or fewer kernels"
    if bound.proves_no_fit:
        message, needed, short = (
            f"{bound.proof()} (a proof)",
            bound.needed,
            f"the outputs' {bound.needed} bits",
        )
    else:
        found = value_proof(filt, encoding)
        if found is None:
            return None
        message, needed, short = found
    return DigitalAllocationError(
        f"digital: no program fits {filt.name}: {message}{advice}", needed, proven=True, short=short
    )


def not_found(filt: Filter, encoding: Encoding, needed: int) -> DigitalAllocationError:
    """The error that Cain's programs of `filt` need `needed` DREGs at once and none found fits, with the
    bound that leaves a program possible."""
    bound = filter_bound(filt, encoding)
    dregs = encoding.dregs
    return DigitalAllocationError(
        f"digital: Cain's programs need {needed} DREGs at once, and the PE has {len(dregs)} for data "
        f"({' '.join(dregs)}) and the direction flags between moves; none found that fits (a schedule may "
        f"exist: every program needs at least {bound.needed}, the outputs' bits); use fewer bits, a narrower "
        f"input, more data DREGs, a larger budget{' or one kernel per filter' if len(filt.kernels) > 1 else ''}",
        needed,
    )
