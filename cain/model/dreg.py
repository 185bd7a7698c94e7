"""The digital plane of a SCAMP-5 PE, described once (reference/scamp5-digital.md sections 1-3).

The DREG register file, the kernel words (each one instruction word, ICW) with their limits and meaning on
bits, the direction flags of `DNEWS0`, and the shortest word networks of the bit cells that digital macros
(add, subtract, negate) are built from. The simulator, the lowering, the allocator, the verifier, the
dialect and the C emitter all read this table.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from cain.model.goal import Goal
from cain.model.isa import SimulationError

DREGS: tuple[str, ...] = tuple(f"R{i}" for i in range(13))
DATA_DREGS: tuple[str, ...] = (*(f"R{i}" for i in range(5, 12)), "R0")
"""R5-R11 (S0-S6), free for data in every kernel, and R0: the SDK macros' temporary and R12's write mask,
free in a kernel that calls no SDK macro and never writes R12 (as Cain's digital kernels)."""
FLAGS: dict[str, str] = {"south": "R1", "west": "R2", "north": "R3", "east": "R4"}
"""`DNEWS0` ORs the neighbours whose flag is set: R1 takes from the south neighbour, R2 from the west, R3
from the north, R4 from the east (so `east` means "read east", as the analogue `movx(.., east)`)."""
RESERVED: dict[str, str] = {
    "R0": "the write mask of R12 and the SDK macros' temporary",
    "R12": "written only where R0 is set",
    **{flag: f"the {side} direction flag of DNEWS0" for side, flag in FLAGS.items()},
}
READ_ONLY: tuple[str, ...] = ("FLAG", "SELECT", "RECT")


@dataclass(frozen=True)
class Encoding:
    """How a filter's values are held: the input width of each channel, a fixed width (or None: each value
    as wide as its range), and the DREGs free for data."""

    input_bits: tuple[int, ...]
    bits: int | None = None
    dregs: tuple[str, ...] = DATA_DREGS
    input_dregs: tuple[tuple[str, ...], ...] | None = None
    """The DREGs each input channel arrives in, bit 0 first (None: the first free data DREGs)."""

    def input_width(self, channel: int) -> int:
        """The bits input `channel` arrives in (at most the fixed width)."""
        width = self.input_bits[channel]
        return width if self.bits is None else min(width, self.bits)

    def range(self, goal: Goal) -> tuple[int, int]:
        """The least and the largest integer `goal` takes on the inputs (each at its width)."""
        low = high = 0
        for (_, _, z), count in goal:
            top = (1 << self.input_width(z)) - 1
            if count > 0:
                high += count * top
            else:
                low += count * top
        return low, high

    def width(self, goal: Goal) -> tuple[int, bool]:
        """(bits, signed) of a value holding `goal` applied to the inputs: enough that it never overflows
        (two's complement when it can be negative); with a fixed width, at most that width, and then unsigned,
        modulo 2^bits. A narrower value is exact, so it extends to the fixed width as its sign says."""
        low, high = self.range(goal)
        if low >= 0:
            width, signed = high.bit_length(), False
        else:
            width, signed = 1, True
            while not (-(1 << (width - 1)) <= low and high < 1 << (width - 1)):
                width += 1
        if self.bits is not None and width > self.bits:
            return self.bits, False
        return width, signed

    def held(self, goal: Goal, offset: int) -> tuple[int, int]:
        """(bits, offset) of a value holding `goal` plus `offset`, never negative (offset binary): as wide as
        its largest; with a fixed width, at most that width, the offset then modulo 2^bits."""
        low, high = self.range(goal)
        width = (high + offset).bit_length()
        if self.bits is not None and (width > self.bits or low + offset < 0):
            return self.bits, offset % (1 << self.bits)
        return width, offset


@dataclass(frozen=True)
class WordKind:
    """One kernel instruction: how many destinations and sources it takes, and its SDK spelling."""

    name: str
    dests: tuple[int, int]
    srcs: tuple[int, int]
    doc: str
    implicit: str | None = None
    """The one register it writes without naming it (FLAG, for WHERE and ALL)."""


WORDS: dict[str, WordKind] = {
    w.name: w
    for w in [
        WordKind("SET", (1, 4), (0, 0), "every destination := 1"),
        WordKind("CLR", (1, 4), (0, 0), "every destination := 0"),
        WordKind("MOV", (1, 1), (1, 1), "d := s"),
        WordKind("NOT", (1, 1), (1, 1), "d := not s"),
        WordKind("OR", (1, 1), (2, 4), "d := s0 or s1 [or s2 or s3]"),
        WordKind("NOR", (1, 1), (2, 4), "d := not (s0 or s1 [or s2 or s3])"),
        WordKind(
            "DNEWS0", (1, 1), (1, 1), "d := s of the neighbours flagged in R1-R4 (OR), 0 beyond the edge"
        ),
        WordKind("WHERE", (1, 1), (1, 3), "FLAG := s0 [or s1 or s2]: a bit kept in FLAG", "FLAG"),
        WordKind("ALL", (1, 1), (0, 0), "FLAG := 1, as the analogue words expect it after a kernel", "FLAG"),
    ]
}


@dataclass(frozen=True)
class Word:
    """One ICW on registers (DREGs, or virtual bit values before allocation)."""

    kind: str
    dests: tuple[str, ...]
    srcs: tuple[str, ...] = ()

    def __str__(self) -> str:
        named = self.dests if WORDS[self.kind].implicit is None else ()
        return f"{self.kind}({', '.join(named + self.srcs)});"


@dataclass(frozen=True)
class Load:
    """A host call between kernels, `scamp5_load_pattern(dest, r, c, rx, cx)`: `dest` := 1 on the PEs whose
    row address matches `r` and column address matches `c` on the bits not set in `rx` / `cx` (rows count
    from the north, columns from the east), else 0. It ends the running kernel and starts another."""

    dest: str
    r: int
    c: int
    rx: int
    cx: int

    kind = "LOAD"

    @property
    def dests(self) -> tuple[str, ...]:
        return (self.dest,)

    @property
    def srcs(self) -> tuple[str, ...]:
        return ()

    def __str__(self) -> str:
        return f"scamp5_load_pattern({self.dest}, 0x{self.r:02x}, 0x{self.c:02x}, 0x{self.rx:02x}, 0x{self.cx:02x});"


MASKED: dict[str, str] = {"R12": "R0"}
"""Writes to R12 land only where R0 = 1 (reference section 1: the R0/R12 idiom)."""


def check_word(word: Word, registers: Sequence[str] = DREGS) -> None:
    """Raise SimulationError unless `word` is a legal SDK kernel instruction on `registers`."""
    if word.kind not in WORDS:
        raise SimulationError(f"{word}: unknown instruction (choose from {', '.join(WORDS)})")
    kind = WORDS[word.kind]
    for what, names, (least, most) in (
        ("destination", word.dests, kind.dests),
        ("source", word.srcs, kind.srcs),
    ):
        if not least <= len(names) <= most:
            raise SimulationError(f"{word}: {word.kind} takes {least} to {most} {what}s, not {len(names)}")
    if kind.implicit is not None and word.dests != (kind.implicit,):
        raise SimulationError(f"{word}: {word.kind} writes {kind.implicit} alone")
    for name in word.dests:
        if name not in registers and name != kind.implicit:
            raise SimulationError(f"{word}: {name} is not a writable DREG")
    for name in word.srcs:
        if name not in registers and name not in READ_ONLY:
            raise SimulationError(f"{word}: unknown source {name}")
    both = sorted(set(word.dests) & set(word.srcs))
    if both:
        raise SimulationError(f"{word}: a destination is never also a source ({', '.join(both)})")
    if len(set(word.dests)) != len(word.dests) or len(set(word.srcs)) != len(word.srcs):
        raise SimulationError(f"{word}: a register appears at most once among destinations and sources")


# -- bit cells ----------------------------------------------------------------------------------------

Gate = tuple[str, tuple[int, ...]]
"""One word of a network: `(NOR | OR, signal indices)`; signals 0..k-1 are the inputs, gate j is k + j."""


def truth_table(k: int, function) -> int:
    """The truth table of a boolean function of `k` inputs, as a bit mask over the 2^k input rows."""
    return sum(1 << row for row in range(1 << k) if function(*((row >> v) & 1 for v in range(k))))


def run_network(k: int, gates: Sequence[Gate], inverted: int = 0) -> list[int]:
    """The truth table of every signal of a network (inputs first), input v complemented when bit v of
    `inverted` is set."""
    full = (1 << (1 << k)) - 1
    signals = [truth_table(k, lambda *bits, v=v: bits[v] ^ (inverted >> v & 1)) for v in range(k)]
    for kind, srcs in gates:
        value = 0
        for s in srcs:
            value |= signals[s]
        signals.append(value if kind == "OR" else full & ~value)
    return signals


NETWORKS: dict[tuple[int, tuple[int, ...]], tuple[Gate, ...]] = {}
"""Shortest networks of three-input cells, found offline by `shortest_network` (too slow to rerun at every
import; tests/test_digital_model.py checks each one's truth table)."""


@cache
def shortest_network(k: int, targets: tuple[int, ...], longest: int = 6) -> tuple[Gate, ...] | None:
    """A shortest sequence of NOR/NOT/OR words (1-4 sources; NOT is a NOR of one) computing every truth
    table of `targets` from `k` inputs; None if none has at most `longest` words. Iterative deepening, each
    word a new function, and words in a canonical order unless one reads the word before it."""
    if (k, targets) in NETWORKS:
        return NETWORKS[(k, targets)]
    full = (1 << (1 << k)) - 1
    signals = run_network(k, ())
    gates: list[Gate] = []

    def extend(left: int, last: tuple) -> bool:
        missing = sum(t not in signals for t in targets)
        if not missing:
            return True
        if missing > left:
            return False
        n = len(signals)
        for size in range(1, min(4, n) + 1):
            for combo in itertools.combinations(range(n), size):
                value = 0
                for s in combo:
                    value |= signals[s]
                for kind in ("NOR", "OR") if size > 1 else ("NOR",):
                    f = value if kind == "OR" else full & ~value
                    if f in (0, full) or f in signals or (left == missing and f not in targets):
                        continue
                    key = (size, combo, kind)
                    if (n - 1 not in combo or n == k) and key <= last:
                        continue
                    signals.append(f)
                    gates.append((kind, combo))
                    if extend(left - 1, key):
                        return True
                    signals.pop()
                    gates.pop()
        return False

    for length in range(longest + 1):
        if extend(length, ()):
            return tuple(gates)
    return None


_XOR3: tuple[Gate, ...] = (
    ("NOR", (0, 1)),
    ("NOR", (0, 3)),
    ("NOR", (1, 3)),
    ("NOR", (2, 4, 5)),
    ("NOR", (2, 6)),
    ("NOR", (4, 5, 6)),
    ("OR", (7, 8)),
)
NETWORKS[(3, (150,))] = _XOR3
"""a ^ b ^ c in 7 words: no network of 6 exists (`shortest_network` exhausted length 6)."""
NETWORKS[(3, (150, 232))] = (*_XOR3, ("NOR", (3, 7)))
"""The full adder (sum, carry) in 8 words: the carry is NOR(NOR(a, b), (a ^ b) and not c) (Cain-Java: 9 NORs)."""


NARROW_NETWORKS: dict[tuple[int, tuple[int, ...]], tuple[Gate, ...]] = {
    (3, (150, 232)): (
        ("NOR", (0, 1)),
        ("NOR", (0, 3)),
        ("NOR", (1, 3)),
        ("NOR", (3, 4, 5)),
        ("NOR", (4, 5)),
        ("NOR", (7, 2)),
        ("NOR", (2, 8)),
        ("NOR", (7, 8)),
        ("NOR", (10, 9)),
        ("OR", (6, 10)),
    )
}
"""Networks that keep fewer signals live, for lowerings short of DREGs: the full adder in 10 words with at
most 2 signals live beside its 3 inputs in its words' order (the 8-word one needs 3): a and b die into
NOR(a, b), not a and b, a and not b, then a and b and XNOR(a, b); c dies into x and not c; the sum is
NOR(not x and c, x and not c), the carry a and b, or not x and c."""


@cache
def adapted_network(
    k: int, targets: tuple[int, ...], narrow: bool = False
) -> tuple[int, tuple[Gate, ...]] | None:
    """The cheapest stored network computing every target or its complement once some inputs are
    complemented: `(inverted inputs as a bit mask, gates)`, costing one NOT per inverted input and per
    complemented target beside its words (None: no stored network of `k` inputs does); with `narrow`, one of
    `NARROW_NETWORKS` if one computes them. Cached: a ripple adder asks for the same few cells at every bit."""
    if narrow:
        found = _cheapest(k, targets, NARROW_NETWORKS)
        if found is not None:
            return found
    return _cheapest(k, targets, NETWORKS)


def _cheapest(
    k: int, targets: tuple[int, ...], table: dict[tuple[int, tuple[int, ...]], tuple[Gate, ...]]
) -> tuple[int, tuple[Gate, ...]] | None:
    full = (1 << (1 << k)) - 1
    best: tuple[int, int, tuple[Gate, ...]] | None = None
    for (n, _), gates in table.items():
        if n != k:
            continue
        for mask in range(1 << k):
            signals = set(run_network(k, gates, mask))
            if all(t in signals or full & ~t in signals for t in targets):
                cost = mask.bit_count() + len(gates) + sum(t not in signals for t in targets)
                if best is None or cost < best[0]:
                    best = (cost, mask, gates)
    return None if best is None else best[1:]
