"""The digital mode: a plan of macros (from the shared reverse search) lowered to DREG words, allocated on
the DREG file, verified bit for bit in the DREG simulator and printed as SDK C.

A digital value is an exact integer held as a list of bits, least significant first; each bit is a virtual
DREG (`%n`) or a known constant. Unsigned values extend with 0, signed ones (two's complement) with their
top bit, so widening, doubling and exact halving are free re-indexings and bits known to be 0 cost nothing.
Each macro of the analogue table (`cain.model.isa.MACROS`) is lowered from its terms: moves become one
`DNEWS0` per bit after the direction flags are set (once for consecutive moves the same way), sums and
differences become ripple-carry adders whose bit cells are the shortest word networks of
`cain.model.dreg`. A value's width comes from its goal and the input range, so nothing overflows; with a
fixed `bits` every value has that width and wraps modulo 2^bits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import chain

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from cain.backend.c_names import c_function, sdk_kernel
from cain.backend.dreg_alloc import (
    DigitalAllocationError,
    allocate,
    live_peak,
    move_peak,
    park,
    sequential_parks,
    spanning_parks,
)
from cain.backend.dreg_sim import from_planes, run_words, to_planes
from cain.backend.sim import correlate
from cain.backend.split import KERNEL_STORE
from cain.diagnostics import CainError
from cain.dialects.dreg import KernelOp
from cain.model.dreg import (
    DATA_DREGS,
    DREGS,
    FLAGS,
    READ_ONLY,
    Encoding,
    Word,
    adapted_network,
    check_word,
    run_network,
    shortest_network,
    truth_table,
)
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS, MACROS, SimulationError
from cain.model.program import Program

Bit = str | int
"""A virtual DREG `%n`, or the constant 0 or 1."""


@dataclass(frozen=True)
class Value:
    """An integer held bit by bit, bit 0 first; beyond `bits` it reads 0, or its top bit if `signed`. The bits
    hold `goal` applied to the inputs, plus `offset` (offset binary, `Lowering.offsets`)."""

    bits: tuple[Bit, ...]
    signed: bool
    goal: Goal
    offset: int = 0

    def bit(self, i: int) -> Bit:
        if i < len(self.bits):
            return self.bits[i]
        return self.bits[-1] if self.signed and self.bits else 0


@dataclass
class DigitalProgram:
    """A straight-line kernel of DREG words, and where its inputs arrive and its outputs end."""

    name: str
    words: list[Word]
    inputs: list[tuple[str, tuple[str, ...]]]
    """(channel, DREGs bit 0 first): inputs are unsigned."""
    outputs: list[tuple[str, tuple[str, ...], bool]]
    """(kernel, DREGs bit 0 first, signed)."""
    goals: list[Goal]
    encoding: Encoding
    depth: int = 0
    macros: int = 0
    plan: Program | None = None
    """The macro plan the words were lowered from."""
    margin: int = 0
    """Outputs are exact at least this many PEs from the array's edge (`cain.backend.sim.reach`): a value
    moved out and back reads 0 where the direct correlation reads a pixel."""
    planes: bool = False
    """The plan is on the inputs' bit planes (`cain.search.constructive.planes`), not on the inputs."""

    @property
    def icws(self) -> int:
        return len(self.words)

    @property
    def keeps_flag(self) -> bool:
        """Whether the kernel keeps a bit in FLAG on the way (`cain.backend.dreg_alloc.park`)."""
        return any(w.kind == "WHERE" for w in self.words)

    @property
    def dregs(self) -> list[str]:
        """Every DREG the kernel reads or writes, inputs included, in register order (FLAG is not one:
        `keeps_flag`)."""
        used = {r for w in self.words for r in w.dests + w.srcs if r not in READ_ONLY}
        used |= {r for _, regs in self.inputs for r in regs}
        return sorted(used, key=lambda r: (r not in DREGS, int(r[1:]) if r[1:].isdigit() else 0, r))

    def run(self, images: np.ndarray, seed: int = 0) -> list[np.ndarray]:
        """The outputs, as integers, of running the words on `images` (`[channel, ..., row, column]`
        unsigned integers); every other DREG starts with random bits."""
        rng = np.random.default_rng(seed)
        shape = np.shape(images)[1:]
        planes = {r: rng.random(shape) < 0.5 for r in (*DREGS, *self.encoding.dregs)}
        for (_, regs), image in zip(self.inputs, images, strict=True):
            planes.update(to_planes(image, regs))
        state = run_words(self.words, planes, tuple(planes))
        return [from_planes(state, list(regs), signed) for _, regs, signed in self.outputs]

    def expected(self, images: np.ndarray) -> list[np.ndarray]:
        """The exact integer correlation of `images` with each goal (0 beyond the edge), modulo 2^bits when
        the width is fixed."""
        out = []
        for goal in self.goals:
            # whole numbers far below 2^53, so the float correlation is exact
            total = np.rint(correlate(np.asarray(images), goal, 0)).astype(np.int64)
            out.append(total % (1 << self.encoding.bits) if self.encoding.bits is not None else total)
        return out


# -- lowering ---------------------------------------------------------------------------------------


class Lowering:
    """Builds the words of a plan on virtual bits."""

    def __init__(self, encoding: Encoding, narrow: bool = False, offsets: bool = False):
        self.encoding = encoding
        self.narrow = narrow  # bit cells from NARROW_NETWORKS where there is one: fewer bits live, more words
        self.offsets = offsets
        """Values in offset binary: never negative, a difference as a sum of the complement, so a value
        whose range is lopsided about 0 is narrower than in two's complement; the outputs lose their offsets
        at the end (`unbiased`), when the direction flags are free again."""
        self.words: list[Word] = []
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%{self.count}"

    def emit(self, kind: str, srcs: Sequence[str] = (), dests: int = 1) -> list[str]:
        names = [self.fresh() for _ in range(dests)]
        self.words.append(Word(kind, tuple(names), tuple(srcs)))
        return names

    def fit(self, bits: Sequence[Bit], signed: bool, goal: Goal, offset: int = 0) -> Value:
        """`bits` (extending as `signed` says) cut or extended to the width of `goal` (plus `offset`)."""
        source = Value(tuple(bits), signed, goal)
        if self.offsets:
            width, offset = self.encoding.held(goal, offset)
            return Value(tuple(source.bit(i) for i in range(width)), False, goal, offset)
        width, signed = self.encoding.width(goal)
        return Value(tuple(source.bit(i) for i in range(width)), signed, goal)

    def register(self, bit: Bit) -> str:
        """A virtual DREG holding `bit` (a constant is set into a new one)."""
        if isinstance(bit, str):
            return bit
        return self.emit("SET" if bit else "CLR")[0]

    def move(self, value: Value, side: str, goal: Goal) -> Value:
        """`value` read from the neighbour on `side`: one DNEWS0 per bit that is not 0."""
        bits: list[Bit] = []
        done: dict[Bit, Bit] = {0: 0}
        for b in value.bits:
            if b not in done:
                if len(done) == 1:
                    self.words += direction_setup(side)
                done[b] = self.emit("DNEWS0", [self.register(b)])[0]
            bits.append(done[b])
        return Value(tuple(bits), value.signed, goal, value.offset)

    def add(self, a: Value, b: Value, goal: Goal, subtract: bool = False) -> Value:
        """`a + b` or `a - b` (as a + not b + 1) by a ripple-carry adder, as wide as `goal` needs; `a + a`
        is `a` one bit up, without a word. In offset binary, `a - b` is a + not b over b's own bits, no
        carry in, the offset growing by what the complement adds."""
        if not subtract and a.bits == b.bits and a.signed == b.signed and a.offset == b.offset:
            return self.fit((0, *a.bits), a.signed, goal, 2 * a.offset)
        if not self.offsets:
            width, signed = self.encoding.width(goal)
            bits = self.ripple(a, [(b.bit(i), subtract) for i in range(width)], int(subtract))
            return Value(bits, signed, goal)
        offset = a.offset + b.offset
        if subtract:  # not b = (the ones of b's variable bits) + 2 (its constant bits) - b
            ones = sum(1 << i for i, bit in enumerate(b.bits) if isinstance(bit, str))
            fixed = sum(bit << i for i, bit in enumerate(b.bits) if not isinstance(bit, str))
            offset = a.offset - b.offset + ones + 2 * fixed
        width, offset = self.encoding.held(goal, offset)
        column = [
            (b.bit(i), subtract and isinstance(b.bit(i), str) and i < len(b.bits)) for i in range(width)
        ]
        return Value(self.ripple(a, column, 0), False, goal, offset)

    def ripple(self, a: Value, column: Sequence[tuple[Bit, bool]], carry: Bit) -> tuple[Bit, ...]:
        """The bits of a ripple-carry adder of `a` and the literals `column` (bit, inverted), one per output
        bit, with `carry` in."""
        bits: list[Bit] = []
        for i, literal in enumerate(column):
            sum_bit, carry = self.cell([(a.bit(i), False), literal, (carry, False)], i < len(column) - 1)
            bits.append(sum_bit)
        return tuple(bits)

    def unbiased(self, value: Value) -> Value:
        """`value` without its offset, as wide as its goal needs (`Encoding.width`): its bits plus the
        offset's negation, modulo 2^width."""
        width, signed = self.encoding.width(value.goal)
        negated = -value.offset % (1 << width)
        unsigned = replace(value, signed=False)
        bits = self.ripple(unsigned, [((negated >> i) & 1, False) for i in range(width)], 0)
        return Value(bits, signed, value.goal)

    def cell(self, literals: list[tuple[Bit, bool]], need_carry: bool) -> tuple[Bit, Bit]:
        """The sum and carry bits of three literals (bit, inverted): a constant, an existing bit, one NOT,
        or the shortest network of `cain.model.dreg`."""
        variables = list(dict.fromkeys(b for b, _ in literals if isinstance(b, str)))
        k = len(variables)

        def value(row: int, bit: Bit, inverted: bool) -> int:
            v = (row >> variables.index(bit)) & 1 if isinstance(bit, str) else bit
            return v ^ inverted

        def table(function) -> int:
            return sum(1 << row for row in range(1 << k) if function([value(row, *lit) for lit in literals]))

        targets = [table(lambda v: sum(v) % 2)]
        if need_carry:
            targets.append(table(lambda v: sum(v) >= 2))
        full = (1 << (1 << k)) - 1
        inputs = [truth_table(k, lambda *bits, v=v: bits[v]) for v in range(k)]
        results: dict[int, Bit] = {0: 0, full: 1} if k else {0: 0, 1: 1}
        results.update({t: variables[v] for v, t in enumerate(inputs)})
        for t in targets:
            if t not in results and full & ~t in results and isinstance(results[full & ~t], str):
                results[t] = self.emit("NOT", [results[full & ~t]])[0]
        missing = tuple(sorted({t for t in targets if t not in results}))
        if missing:
            if k == 3:
                found = adapted_network(k, missing, self.narrow)
                if found is None:
                    return self.two_halves(literals, need_carry)
                mask, gates = found
            else:
                mask, gates = 0, shortest_network(k, missing)
                if gates is None:
                    raise CainError(f"digital: no word network for the bit cell {missing} of {k} inputs")
            signals: list[Bit] = [
                self.emit("NOT", [v])[0] if mask >> i & 1 else v for i, v in enumerate(variables)
            ]
            tables = run_network(k, gates, mask)
            for i in range(k):
                results.setdefault(tables[i], signals[i])
            for (kind, srcs), table_ in zip(gates, tables[k:], strict=True):
                name = self.emit("NOT" if len(srcs) == 1 else kind, [str(signals[s]) for s in srcs])[0]
                signals.append(name)
                results.setdefault(table_, name)
            for t in missing:
                if t not in results:
                    results[t] = self.emit("NOT", [str(results[full & ~t])])[0]
        return results[targets[0]], (results[targets[1]] if need_carry else 0)

    def two_halves(self, literals: list[tuple[Bit, bool]], need_carry: bool) -> tuple[Bit, Bit]:
        """A three-input cell without a stored network: two half adders and an OR of their carries."""
        (a, b, c) = literals
        half, carry0 = self.cell([a, b, (0, False)], need_carry=need_carry)
        total, carry1 = self.cell([(half, False), c, (0, False)], need_carry=need_carry)
        if not need_carry:
            return total, 0
        low, high = sorted((carry0, carry1), key=lambda x: isinstance(x, str))
        if not isinstance(low, str):
            return total, (1 if low else high)
        return total, self.emit("OR", [low, high])[0]

    def macro(self, name: str, operands: Sequence[Value], directions: tuple[str, ...]) -> Value:
        """The value a macro of `cain.model.isa.MACROS` computes, from its terms."""
        m = MACROS[name]
        if m.scale == 0:
            return Value((), False, Goal())
        terms = [(t.sign, operands[t.operand], t.shifted and bool(directions)) for t in m.terms]
        move_after = all(shifted for _, _, shifted in terms) and directions
        if not move_after:
            terms = [(s, self.moved(v, directions) if shifted else v, False) for s, v, shifted in terms]
        terms.sort(key=lambda t: -t[0])
        sign, total, _ = terms[0]
        if sign < 0:
            total = self.add(Value((), False, Goal()), total, -total.goal, subtract=True)
        for sign, v, _ in terms[1:]:
            total = self.add(total, v, total.goal + (v.goal if sign > 0 else -v.goal), subtract=sign < 0)
        if move_after:
            total = self.moved(total, directions)
        if m.scale == Fraction(1, 2):
            goal = total.goal.halved()
            if self.encoding.bits is not None:
                raise CainError(f"digital: {name} halves, which is not exact at a fixed width")
            if goal is None:
                raise CainError(f"digital: {name} halves a value that is not exactly even")
            total = self.fit(total.bits[1:], total.signed, goal, total.offset // 2)
        return total

    def moved(self, value: Value, directions: tuple[str, ...]) -> Value:
        for d in directions:
            value = self.move(value, d, value.goal.shifted(DIRECTIONS[d]))
        return value


def lower(
    plan: Program, filt: Filter, encoding: Encoding, narrow: bool = False, offsets: bool = False
) -> tuple[Lowering, list[Value], list[Value]]:
    """The words of `plan` on virtual bits (with `narrow` bit cells and in `offsets` binary: `Lowering`):
    the input values, and the output values (each bit a distinct virtual DREG)."""
    low = Lowering(encoding, narrow, offsets)
    values: dict[int, Value] = {}
    inputs = []
    for z, (v, _) in enumerate(plan.inputs):
        goal = Goal.identity(1, z)
        value = Value(tuple(low.fresh() for _ in range(encoding.input_width(z))), False, goal)
        values[v] = value
        inputs.append(value)
    for instr in plan.instrs:
        operands = [values[o] for o in instr.operands]
        result = low.macro(instr.macro, operands, instr.directions)
        for r in instr.results:
            values[r] = result
    outputs = []
    taken: set[Bit] = set()
    for (v, _), goal in zip(plan.outputs, filt.final_goals(), strict=True):
        value = values[v]
        if value.goal != goal:
            raise CainError(f"digital: the plan's output holds {value.goal}, not its kernel {goal}")
        value = low.unbiased(value) if value.offset else low.fit(value.bits, value.signed, goal)
        if encoding.bits is not None:  # extended to the fixed width: the value modulo 2^bits
            value = Value(tuple(value.bit(i) for i in range(encoding.bits)), False, goal)
        bits = []
        for b in value.bits:
            if not isinstance(b, str) or b in taken:
                b = low.emit("MOV", [b])[0] if isinstance(b, str) else low.register(b)
            taken.add(b)
            bits.append(b)
        outputs.append(Value(tuple(bits), value.signed, goal))
    return low, inputs, outputs


# -- direction set-ups -------------------------------------------------------------------------------


def direction_setup(side: str) -> list[Word]:
    """The two words that make `DNEWS0` read from the neighbour on `side`."""
    return [Word("CLR", tuple(FLAGS.values())), Word("SET", (FLAGS[side],))]


def drop_repeated_setups(words: Sequence[Word]) -> list[Word]:
    """The words without the direction set-ups that repeat the flags already set (no word wrote a flag
    since): consecutive moves the same way share one set-up."""
    out: list[Word] = []
    current: str | None = None
    i = 0
    while i < len(words):
        pair = list(words[i : i + 2])
        side = next((s for s in FLAGS if pair == direction_setup(s)), None)
        if side is not None:
            if side != current:
                out += pair
                current = side
            i += 2
            continue
        if set(words[i].dests) & set(FLAGS.values()):
            current = None
        out.append(words[i])
        i += 1
    return out


# -- whole filters ------------------------------------------------------------------------------------


Reorder = Callable[[list[Word], list[list[str]]], list[Word]]
"""A word-level schedule: the lowered words (virtual bits) and each output's bits to the words to allocate."""


def digital_program(
    plan: Program, filt: Filter, encoding: Encoding, reorder: Reorder | None = None, offsets: bool = False
) -> DigitalProgram:
    """Lower (in `offsets` binary: `Lowering.offsets`), allocate and check the words of `plan` (not yet
    verified on images), reordered by `reorder` (`cain.backend.digital_order`) before allocation if given,
    from narrow bit cells then."""
    low, inputs, outputs = lower(plan, filt, encoding, narrow=reorder is not None, offsets=offsets)
    if reorder is not None:
        low.words = reorder(low.words, [[str(b) for b in v.bits] for v in outputs])
    dregs = list(encoding.dregs)
    pinned: dict[str, str] = {}
    for z, value in enumerate(inputs):
        regs = encoding.input_dregs[z] if encoding.input_dregs else None
        for i, b in enumerate(value.bits):
            if regs is not None:
                pinned[str(b)] = regs[i]
            else:
                pinned[str(b)] = next(r for r in dregs if r not in pinned.values())
    out_bits = [str(b) for v in outputs for b in v.bits]

    def too_many(peak: int) -> str:
        return (
            f"digital: the plan needs {peak} DREGs at once, and the PE has {len(dregs)} for data "
            f"({' '.join(dregs)}) and the direction flags between moves; use fewer bits, a narrower "
            "input, or more data DREGs"
        )

    words, where = allocated(low.words, pinned, out_bits, dregs, too_many)
    words = drop_repeated_setups(words)
    for w in words:
        try:
            check_word(w, DREGS + tuple(r for r in encoding.dregs if r not in DREGS))
        except SimulationError as e:
            raise CainError(f"digital: an illegal word was built: {e}") from None
    return DigitalProgram(
        filt.name,
        words,
        [(c, tuple(pinned[str(b)] for b in v.bits)) for (c, _), v in zip(filt.inputs, inputs, strict=True)],
        [
            (k.name, tuple(where[str(b)] for b in v.bits), v.signed)
            for k, v in zip(filt.kernels, outputs, strict=True)
        ],
        filt.final_goals(),
        encoding,
        filt.depth,
        plan.macros,
        plan,
        word_reach(words, [r for v in outputs for r in (where[str(b)] for b in v.bits)]),
    )


def allocated(
    words: list[Word], pinned: dict[str, str], out_bits: list[str], dregs: list[str], too_many
) -> tuple[list[Word], dict[str, str]]:
    """`words` allocated on `dregs` (`cain.backend.dreg_alloc.allocate`), and the register of every virtual
    bit: temporaries in the direction flags only when the data DREGs are full, else whenever they are free,
    else (when R0 is free for data) with bits parked in R12 and FLAG (`park`, then `spanning_parks` and
    `sequential_parks`). The first error when none fits; at once when more bits live at a move than the data
    DREGs, R12 and FLAG can hold."""
    inputs, room = list(pinned), len({*dregs, *pinned.values()})
    parkable = "R0" in dregs and "R12" not in dregs
    if move_peak(words, inputs, out_bits) > room + 2 * parkable:
        peak = live_peak(words, inputs, out_bits)
        raise DigitalAllocationError(too_many(peak), peak)
    first = None
    for flags_first in (False, True):
        try:
            return allocate(words, pinned, out_bits, dregs, too_many, True, flags_first)
        except DigitalAllocationError as e:
            first = first or e
    parkings = chain(
        (park(words, inputs, out_bits, flag) for flag in (False, True)),
        spanning_parks(words, inputs, out_bits, room),
        sequential_parks(words, inputs, out_bits, room),
    )
    for parked_words, parked, parked_outputs in parkings if parkable else ():
        for flags_first in (False, True):
            try:
                got, where = allocate(
                    parked_words, pinned, parked_outputs, dregs, too_many, True, flags_first, parked
                )
            except DigitalAllocationError:
                continue
            for b, p in zip(out_bits, parked_outputs, strict=True):
                where[b] = where[p]
            return got, where
    assert first is not None
    raise first


def word_reach(words: Sequence[Word], outputs: Sequence[str]) -> int:
    """How far (in PE steps) from an edge a pixel must be for every output to be exact there, from the words
    alone (as `cain.backend.sim.reach` from macros): per register, the margin on each side that `DNEWS0` has
    filled with zeros; a `DNEWS0` whose direction flags this kernel has not set counts on every side."""
    sides = list(DIRECTIONS)
    zero = (0, 0, 0, 0)
    far: dict[str, tuple[int, ...]] = {}
    flag_set: dict[str, bool | None] = {flag: None for flag in FLAGS.values()}
    for w in words:
        if w.kind == "DNEWS0":
            source = far.get(w.srcs[0], zero)
            value = zero
            for side, flag in FLAGS.items():
                if flag_set[flag] is False:
                    continue
                k = sides.index(side)
                margins = list(source)
                margins[k] += 1
                margins[(k + 2) % 4] = max(0, margins[(k + 2) % 4] - 1)
                value = tuple(map(max, value, margins))
        else:
            value = zero
            for src in w.srcs:
                value = tuple(map(max, value, far.get(src, zero)))
        for d in w.dests:
            far[d] = value
            if d in flag_set:
                flag_set[d] = {"SET": True, "CLR": False}.get(w.kind)
    return max((max(far.get(r, zero)) for r in outputs), default=0)


def test_images(encoding: Encoding, channels: int, size: int, seed: int = 0) -> np.ndarray:
    """Random unsigned images at each channel's width, with the all-largest and a checkerboard of largest
    and 0 among them (the extremes that overflow would show): `[channel, image, row, column]`."""
    rng = np.random.default_rng(seed)
    out = []
    for z in range(channels):
        top = (1 << encoding.input_width(z)) - 1
        images = rng.integers(0, top + 1, size=(4, size, size))
        images[0] = top
        images[1] = top * ((np.indices((size, size)).sum(axis=0) + z) % 2)
        out.append(images)
    return np.stack(out)


def verify_digital(program: DigitalProgram, seed: int = 0) -> None:
    """Run the words in the DREG simulator on test images and compare every output with the exact integer
    correlation, bit for bit; raise CainError on the first difference."""
    images = test_images(program.encoding, len(program.inputs), size=8 + 2 * program.margin, seed=seed)
    try:
        got = program.run(images, seed=seed)
    except SimulationError as e:
        raise CainError(f"digital: {program.name} cannot run: {e}") from None
    m = program.margin
    for (name, regs, _), g, want in zip(program.outputs, got, program.expected(images), strict=True):
        inside = (..., slice(m, g.shape[-2] - m), slice(m, g.shape[-1] - m))
        wrong = np.argwhere(g[inside] != want[inside])
        if len(wrong):
            at = (*(int(i) for i in wrong[0][:-2]), int(wrong[0][-2]) + m, int(wrong[0][-1]) + m)
            raise CainError(
                f"digital: {program.name} computes {name} wrongly at image/pixel {at}: {int(g[at])} "
                f"instead of {int(want[at])} (DREGs {' '.join(regs)})"
            )


def schedule(plan: Program, encoding: Encoding) -> Program:
    """The plan's instructions reordered to keep fewer bits live: among the instructions whose operands are
    ready, first the one that frees the most bits for the fewest it defines, then one that moves the way
    the last move did (sharing its direction set-up), then in plan order."""
    goals = plan.evaluate([Goal.identity(1, z) for z in range(len(plan.inputs))])
    readers: dict[int, int] = {}
    for instr in plan.instrs:
        for o in set(instr.operands):
            readers[o] = readers.get(o, 0) + 1
    outputs = {v for v, _ in plan.outputs}
    ready = {v for v, _ in plan.inputs}
    left = list(plan.instrs)
    order = []
    side = None
    while left:

        def gain(instr) -> int:
            freed = sum(
                encoding.width(goals[o])[0]
                for o in set(instr.operands)
                if readers[o] == 1 and o not in outputs
            )
            return freed - encoding.width(goals[instr.results[0]])[0] * len(instr.results)

        candidates = [i for i in left if all(o in ready for o in i.operands)]
        best = max(candidates, key=lambda i: (gain(i), bool(i.directions) and i.directions[0] == side))
        side = best.directions[-1] if best.directions else side
        left.remove(best)
        order.append(best)
        ready.update(best.results)
        for o in set(best.operands):
            readers[o] -= 1
    return Program(plan.name, plan.inputs, order, plan.outputs)


def kernel_op(program: DigitalProgram) -> KernelOp:
    """The program as a `dreg.kernel` (the IR level of the digital plane)."""
    return KernelOp(
        program.name,
        [f"{c}: {' '.join(regs)}" for c, regs in program.inputs],
        [
            f"{k}: {' '.join(regs)} {'signed' if signed else 'unsigned'}"
            for k, regs, signed in program.outputs
        ],
        program.words,
        program.goals,
        program.depth,
        program.encoding.bits,
        program.macros,
    )


def program_of(op: KernelOp) -> DigitalProgram:
    """The program a `dreg.kernel` holds (IR read from a file): its words, inputs, outputs and goals; the
    data DREGs are the device's and any other register its words name, and the margin is the words' reach."""
    words = op.words()
    inputs = op.input_dregs()
    outputs = op.output_dregs()
    named = {r for w in words for r in w.dests + w.srcs} | {r for _, regs in inputs for r in regs}
    extra = tuple(sorted(r for r in named if r not in DREGS and r not in READ_ONLY))
    bits = op.bits.value.data if op.bits is not None else None
    encoding = Encoding(tuple(len(regs) for _, regs in inputs), bits, DATA_DREGS + extra)
    return DigitalProgram(
        op.sym_name.data,
        words,
        inputs,
        outputs,
        [g.data for g in op.goals.data],
        encoding,
        op.depth.value.data,
        op.macros.value.data,
        None,
        word_reach(words, [r for _, regs, _ in outputs for r in regs]),
    )


_VERIFIED: dict[tuple, None] = {}
"""The digital programs this process has verified (by content), oldest first."""
REMEMBERED = 64


def _content(program: DigitalProgram) -> tuple:
    return (
        program.name,
        tuple(program.words),
        tuple(program.inputs),
        tuple(program.outputs),
        tuple(program.goals),
        program.encoding.bits,
    )


def verify_once(verified: dict[tuple, None], key: tuple, verify: Callable[[], None]) -> None:
    """`verify()`, unless this process has verified `key` already (`verified` keeps the last `REMEMBERED`)."""
    if key in verified:
        return
    verify()
    if len(verified) >= REMEMBERED:
        verified.pop(next(iter(verified)))
    verified[key] = None


def ensure_digital_verified(program: DigitalProgram, seed: int = 0) -> None:
    """`verify_digital`, unless this process has verified this very program already (once per level)."""
    verify_once(_VERIFIED, _content(program), lambda: verify_digital(program, seed))


def digital_functions(module: ModuleOp, verify: bool = True, limit: int = KERNEL_STORE) -> str:
    """The C functions of the module's `dreg.kernel`s, each verified bit for bit first (unless this process
    has verified it, or `verify` is off), each cut into SDK kernels of at most `limit` ICWs."""
    parts = []
    for op in module.walk():
        if isinstance(op, KernelOp):
            program = program_of(op)
            if verify:
                ensure_digital_verified(program)
            parts += [emit_digital(program, [c for c, _ in program.inputs], limit), ""]
    return "\n".join(parts)


def _bits_line(regs: Sequence[str], encoding: str) -> str:
    return f"{' '.join(regs) or '(no DREG: always 0)'} (bit 0 first, {encoding})"


def header_lines(program: DigitalProgram, channels: Sequence[str]) -> list[str]:
    """What a reader (or another tool) needs: cost, DREGs, where every input and output is, bit by bit, and
    what the outputs hold."""
    bits = program.encoding.bits
    wrap = f", modulo {1 << bits}" if bits is not None else ""
    lines = [
        f"{program.name}: generated by Cain for the SCAMP-5d digital (DREG) plane",
        "",
        f"{program.icws} ICWs, {program.macros} macros in the plan; DREGs used: {' '.join(program.dregs)}",
    ]
    lines += [f"input {c}: {_bits_line(regs, 'unsigned')}" for c, regs in program.inputs]
    lines += [
        f"output {k}: {_bits_line(regs, ('two' + chr(39) + 's complement' if signed else 'unsigned') + wrap)}"
        for k, regs, signed in program.outputs
    ]
    scale = f"2^{program.depth} x the kernel as written, i.e. " if program.depth else ""
    lines += [
        "",
        f"each output = {scale}the exact integer sum of these weights times the input"
        + (
            f" (wrapping modulo {1 << bits})"
            if bits is not None
            else " (no overflow: widths from the ranges)"
        ),
    ]
    lines += weight_lines(program.goals, [k for k, *_ in program.outputs], channels)
    if program.margin:
        lines.append(
            f"exact at least {program.margin} PE(s) from the array's edge (beyond it DNEWS0 reads 0)"
        )
    lines.append("the kernel overwrites the DREGs it uses (the direction flags R1-R4 among them)")
    if program.keeps_flag:
        lines.append("it keeps a bit in FLAG on the way and ends with ALL(), so FLAG is 1 after it")
    return lines


def weight_lines(goals: Sequence[Goal], outputs: Sequence[str], channels: Sequence[str]) -> list[str]:
    """Each output's weights as integer matrices, one per input channel (named when there are several)."""
    lines = []
    for goal, k in zip(goals, outputs, strict=True):
        lines.append(f"{k} =")
        for z, matrix in enumerate(goal.matrices(channels=len(channels))):
            width = max(len(str(c)) for row in matrix for c in row)
            if len(channels) > 1:
                lines.append(f"  {channels[z]}:")
            lines += ["    [ " + " ".join(str(c).rjust(width) for c in row) + " ]" for row in matrix]
    return lines


def word_kernels(words: Sequence[Word], limit: int = KERNEL_STORE) -> list[list[Word]]:
    """`words` cut into the fewest SDK kernels of at most `limit` ICWs, of near equal length: the DREG file
    (the direction flags included) keeps its values between kernels, so any cut runs as the whole does."""
    n = max(1, -(-len(words) // limit))
    size = max(1, -(-len(words) // n))
    return [list(words[i : i + size]) for i in range(0, len(words), size)] or [[]]


def emit_digital(program: DigitalProgram, channels: Sequence[str], limit: int = KERNEL_STORE) -> str:
    """The C function of a digital program: its words between `scamp5_kernel_begin()` and `_end()`, as
    several kernels (each moved to the heap once recorded) when they pass `limit` ICWs."""
    kernels = word_kernels(program.words, limit)
    header = header_lines(program, channels)
    if len(kernels) > 1:
        sizes = ", ".join(str(len(k)) for k in kernels)
        header += [
            f"run as {len(kernels)} SDK kernels of {sizes} ICWs (at most {limit} each), one after the other;",
            "the DREGs keep their values between them; each is moved to the heap once recorded (move_to_heap)",
        ]
    lines: list[str] = []
    for k, words in enumerate(kernels):
        heap = ["scamp5_kernel_api::move_to_heap(true);"] if len(kernels) > 1 else []
        if heap:
            lines.append(f"    // kernel {k + 1} of {len(kernels)}: {len(words)} ICWs")
        lines += sdk_kernel([*heap, *words])
    return c_function(program.name, header, lines)
