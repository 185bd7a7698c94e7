"""A SCAMP-5 simulator: macro programs and bus micro-ops executed over a whole pixel array with numpy.

Arrays are indexed `[row, column]` with row 0 to the north, so reading the neighbour at offset
`(dx, dy)` (+x east, +y north) reads `[row - dy, column + dx]`. Several images can be run at once as a
stack `[image, row, column]`.

Edges: a PE beyond the array reads as 0, and a NEWS register that no neighbour writes (on the far edge
of a write to `XN`..`XW`) becomes 0. Only pixels at least `reach(program)` away from every edge are
therefore exact; the verifier compares exactly those.

Bus semantics follow reference/scamp5.md section 2: all sources are read before any destination is
written; `busN` writes `-(sum of sources) / N` to each of its N destinations. The same executor runs on
numpy arrays and, for symbolic checks, on goals (an unbounded plane, no edges).

Noise (off by default): `Noise(sigma, extra)` adds Gaussian noise of standard deviation `sigma` to every
value a micro-op writes (the transfer error of one bus cycle) and a further `extra`, added in
quadrature, on every `bus2` and `bus3` destination (divisions are the noisiest operations). Units are
those of the pixel values (the ADC range is about [-128, 127]); the SCAMP-5 literature reports transfer
errors of a fraction of a unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cain.model.goal import Goal, Offset
from cain.model.isa import (
    DIRECTIONS,
    MACROS,
    NEIGHBOUR_SIDE,
    NEWS,
    OPPOSITE,
    Macro,
    MicroOp,
    SimulationError,
    check_bus,
    expand,
    offset_of,
)
from cain.model.program import Instr, Program

DEFAULT_SIZE = 256


# -- shifting ---------------------------------------------------------------------------------------


def shift(a: np.ndarray, offset: Offset) -> np.ndarray:
    """`b[p] = a[p + offset]` for every pixel `p`, 0 where `p + offset` lies beyond the array."""
    dx, dy = offset
    if dx == 0 and dy == 0:
        return a
    out = np.zeros_like(a)
    h, w = a.shape[-2:]
    r0, r1 = max(0, dy), min(h, h + dy)
    c0, c1 = max(0, -dx), min(w, w - dx)
    if r0 < r1 and c0 < c1:
        out[..., r0:r1, c0:c1] = a[..., r0 - dy : r1 - dy, c0 + dx : c1 + dx]
    return out


def correlate(images: np.ndarray, goal: Goal, depth: int) -> np.ndarray:
    """The direct correlation of `images` (`[channel, (image,) row, column]`) with `goal / 2^depth`."""
    out = np.zeros_like(images[0], dtype=np.float64)
    for (x, y, z), count in goal:
        out += count * shift(images[z].astype(np.float64), (x, y))
    return out / 2**depth


# -- value algebras ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Algebra:
    """What the bus executor needs of a value domain: numbers over the array, or goals."""

    zero: Callable[[], object]
    add: Callable[[object, object], object]
    neg: Callable[[object], object]
    divide: Callable[[object, int], object]
    shift: Callable[[object, Offset], object]


def numeric_algebra(shape: tuple[int, ...]) -> Algebra:
    """numpy arrays of `shape` as values: what the simulator computes pixels with."""
    return Algebra(
        zero=lambda: np.zeros(shape),
        add=lambda a, b: a + b,
        neg=lambda a: -a,
        divide=lambda a, n: a / n,
        shift=shift,
    )


def _divide_goal(g: Goal, n: int) -> Goal:
    if any(c % n for _, c in g):
        raise SimulationError(f"dividing a goal by {n} leaves a fraction: {dict(g.items)}")
    return Goal((a, c // n) for a, c in g)


GOAL_ALGEBRA = Algebra(
    zero=Goal,
    add=lambda a, b: a + b,
    neg=lambda a: -a,
    divide=_divide_goal,
    shift=lambda g, offset: g.shifted(offset),
)
"""Goals as values: symbolic execution on an unbounded plane."""


# -- bus micro-ops -------------------------------------------------------------------------------------


def run_bus(
    ops: Sequence[MicroOp],
    state: dict[str, object],
    algebra: Algebra,
    noise: Noise | None = None,
) -> dict[str, object]:
    """Execute micro-ops on `state` (register -> value, including NEWS) in place; returns `state`.

    Reading a register that holds no value raises SimulationError.
    """
    for op in ops:
        check_bus(op)
        values = []
        for s in op.srcs:
            side = NEIGHBOUR_SIDE.get(s)
            source = NEWS if side else s
            if state.get(source) is None:
                raise SimulationError(f"{op}: reads {s}, which holds no value")
            value = state[source]
            values.append(algebra.shift(value, DIRECTIONS[side]) if side else value)
        total = algebra.zero()
        for v in values:
            total = algebra.add(total, v)
        result = algebra.neg(total)
        if len(op.dests) > 1:
            result = algebra.divide(result, len(op.dests))
        for d in op.dests:
            written = result if noise is None else noise.perturb(result, op.kind)
            side = NEIGHBOUR_SIDE.get(d)
            if side:
                dx, dy = DIRECTIONS[side]
                state[NEWS] = algebra.shift(written, (-dx, -dy))
            else:
                state[d] = written
    return state


@dataclass
class Noise:
    """Gaussian analogue noise: `sigma` on every written value, `extra` more on bus2/bus3 writes."""

    sigma: float = 0.0
    extra: float = 0.0
    seed: int = 0
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def perturb(self, value: np.ndarray, kind: str) -> np.ndarray:
        """`value` as written by a micro-op of `kind`, with its noise added."""
        sigma = float(np.hypot(self.sigma, self.extra)) if kind != "bus" else self.sigma
        return value + self.rng.normal(0.0, sigma, np.shape(value)) if sigma else value


class NoiseTally:
    """Stands in for `Noise` in a run over `NOISE_ALGEBRA`: every write adds a fresh noise term of the
    variance `noise` gives it, so a value's variance can be read off exactly instead of sampled."""

    def __init__(self, noise: Noise):
        self.noise = noise
        self.variances: list[float] = []

    def perturb(self, value: dict, kind: str) -> dict:
        extra = self.noise.extra**2 if kind != "bus" else 0.0
        self.variances.append(self.noise.sigma**2 + extra)
        return {**value, (len(self.variances) - 1, 0, 0): 1.0}

    def variance(self, value: dict) -> float:
        """The variance of one pixel of `value`: every term's noise is independent per pixel."""
        return sum(c * c * self.variances[k] for (k, _, _), c in value.items())


def _add_terms(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0.0) + c
    return out


NOISE_ALGEBRA = Algebra(
    zero=dict,
    add=_add_terms,
    neg=lambda a: {k: -c for k, c in a.items()},
    divide=lambda a, n: {k: c / n for k, c in a.items()},
    shift=lambda a, o: {(k, x + o[0], y + o[1]): c for (k, x, y), c in a.items()},
)
"""Values as the noise terms they carry (`(write, dx, dy) -> coefficient`), the signal left out."""


# -- macro programs -------------------------------------------------------------------------------


def instr_registers(instr: Instr, macro: Macro, registers: Mapping[int, str]) -> dict[str, str]:
    """The register bound to every role of an allocated instruction (results, operands, scratch)."""
    roles: dict[str, str] = {}
    for role, v in zip(macro.results, instr.results, strict=True):
        roles[role] = registers[v]
    for role, v in zip(macro.operands, instr.operands, strict=True):
        roles[role] = registers[v]
    if len(instr.scratch) != len(macro.scratch):
        raise SimulationError(
            f"{instr.macro} needs {len(macro.scratch)} scratch register(s), has {len(instr.scratch)}"
        )
    roles.update(zip(macro.scratch, instr.scratch, strict=True))
    return roles


def instr_micro_ops(instr: Instr, registers: Mapping[int, str]) -> list[MicroOp]:
    """An allocated instruction's exact micro-ops."""
    macro = MACROS[instr.macro]
    return expand(macro, instr_registers(instr, macro, registers), instr.directions)


def expansion(program: Program) -> list[MicroOp]:
    """The micro-ops of an allocated program's macros, as the SDK expands them (and `run_registers` runs them)."""
    return [op for instr in program.instrs for op in instr_micro_ops(instr, program.registers)]


def run_values(program: Program, inputs: Sequence[object], algebra: Algebra) -> dict[int, object]:
    """Execute an SSA program on values (registers ignored), each macro by its linear form."""
    values: dict[int, object] = {v: x for (v, _), x in zip(program.inputs, inputs, strict=True)}
    for instr in program.instrs:
        macro = MACROS[instr.macro]
        offset = offset_of(instr.directions)
        total = algebra.zero()
        for t in macro.terms:
            x = values[instr.operands[t.operand]]
            x = algebra.shift(x, offset) if t.shifted else x
            total = algebra.add(total, x if t.sign > 0 else algebra.neg(x))
        if macro.scale == 0:
            total = algebra.zero()
        elif macro.scale != 1:
            total = algebra.divide(total, macro.scale.denominator)
        for r in instr.results:
            values[r] = total
    return values


def run_registers(
    program: Program,
    inputs: Sequence[object],
    algebra: Algebra,
    initial: Mapping[str, object] | None = None,
    noise: Noise | None = None,
    on_instr: Callable[[int, Instr, dict[str, object]], None] | None = None,
) -> dict[str, object]:
    """Execute an allocated program on the register file, every macro as its bus micro-ops.

    `initial` gives the other registers' starting contents (e.g. garbage, to catch reads of unset
    registers); inputs overwrite their registers. Returns the final register state.
    """
    if not program.registers:
        raise SimulationError(f"{program.name}: the program has no register allocation")
    state: dict[str, object] = dict(initial or {})
    for (_, reg), x in zip(program.inputs, inputs, strict=True):
        state[reg] = x
    for i, instr in enumerate(program.instrs):
        macro = MACROS[instr.macro]
        roles = instr_registers(instr, macro, program.registers)
        try:
            run_bus(expand(macro, roles, instr.directions), state, algebra, noise)
        except SimulationError as e:
            raise SimulationError(f"instruction {i} {macro.sdk_call(roles, instr.directions)}: {e}") from None
        if on_instr is not None:
            on_instr(i, instr, state)
    return state


def reach(program: Program) -> int:
    """How far (in PE steps) from an edge a pixel must be for every output to be exact there: per value,
    the margin on each side that shifts have filled with zeros (a read from the east grows the east
    margin and shrinks the west one, so a value moved out and back keeps only its furthest excursion)."""
    far: dict[int, Margins] = {v: NO_MARGINS for v, _ in program.inputs}
    for instr in program.instrs:
        macro = MACROS[instr.macro]
        moved = still = NO_MARGINS
        for term in macro.terms:
            m = far.get(instr.operands[term.operand], NO_MARGINS)
            if term.shifted:
                moved = tuple(map(max, moved, m))
            else:
                still = tuple(map(max, still, m))
        for d in instr.directions:
            moved = _moved(moved, d)
        r = tuple(map(max, moved, still))
        for v in instr.results:
            far[v] = r
    return max((max(far.get(v, NO_MARGINS)) for v, _ in program.outputs), default=0)


Margins = tuple[int, ...]
"""Per side (in `DIRECTIONS` order), how many PEs from that edge a value holds zeros shifted in."""
NO_MARGINS: Margins = (0, 0, 0, 0)
_SIDES = {name: k for k, name in enumerate(DIRECTIONS)}


def _moved(margins: Margins, side: str) -> Margins:
    """The margins of a value read from the neighbour on `side`: one more there, one less opposite."""
    k = _SIDES[side]
    out = list(margins)
    out[k] += 1
    out[(k + 2) % 4] = max(0, out[(k + 2) % 4] - 1)
    return tuple(out)


def bus_reach(ops: Sequence[MicroOp], outputs: Sequence[str]) -> int:
    """`reach` of a bus micro-op program: per register, the margins its value carries (one pass, so a
    long program's margin stays that of its furthest excursion, not its count of neighbour reads)."""
    far: dict[str, Margins] = {}
    for op in ops:
        got = NO_MARGINS
        for s in op.srcs:
            side = NEIGHBOUR_SIDE.get(s)
            m = far.get(NEWS if side else s, NO_MARGINS)
            got = tuple(map(max, got, _moved(m, side) if side else m))
        for d in op.dests:
            side = NEIGHBOUR_SIDE.get(d)
            far[NEWS if side else d] = _moved(got, OPPOSITE[side]) if side else got
    return max((max(far.get(r, NO_MARGINS)) for r in outputs), default=0)


def simulate(
    program: Program,
    images: np.ndarray,
    *,
    level: str = "auto",
    noise: Noise | None = None,
    seed: int = 0,
) -> list[np.ndarray]:
    """Run `program` on `images` (`[channel, (image,) row, column]`); the outputs in output order.

    `level="values"` runs the SSA program by linear forms; `"registers"` runs every macro's bus
    micro-ops on the allocated register file (other registers start as random garbage);
    `"auto"` picks registers when the program is allocated.
    """
    images = np.asarray(images, dtype=np.float64)
    shape = images.shape[1:]
    algebra = numeric_algebra(shape)
    if level == "auto":
        level = "registers" if program.registers else "values"
    if level == "values":
        values = run_values(program, list(images), algebra)
        return [values[v] for v, _ in program.outputs]
    garbage = garbage_registers(program.registers.values(), shape, seed)
    state = run_registers(program, list(images), algebra, garbage, noise)
    return [state[reg] for _, reg in program.outputs]


def garbage_registers(registers: Iterable[str], shape: tuple[int, ...], seed: int) -> dict[str, object]:
    """Random contents in the ADC range for `registers` and NEWS, as a PE's registers hold them before
    a kernel runs (so a program that reads an unset register computes garbage); fixed by `seed`."""
    rng = np.random.default_rng(seed)
    return {r: rng.uniform(-128, 127, shape) for r in sorted({*registers, NEWS})}


def bus_registers(ops: Sequence[MicroOp]) -> set[str]:
    """The registers of the PE itself that micro-ops name (NEWS, not the neighbours' `XN`..`XW`)."""
    return {r for op in ops for r in op.dests + op.srcs if r not in NEIGHBOUR_SIDE}


def output_noise(
    ops: Sequence[MicroOp], inputs: Sequence[str], outputs: Sequence[str], noise: Noise
) -> list[float]:
    """The variance of every `outputs` register's pixels after `ops` under `noise`, the inputs exact:
    computed, not sampled (each write's noise carried through the program as a term of its own)."""
    tally = NoiseTally(noise)
    state = run_bus(ops, {r: {} for r in inputs}, NOISE_ALGEBRA, tally)  # type: ignore[arg-type]
    return [tally.variance(state[r]) for r in outputs]


def random_images(channels: int, images: int = 1, size: int = DEFAULT_SIZE, seed: int = 0) -> np.ndarray:
    """Random integer test images in the ADC range, `[channel, image, row, column]`."""
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, (channels, images, size, size)).astype(np.float64)


def simulate_bus(
    ops: Sequence[MicroOp],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[str],
    *,
    noise: Noise | None = None,
    seed: int = 0,
) -> list[np.ndarray]:
    """Run bus micro-ops with `inputs` (register -> image stack) in their registers; the `outputs`
    registers afterwards. Every other register starts as random garbage."""
    return simulate_kernels([ops], inputs, outputs, noise=noise, seed=seed)


def simulate_kernels(
    parts: Sequence[Sequence[MicroOp]],
    inputs: Mapping[str, np.ndarray],
    outputs: Sequence[str],
    *,
    noise: Noise | None = None,
    seed: int = 0,
) -> list[np.ndarray]:
    """`simulate_bus` of a program run as a sequence of kernels (`cain.backend.split`): the registers keep
    their values from one kernel to the next, NEWS is garbage again at the start of each."""
    first = np.asarray(next(iter(inputs.values())), dtype=np.float64)
    state = garbage_registers(
        {*inputs, *outputs, *(r for ops in parts for r in bus_registers(ops))}, first.shape, seed
    )
    state.update((r, np.asarray(x, dtype=np.float64)) for r, x in inputs.items())
    run_kernels(
        parts,
        state,
        numeric_algebra(first.shape),
        lambda k: garbage_registers((), first.shape, seed + k)[NEWS],
        noise,
    )
    return [state[r] for r in outputs]


def run_kernels(
    parts: Sequence[Sequence[MicroOp]],
    state: dict[str, object],
    algebra: Algebra,
    garbage: Callable[[int], object],
    noise: Noise | None = None,
) -> dict[str, object]:
    """`run_bus` of each kernel in turn on `state`, NEWS set to `garbage(k)` before kernel `k` > 0."""
    for k, ops in enumerate(parts):
        if k:
            state[NEWS] = garbage(k)
        run_bus(ops, state, algebra, noise)
    return state
