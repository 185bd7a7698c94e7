"""The superpixel mode: a plan of macros (from the shared reverse search) lowered to DREG words and host
pattern loads on tiles of PEs (`cain.model.superpixel`), allocated on the DREG file, verified bit for bit in
the DREG simulator against the integer correlation on the tile grid, and printed as SDK C.

Each value owns a whole DREG plane; its bits lie on the PEs of the working bank (the first input's), and the
other PEs hold don't-care bits, so no write needs the R0/R12 mask. Every operation is SIMD over the plane:

- a move by one tile is `width` (or `height`) `DNEWS0` with one direction flag set on every PE;
- an add is a ripple carry along the bit order: every PE forms generate and propagate at once, then each
  carry step is two words and one `DNEWS0` whose per-PE direction flags (loaded as patterns) point each PE
  at the PE of the bit before its own. Bit 0's PE reads whatever; its propagate is masked by a loaded
  pattern of bit 0 (so the garbage never passes on) and its sum takes no carry. No step relies on what a PE
  with no flag reads, nor on a masked `DNEWS0` into R12 (both unknown: reference section 8);
- subtract is ~(~a + b), doubling one `DNEWS0` along the bit order. Values wrap modulo 2^bits.

Loads are host calls between kernels; the direction flags of a carry are either re-loaded after moves or
saved in data DREGs around them, whichever the ranking (ICWs + `LOAD_COST` per load) prefers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cain.backend.adc_dac import Analogue, run_mixed
from cain.backend.c_names import c_function, sdk_kernel
from cain.backend.digital import verify_once, weight_lines, word_kernels
from cain.backend.dreg_alloc import Item, allocate
from cain.backend.dreg_sim import run_words
from cain.backend.sim import reach, shift
from cain.backend.split import KERNEL_STORE
from cain.diagnostics import CainError
from cain.model.dreg import DATA_DREGS, DREGS, FLAGS, Load, Word, check_word
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import DEFAULT_REGISTERS, DIRECTIONS, MACROS, NEWS, SimulationError
from cain.model.program import Program
from cain.model.superpixel import (
    Converter,
    Layout,
    LayoutError,
    Superpixel,
    carry_flags,
    load_arguments,
    pattern_cover,
)

LOAD_COST = 4
"""A pattern load ranked as this many ICWs: it is a host call that ends the kernel and starts the next
(its time on the device is unknown: reference section 8, question 6)."""
STRATEGIES = (("reload", "reload"), ("save", "reload"), ("reload", "keep"), ("save", "keep"))
"""(carry flags after a move: re-loaded | saved in data DREGs around it, bit-0 mask: loaded per add | kept)."""


@dataclass
class SuperpixelProgram:
    """A straight-line sequence of DREG words and pattern loads, with where inputs arrive and outputs end."""

    name: str
    items: list[Item]
    inputs: list[tuple[str, str, int]]
    """(channel, DREG, bank)."""
    outputs: list[tuple[str, str, int]]
    """(kernel, DREG, bank)."""
    goals: list[Goal]
    superpixel: Superpixel
    depth: int = 0
    macros: int = 0
    plan: Program | None = None
    margin: int = 0
    """Outputs are exact at least this many tiles from the array's edge."""
    strategy: tuple[str, str] = STRATEGIES[0]

    @property
    def icws(self) -> int:
        return sum(isinstance(i, Word) for i in self.items)

    @property
    def loads(self) -> int:
        return sum(isinstance(i, Load) for i in self.items)

    @property
    def analogue(self) -> tuple[int, int]:
        """(analogue calls in the kernels, host `scamp5_in` calls) of the ADC and DAC."""
        calls = [i for i in self.items if isinstance(i, Analogue)]
        return sum(not i.host for i in calls), sum(i.host for i in calls)

    @property
    def kernels(self) -> int:
        """SDK kernels the C runs: the loads split the words, and the kernel store splits long runs."""
        return sum(len(word_kernels(words)) for _, words in segments(self.items) if words)

    @property
    def cost(self) -> int:
        return self.icws + LOAD_COST * self.loads

    @property
    def layout(self) -> Layout:
        return self.superpixel.layout

    @property
    def dregs(self) -> list[str]:
        used = {r for i in self.items for r in i.dests + i.srcs if r in DREGS} | {
            r for _, r, _ in self.inputs
        }
        return sorted(used, key=lambda r: int(r[1:]))

    def planes(self, values: np.ndarray, bank: int, rng: np.random.Generator) -> np.ndarray:
        """Integer tile images (`[..., tile row, tile column]`) as one DREG plane: bit k of each value on the
        PE of bit k of `bank`, random bits elsewhere."""
        lay = self.layout
        values = np.asarray(values).astype(np.uint64)
        shape = (*values.shape[:-2], values.shape[-2] * lay.height, values.shape[-1] * lay.width)
        plane = rng.random(shape) < 0.5
        for k, (r, c) in enumerate(lay.banks[bank]):
            plane[..., r :: lay.height, c :: lay.width] = (values >> np.uint64(k)) & np.uint64(1)
        return plane

    def values(self, plane: np.ndarray, bank: int) -> np.ndarray:
        """The values (0 to 2^bits - 1) a plane holds in `bank`."""
        lay = self.layout
        total = np.zeros(plane[..., :: lay.height, :: lay.width].shape, dtype=np.uint64)
        for k, (r, c) in enumerate(lay.banks[bank]):
            total |= plane[..., r :: lay.height, c :: lay.width].astype(np.uint64) << np.uint64(k)
        return total

    def run(self, images: np.ndarray, seed: int = 0) -> list[np.ndarray]:
        """The outputs (modulo 2^bits) of running the program on tile images `[channel, ..., row, column]`;
        every other DREG starts random, and a PE with no direction flag reads random bits."""
        if self.superpixel.adc:
            raise CainError(
                f"superpixel: {self.name} reads its input through an ADC from an analogue register, not from "
                "DREG tile images (its verification runs it: verify_converted)"
            )
        rng = np.random.default_rng(seed)
        lay = self.layout
        shape = (*np.shape(images)[1:-2], np.shape(images)[-2] * lay.height, np.shape(images)[-1] * lay.width)
        state = {r: rng.random(shape) < 0.5 for r in DREGS}
        for (_, reg, bank), image in zip(self.inputs, images, strict=True):
            state[reg] = self.planes(image, bank, rng)
        state = run_words(self.items, state, DREGS, rng)
        return [self.values(state[reg], bank) for _, reg, bank in self.outputs]

    def expected(self, images: np.ndarray) -> list[np.ndarray]:
        """The integer correlation of the tile images with each goal (0 beyond the edge), modulo 2^bits."""
        images = np.asarray(images).astype(np.uint64)
        mask = np.uint64((1 << self.superpixel.bits) - 1)
        out = []
        for goal in self.goals:
            total = np.zeros_like(images[0])
            for (x, y, z), count in goal:  # uint64 arithmetic wraps modulo 2^64
                total += np.uint64(count % (1 << 64)) * shift(images[z], (x, y))
            k = len(out)
            if self.superpixel.bias:
                total += np.uint64(self.superpixel.bias[k] % (1 << 64))
            total &= mask
            if self.superpixel.relu and self.superpixel.relu[k]:
                total = np.where(total >> np.uint64(self.superpixel.bits - 1), np.uint64(0), total)
            out.append(total)
        return out


# -- lowering ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A value on the working bank: the virtual plane holding it (None: the constant 0) and its goal."""

    plane: str | None
    goal: Goal


@dataclass
class Lowering:
    """Builds the items of a plan on virtual planes (`%n`), tracking what the direction flags hold."""

    superpixel: Superpixel
    strategy: tuple[str, str]
    items: list[Item] = field(default_factory=list)
    count: int = 0
    flags: str | None = None
    """What R1-R4 hold: "carry", a side (one flag set everywhere), or None (unknown)."""
    saved: dict[str, str] = field(default_factory=dict)
    lsb_plane: str | None = None

    @property
    def layout(self) -> Layout:
        return self.superpixel.layout

    @property
    def bank(self) -> int:
        return self.superpixel.input_banks[0]

    def fresh(self) -> str:
        self.count += 1
        return f"%{self.count}"

    def emit(self, kind: str, *srcs: str) -> str:
        name = self.fresh()
        self.items.append(Word(kind, (name,), tuple(srcs)))
        return name

    def load(self, cube, dest: str | None = None) -> str:
        name = dest or self.fresh()
        self.items.append(Load(name, *load_arguments(self.layout.width, self.layout.height, cube)))
        return name

    def lsb(self) -> str:
        """A plane set on bit 0's PE of the working bank and clear on its other bits (one load)."""
        if self.strategy[1] == "keep" and self.lsb_plane is not None:
            return self.lsb_plane
        bank = self.layout.banks[self.bank]
        (cube,) = pattern_cover(self.layout.width, self.layout.height, {bank[0]}, set(bank[1:]))
        self.lsb_plane = self.load(cube)
        return self.lsb_plane

    def side_flags(self, side: str) -> None:
        """Set one direction flag on every PE (saving the carry's flags first, if that is the strategy)."""
        if self.flags == side:
            return
        if self.flags == "carry" and self.strategy[0] == "save":
            self.saved = {f: self.emit("MOV", f) for f in self.carry_flags()}
        self.items += [Word("CLR", tuple(FLAGS.values())), Word("SET", (FLAGS[side],))]
        self.flags = side

    def carry_flags(self) -> list[str]:
        """The flags some PE of the working bank needs for a carry step."""
        need = carry_flags(self.layout, self.bank)
        return [FLAGS[s] for s, (ones, _) in need.items() if ones]

    def set_carry_flags(self, kind: str = "carry") -> None:
        """Point every PE of the working bank (but bit 0's) at the PE of the bit before its own; with kind
        "reverse", every PE (but the top bit's) at the PE of the bit after its own."""
        if self.flags == kind:
            return
        need = carry_flags(self.layout, self.bank, kind == "reverse")
        clear = [FLAGS[s] for s, (ones, _) in need.items() if not ones]
        if kind == "carry" and self.saved and self.flags not in (None, "reverse"):
            self.items += [Word("MOV", (f,), (self.saved[f],)) for f in self.carry_flags()]
            self.saved = {}
        else:
            for s, (ones, zeros) in need.items():
                if ones:
                    cover = pattern_cover(self.layout.width, self.layout.height, ones, zeros)
                    self.union(FLAGS[s], cover)
        if clear and (self.flags in (None, "carry", "reverse") or FLAGS.get(str(self.flags)) in clear):
            self.items.append(Word("CLR", tuple(clear)))
        self.flags = kind

    def union(self, dest: str, cover: list) -> None:
        """`dest` := the union of the cover's patterns: one load each, ORed four at a time as they come."""
        if len(cover) == 1:
            self.load(cover[0], dest)
            return
        parts: list[str] = []
        for k, cube in enumerate(cover):
            parts.append(self.load(cube))
            if len(parts) == 4 and k < len(cover) - 1:
                parts = [self.emit("OR", *parts)]
        self.items.append(Word("OR", (dest,), tuple(parts)))

    def dnews(self, plane: str) -> str:
        return self.emit("DNEWS0", plane)

    def shift(self, plane: str, side: str, steps: int) -> str:
        """The plane read `steps` PEs away on `side`."""
        for _ in range(steps):
            self.side_flags(side)
            plane = self.dnews(plane)
        return plane

    def move(self, value: Value, side: str) -> Value:
        """The value read from the neighbouring tile on `side`."""
        goal = value.goal.shifted(DIRECTIONS[side])
        if value.plane is None:
            return Value(None, goal)
        steps = self.layout.width if side in ("east", "west") else self.layout.height
        return Value(self.shift(value.plane, side, steps), goal)

    def add(self, a: Value, b: Value, subtract: bool = False) -> Value:
        """`a + b` or `a - b` (as ~(~a + b)), modulo 2^bits."""
        goal = a.goal - b.goal if subtract else a.goal + b.goal
        if b.plane is None:
            return Value(a.plane, goal)
        if a.plane is None and not subtract:
            return Value(b.plane, goal)
        if a.plane == b.plane:
            return Value(None, goal) if subtract else Value(self.double(a.plane), goal)
        first = a.plane
        if subtract:
            first = self.emit("SET") if first is None else self.emit("NOT", first)
        return Value(self.adder(first, b.plane, complement=subtract), goal)

    def adder(self, a: str, b: str, complement: bool) -> str:
        """The ripple-carry sum of two planes (its complement if `complement`): 3 x bits + 6 words."""
        bits = self.layout.bits
        if bits > 1:  # the flags' loads first, while few values are live
            self.set_carry_flags()
        lsb = self.lsb() if bits > 1 else None
        na, nb = self.emit("NOT", a), self.emit("NOT", b)
        n1 = self.emit("NOR", a, b)
        if bits == 1:
            g = self.emit("NOR", na, nb)
            return self.emit("OR" if complement else "NOR", n1, g)
        t = self.emit("NOR", lsb, n1)  # a | b off bit 0
        g = self.emit("NOR", na, nb)  # generate
        p = self.emit("NOR", n1, g)  # propagate, a ^ b
        kill = self.emit("NOR", t, g)  # not (g | p off bit 0)
        carry = None
        for k in range(1, bits):
            last = k == bits - 1
            if k == 1:
                out = self.emit("OR", na, nb) if last else g
            else:
                u = self.emit("NOR", g, carry)
                out = self.emit("OR" if last else "NOR", kill, u)
            self.set_carry_flags()
            carry = self.dnews(out)
        # carry holds not c; the sum is p ^ (c off bit 0) (the mask loaded again unless kept: one DREG less)
        lsb = self.lsb()
        g0 = self.emit("NOR", p, carry, lsb)
        g1 = self.emit("NOR", p, g0)
        g2 = self.emit("NOR", carry, lsb, g0)
        return self.emit("OR" if complement else "NOR", g1, g2)

    def double(self, a: str) -> str:
        """2a: every bit read from the PE of the bit before, bit 0 cleared."""
        na = self.emit("NOT", a)
        self.set_carry_flags()
        moved = self.dnews(na)
        return self.emit("NOR", moved, self.lsb())

    def constant(self, value: int) -> str | None:
        """A plane holding `value` (modulo 2^bits) on the working bank: its 1 bits loaded as patterns."""
        bank = self.layout.banks[self.bank]
        value %= 1 << self.layout.bits
        ones = {pe for k, pe in enumerate(bank) if value >> k & 1}
        if not ones:
            return None
        plane = self.fresh()
        self.union(plane, pattern_cover(self.layout.width, self.layout.height, ones, set(bank) - ones))
        return plane

    def add_constant(self, plane: str | None, value: int) -> str | None:
        """`plane + value`, modulo 2^bits (a bias)."""
        constant = self.constant(value)
        if plane is None or constant is None:
            return plane if constant is None else constant
        return self.adder(plane, constant, complement=False)

    def relu(self, v: str) -> str:
        """`v` where it is not negative, else 0: its top bit flooded down the bank along the bit order (one
        `DNEWS0` a bit, flags pointing each PE at the bit after its own), then cleared where it is set:
        3 x bits + 3 words."""
        bank = self.layout.banks[self.bank]
        if self.layout.bits > 1:  # the flags' loads first, while few values are live
            self.set_carry_flags("reverse")
        top = self.fresh()
        (cube,) = pattern_cover(self.layout.width, self.layout.height, {bank[-1]}, set(bank[:-1]))
        self.load(cube, top)
        sign = self.emit("NOR", self.emit("NOT", v), self.emit("NOT", top))  # v's top bit, 0 below it
        clear = self.emit("NOT", sign)
        for _ in range(self.layout.bits - 1):
            self.set_carry_flags("reverse")
            above = self.dnews(clear)  # not the sign read from the bit after, garbage at the top bit
            clear = self.emit("NOR", sign, self.emit("NOR", above, top))
        return self.emit("NOR", self.emit("NOT", v), self.emit("NOT", clear))

    def select(self, pe: tuple[int, int], clear: set[tuple[int, int]]) -> str:
        """A loaded plane set on `pe` of every tile and clear on the PEs `clear`."""
        (cube,) = pattern_cover(self.layout.width, self.layout.height, {pe}, clear - {pe})
        return self.load(cube)

    def adc(self, conv: Converter, bank: int) -> str:
        """The plane of the analogue value in `conv.register` (the same on every PE of a tile, between two
        levels in [-2^(n-1), 2^(n-1))), as n = conv.bits bits from bit `conv.unit` of `bank` up, offset
        binary (level + 2^(n-1)), other bits of the bank 0. Successive approximation, MSB first: every PE
        compares its residue with the bit's weight (`where`), and the bit's PE keeps FLAG."""
        a, s, bits = conv.register, conv.scratch, self.layout.banks[bank]
        self.items += [
            Analogue("all"),
            Analogue("in", (s,), -(1 << (conv.bits - 1))),
            Analogue("sub", (a, a, s)),
        ]
        plane = self.emit("CLR")
        for k in reversed(range(conv.bits)):
            sel = self.select(bits[conv.unit + k], set(bits))
            self.items += [
                Analogue("in", (s,), -(1 << k)),
                Analogue("add", (a, a, s)),
                Analogue("where", (a,)),
            ]
            below = self.emit("NOT", self.emit("MOV", "FLAG"))
            self.items.append(Analogue("all"))
            plane = self.emit("OR", plane, self.emit("NOR", below, self.emit("NOT", sel)))
            if k:  # the residue back where it was below the weight
                self.items += [Analogue("WHERE", srcs=(below,)), Analogue("sub", (a, a, s)), Analogue("ALL")]
        return plane

    def flood(self, plane: str, pe: tuple[int, int]) -> str:
        """A plane holding on every PE of a tile the bit `plane` has at `pe`: that bit alone, spread west
        and east, then north and south, never past its tile (2 words per PE of distance)."""
        lay = self.layout
        everyone = {(r, c) for r in range(lay.height) for c in range(lay.width)}
        spread = self.emit("NOR", self.emit("NOT", plane), self.emit("NOT", self.select(pe, everyone)))
        r, c = pe
        for side, steps in (
            ("east", c),
            ("west", lay.width - 1 - c),
            ("south", r),
            ("north", lay.height - 1 - r),
        ):
            for _ in range(steps):
                self.side_flags(side)
                spread = self.emit("OR", spread, self.dnews(spread))
        return spread

    def dac(self, plane: str, conv: Converter, bank: int) -> None:
        """`conv.register` := bits `conv.unit` to `conv.unit + n - 1` of `bank` read as an n-bit two's
        complement number: each bit flooded over its tile, then `WHERE(bit); add` of its weight."""
        o, s, bits = conv.register, conv.scratch, self.layout.banks[bank]
        self.items += [Analogue("all"), Analogue("in", (o,), 0)]
        for k in range(conv.bits):
            bit = self.flood(plane, bits[conv.unit + k])
            weight = -(1 << k) if k == conv.bits - 1 else 1 << k
            self.items += [
                Analogue("in", (s,), weight),
                Analogue("WHERE", srcs=(bit,)),
                Analogue("add", (o, o, s)),
                Analogue("ALL"),
            ]

    def macro(self, name: str, operands: Sequence[Value], directions: tuple[str, ...]) -> Value:
        """The value a macro of `cain.model.isa.MACROS` computes, from its terms."""
        m = MACROS[name]
        if m.scale == 0:
            return Value(None, Goal())
        if m.scale != 1:
            raise CainError(f"superpixel: {name} scales by {m.scale}, which is not exact modulo 2^bits")
        terms = []
        for t in m.terms:
            v = operands[t.operand]
            if t.shifted:
                for d in directions:
                    v = self.move(v, d)
            terms.append((t.sign, v))
        terms.sort(key=lambda t: -t[0])
        sign, total = terms[0]
        if sign < 0:
            total = self.add(Value(None, Goal()), total, subtract=True)
        for sign, v in terms[1:]:
            total = self.add(total, v, subtract=sign < 0)
        return total

    def between_banks(self, plane: str, source: int, target: int) -> str:
        """The plane shifted so that bank `source`'s bits land on bank `target`'s."""
        dr, dc = self.layout.offset(source, target)
        plane = self.shift(plane, "west" if dc > 0 else "east", abs(dc))
        return self.shift(plane, "north" if dr > 0 else "south", abs(dr))


def lower(plan: Program, filt: Filter, sp: Superpixel, strategy: tuple[str, str]):
    """The items of `plan` on virtual planes: (lowering, input planes, output planes)."""
    low = Lowering(sp, strategy)
    values: dict[int, Value] = {}
    inputs = []
    for z, (v, _) in enumerate(plan.inputs):
        if sp.adc:
            plane = low.adc(sp.adc, sp.input_banks[z])
        else:
            plane = low.fresh()
            inputs.append(plane)
        values[v] = Value(low.between_banks(plane, sp.input_banks[z], low.bank), Goal.identity(1, z))
    for instr in plan.instrs:
        result = low.macro(instr.macro, [values[o] for o in instr.operands], instr.directions)
        for r in instr.results:
            values[r] = result
    outputs: list[str] = []
    for k, ((v, _), goal, bank) in enumerate(
        zip(plan.outputs, filt.final_goals(), sp.output_banks, strict=True)
    ):
        value = values[v]
        if value.goal != goal:
            raise CainError(f"superpixel: the plan's output holds {value.goal}, not its kernel {goal}")
        plane = value.plane
        if sp.bias and sp.bias[k]:
            plane = low.add_constant(plane, sp.bias[k])
        if sp.relu and sp.relu[k] and plane is not None:
            plane = low.relu(plane)
        plane = plane if plane is not None else low.emit("CLR")
        plane = low.between_banks(plane, low.bank, bank)
        if plane in outputs or plane in inputs:
            plane = low.emit("MOV", plane)
        outputs.append(plane)
    if sp.dac:
        low.dac(outputs[0], sp.dac, sp.output_banks[0])
    return low, inputs, outputs


# -- allocation ---------------------------------------------------------------------------------------


def dead_code(items: Sequence[Item], keep: set[str]) -> list[Item]:
    """The items without those whose virtual results nothing reads (nor keeps)."""
    out: list[Item] = []
    read = set(keep)
    for item in reversed(items):
        virtual = [d for d in item.dests if d.startswith("%")]
        if virtual and not any(d in read for d in virtual):
            continue
        read.update(item.srcs)
        out.append(item)
    return out[::-1]


def superpixel_program(
    plan: Program, filt: Filter, sp: Superpixel, strategy: tuple[str, str] = STRATEGIES[0]
) -> SuperpixelProgram:
    """Lower, allocate and check `plan` (not yet verified on images)."""
    try:
        low, inputs, outputs = lower(plan, filt, sp, strategy)
    except LayoutError as e:
        raise CainError(f"superpixel: {e}") from None
    items = dead_code(low.items, set(outputs))
    pinned = dict(zip(inputs, DATA_DREGS, strict=False))

    def too_many(peak: int) -> str:
        return (
            f"superpixel: the plan needs {peak} DREG planes at once, and the PE has {len(DATA_DREGS)} for "
            f"data ({' '.join(DATA_DREGS)}); use fewer kernels or inputs, or a smaller kernel"
        )

    allocated, where = allocate(items, pinned, outputs, DATA_DREGS, too_many)
    for item in allocated:
        if isinstance(item, Word):
            try:
                check_word(item)
            except SimulationError as e:
                raise CainError(f"superpixel: an illegal word was built: {e}") from None
    return SuperpixelProgram(
        filt.name,
        allocated,
        [(c, where[p], b) for (c, _), p, b in zip(filt.inputs, inputs, sp.input_banks, strict=True)]
        if not sp.adc
        else [],
        [(k.name, where[p], b) for k, p, b in zip(filt.kernels, outputs, sp.output_banks, strict=True)],
        filt.final_goals(),
        sp,
        filt.depth,
        plan.macros,
        plan,
        reach(plan),
        strategy,
    )


# -- verification -------------------------------------------------------------------------------------


def test_images(bits: int, channels: int, size: int, seed: int = 0) -> np.ndarray:
    """Random tile images of `bits`-bit values, with the all-largest and a checkerboard of largest and 0:
    `[channel, image, tile row, tile column]`."""
    rng = np.random.default_rng(seed)
    top = (1 << bits) - 1
    out = []
    for z in range(channels):
        images = rng.integers(0, 1 << 63, size=(4, size, size), dtype=np.uint64) * np.uint64(2)
        images = (images | rng.integers(0, 2, size=(4, size, size), dtype=np.uint64)) & np.uint64(top)
        images[0] = top
        images[1] = np.uint64(top) * ((np.indices((size, size)).sum(axis=0) + z) % 2).astype(np.uint64)
        out.append(images)
    return np.stack(out)


def verify_superpixel(program: SuperpixelProgram, seed: int = 0) -> None:
    """Run the program in the DREG simulator on tile images and compare every output with the integer
    correlation modulo 2^bits, bit for bit; raise CainError on the first difference. With an ADC or DAC,
    the analogue side runs too (`verify_converted`)."""
    if program.superpixel.adc or program.superpixel.dac:
        verify_converted(program, seed)
        return
    size = 6 + 2 * program.margin
    images = test_images(program.superpixel.bits, len(program.inputs), size, seed)
    try:
        got = program.run(images, seed)
    except SimulationError as e:
        raise CainError(f"superpixel: {program.name} cannot run: {e}") from None
    compare(program, got, program.expected(images))


def compare(
    program: SuperpixelProgram, got: Sequence[np.ndarray], want: Sequence[np.ndarray], what=""
) -> None:
    """Raise CainError where an output differs from its expected tile values (at least `margin` tiles in)."""
    m = program.margin
    for (name, reg, bank), g, w in zip(program.outputs, got, want, strict=False):
        size = g.shape[-1]
        inside = (..., slice(m, size - m), slice(m, size - m))
        wrong = np.argwhere(g[inside] != w[inside])
        if len(wrong):
            at = (int(wrong[0][0]), int(wrong[0][1]) + m, int(wrong[0][2]) + m)
            raise CainError(
                f"superpixel: {program.name} computes {name}{what} wrongly at image/tile {at}: {g[at]} instead "
                f"of {w[at]} ({reg}, bank {bank})"
            )


def adc_images(conv: Converter, channels: int, size: int, rng: np.random.Generator):
    """(analogue tile values, their levels in the ADC's range): levels in [-2^(n-1), 2^(n-1)), the
    extremes among them, each value a fraction in [1/8, 7/8] above its level (never on a boundary)."""
    half = 1 << (conv.bits - 1)
    levels = rng.integers(-half, half, size=(channels, 4, size, size))
    levels[:, 0], levels[:, 1] = half - 1, -half
    return levels + rng.uniform(1 / 8, 7 / 8, levels.shape), levels


def dac_value(conv: Converter, values: np.ndarray) -> np.ndarray:
    """What the DAC makes of tile values: bits unit..unit+n-1 as an n-bit two's complement number."""
    window = (np.asarray(values).astype(np.uint64) >> np.uint64(conv.unit)) & np.uint64((1 << conv.bits) - 1)
    signed = window.astype(np.int64)
    return np.where(signed >= 1 << (conv.bits - 1), signed - (1 << conv.bits), signed)


def verify_converted(program: SuperpixelProgram, seed: int = 0) -> None:
    """Run the ADC, kernel and DAC together (DREG and ideal analogue simulators, every other register
    random) on analogue tile images, and check the DREG outputs against the integer correlation of the
    ADC's levels and the DAC's register on every PE against `dac_value` of it."""
    sp, lay, rng = program.superpixel, program.layout, np.random.default_rng(seed)
    size = 6 + 2 * program.margin
    shape = (4, size * lay.height, size * lay.width)
    dregs = {r: rng.random(shape) < 0.5 for r in DREGS}
    analogue = {r: rng.uniform(-128, 128, shape) for r in (*DEFAULT_REGISTERS, NEWS)}
    if sp.adc:
        tiles, levels = adc_images(sp.adc, 1, size, rng)
        digital = ((levels + (1 << (sp.adc.bits - 1))) << sp.adc.unit).astype(np.uint64)
        analogue[sp.adc.register] = np.repeat(np.repeat(tiles[0], lay.height, -2), lay.width, -1)
    else:
        digital = test_images(sp.bits, len(program.inputs), size, seed)
        for (_, reg, bank), image in zip(program.inputs, digital, strict=True):
            dregs[reg] = program.planes(image, bank, rng)
    try:
        state = run_mixed(program.items, dregs, analogue, rng)
    except SimulationError as e:
        raise CainError(f"superpixel: {program.name} cannot run: {e}") from None
    want = program.expected(digital)
    compare(program, [program.values(state[reg], bank) for _, reg, bank in program.outputs], want)
    if sp.dac:
        pes = analogue[sp.dac.register].reshape(4, size, lay.height, size, lay.width).transpose(0, 1, 3, 2, 4)
        pes = pes.reshape(4, size, size, -1)
        expected = dac_value(sp.dac, want[0])
        worst = np.abs(pes - expected[..., None]).argmax(axis=-1)[..., None]
        compare(program, [np.take_along_axis(pes, worst, -1)[..., 0]], [expected], " after its DAC")


_VERIFIED: dict[tuple, None] = {}


def ensure_superpixel_verified(program: SuperpixelProgram, seed: int = 0) -> None:
    """`verify_superpixel`, unless this process has verified this very program already."""
    key = (
        program.name,
        tuple(program.items),
        tuple(program.inputs),
        tuple(program.outputs),
        tuple(program.goals),
    )
    verify_once(_VERIFIED, key, lambda: verify_superpixel(program, seed))


# -- C --------------------------------------------------------------------------------------------------


def segments(items: Sequence[Item]) -> list[tuple[list[Item], list[Item]]]:
    """The items as (host calls, then the kernel words after them) pairs: each host call (a pattern load,
    a `scamp5_in`) ends a kernel."""
    out: list[tuple[list[Item], list[Item]]] = []
    for item in items:
        if isinstance(item, Load) or isinstance(item, Analogue) and item.host:
            if not out or out[-1][1]:
                out.append(([], []))
            out[-1][0].append(item)
        else:
            if not out:
                out.append(([], []))
            out[-1][1].append(item)
    return out


def layout_lines(layout: Layout) -> list[str]:
    """The tile drawn as text: `b.k` is bit k of bank b, `.` a PE holding no bit."""
    grid = layout.bank_grid()
    cells = [[f"{c[0]}.{c[1]}" if c else "." for c in row] for row in grid]
    width = max(len(c) for row in cells for c in row)
    return ["  " + " ".join(c.rjust(width) for c in row) for row in cells]


def converter_lines(program: SuperpixelProgram) -> list[str]:
    """What the ADC and DAC compute, their cost, and the model of the SDK's FLAG they were verified in."""
    sp = program.superpixel
    adc, dac = sp.adc, sp.dac
    if not (adc or dac):
        return []
    lines = [""]
    if adc:
        a, half = adc.register, 1 << (adc.bits - 1)
        where = f"bits {adc.unit} to {adc.unit + adc.bits - 1} of bank {sp.input_banks[0]}"
        lines += [
            f"ADC first: {a} (the same on every PE of a tile, -{half} <= {a} < {half}) becomes the input:",
            f"  floor({a}) + {half} in {where}, other bits 0 (successive approximation, MSB first; {a} is consumed)",
        ]
    if dac:
        half, name = 1 << (dac.bits - 1), program.outputs[0][0]
        where = f"bits {dac.unit} to {dac.unit + dac.bits - 1} of {name} (bank {sp.output_banks[0]})"
        lines += [
            f"DAC last: {dac.register} := {where} as a {dac.bits}-bit two's complement number, on its tile's PEs",
            f"  (the output's value >> {dac.unit}, wrapped to -{half}..{half - 1}: no saturation)",
        ]
    calls, host = program.analogue
    scratch = ", ".join(sorted({c.scratch for c in (adc, dac) if c}))
    return [
        *lines,
        f"the ADC / DAC add {calls} analogue calls and {host} host scamp5_in calls (their DREG words are counted",
        f"above); {scratch} holds their constants",
        "verified with an ideal analogue model: where(x) sets FLAG := x > 0, WHERE(d) FLAG := d, all() and",
        "ALL() FLAG := 1; analogue writes land only where FLAG = 1; MOV(d, FLAG) reads it; scamp5_in is exact",
        "(no input lies on a level boundary, so whether where is strict does not matter)",
    ]


def header_lines(program: SuperpixelProgram, channels: Sequence[str]) -> list[str]:
    """Cost, DREGs, the tile layout, where every input and output is, and what the outputs hold."""
    lay = program.layout
    bits = program.superpixel.bits
    lines = [
        f"{program.name}: generated by Cain for SCAMP-5d superpixels (DREG plane, {lay.width}x{lay.height} tiles)",
        "",
        (
            f"{program.icws} ICWs and {program.loads} pattern loads (scamp5_load_pattern, each between two kernels), "
            f"{program.macros} macros in the plan; DREGs used: {' '.join(program.dregs)}"
        ),
        f"one pixel is a {lay.width}x{lay.height} tile of PEs; bank b holds one {bits}-bit two's complement value,",
        "bit k on the PE marked b.k (row 0 north, column 0 west):",
        *layout_lines(lay),
    ]
    lines += [f"input {c}: {reg}, bank {b}" for c, reg, b in program.inputs]
    lines += [
        f"output {k}: {reg}, bank {b} (other PEs of {reg} hold don't-care bits)"
        for k, reg, b in program.outputs
    ]
    scale = f"2^{program.depth} x the kernel as written, i.e. " if program.depth else ""
    extras = [
        f"then {k}: {f'+ {b}' if b else ''}{' and ' if b and r else ''}{'ReLU (negative -> 0)' if r else ''}"
        for (k, _, _), b, r in zip(
            program.outputs,
            program.superpixel.bias or [0] * len(program.outputs),
            program.superpixel.relu or [False] * len(program.outputs),
            strict=True,
        )
        if b or r
    ]
    lines += [
        "",
        f"each output = {scale}the integer sum of these weights times the input tiles, modulo {1 << bits}:",
    ]
    lines += weight_lines(program.goals, [k for k, _, _ in program.outputs], channels)
    lines += extras
    if program.margin:
        lines.append(
            f"exact at least {program.margin} tile(s) from the array's edge (beyond it DNEWS0 reads 0)"
        )
    lines += list(program.superpixel.notes)
    lines += converter_lines(program)
    lines += [
        "safe forms (reference section 8): no DNEWS0 writes R12 and no result depends on what a PE with no",
        "direction flag reads (bit 0's carry is masked by a loaded pattern); R0 and R12 are not used as masks",
        "the kernels overwrite the DREGs they use (the direction flags R1-R4 among them)",
    ]
    return lines


def emit_superpixel(program: SuperpixelProgram, channels: Sequence[str], limit: int = KERNEL_STORE) -> str:
    """The C function: host pattern loads between kernels, each kernel's words between
    `scamp5_kernel_begin()` and `scamp5_kernel_end()`."""
    lines: list[str] = []
    for loads, words in segments(program.items):
        if loads:
            lines.append("    // host calls (each ends the kernel before; the next begins after)")
            lines += [f"    {load}" for load in loads]
        for part in word_kernels(words, limit) if words else []:
            lines += sdk_kernel(part)
    return c_function(program.name, header_lines(program, channels), lines)
