"""The SCAMP-5 instruction set, described once (reference/scamp5.md sections 2-4).

Every fact about a macro lives in its `Macro` entry: operands, meaning on goals, bus expansion, ICW
cost, SDK spelling and instruction sets. Register constraints are not listed separately: they follow
from the bus rule that a register appears at most once in one micro-op (`Macro.distinct_roles`). The
search, the simulator, the verifier, regalloc, expand-bus and emit all read this table.

Register roles in a macro's templates: `y`, `y0`, `y1` results; `x0`, `x1`, `x2` operands; `s0`, `s1`
scratch registers; `T` the PE's NEWS register; `X0` / `Xopp0` the neighbour NEWS on the side / opposite
side of the first direction, `X1` / `Xopp1` likewise for the second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from cain.model.goal import Goal, Offset

# -- directions -------------------------------------------------------------------------------------

DIRECTIONS: dict[str, Offset] = {"north": (0, 1), "east": (1, 0), "south": (0, -1), "west": (-1, 0)}
"""Reading from the neighbour on side `d` moves every atom of a goal by `DIRECTIONS[d]`."""

NEIGHBOUR_NEWS: dict[str, str] = {"north": "XN", "east": "XE", "south": "XS", "west": "XW"}
"""`X(d)`: the name of the NEWS register of the neighbour on side `d`."""

OPPOSITE: dict[str, str] = {"north": "south", "south": "north", "east": "west", "west": "east"}

NEIGHBOUR_SIDE: dict[str, str] = {name: side for side, name in NEIGHBOUR_NEWS.items()}
"""`XN` -> `north`, ...: the side whose neighbour's NEWS a name stands for."""


class SimulationError(Exception):
    """A program the hardware cannot execute (an illegal micro-op, an unset value)."""


NEWS = "NEWS"
DEFAULT_REGISTERS: tuple[str, ...] = ("A", "B", "C", "D", "E", "F")


def offset_of(directions: tuple[str, ...]) -> Offset:
    """The total atom shift of reading through `directions` in turn."""
    return (sum(DIRECTIONS[d][0] for d in directions), sum(DIRECTIONS[d][1] for d in directions))


# -- bus micro-operations ----------------------------------------------------------------------------

BUS_KINDS: dict[str, tuple[int, int]] = {"bus": (1, 4), "bus2": (2, 2), "bus3": (3, 1)}
"""Each micro-op: (number of destinations, most sources). `busN` writes `-(sum of sources)/N` to each
of its N destinations; `bus` with no source writes 0."""


@dataclass(frozen=True)
class BusTemplate:
    """One micro-op of a macro's expansion, over register roles."""

    kind: str
    dests: tuple[str, ...]
    srcs: tuple[str, ...] = ()


def _bus(spec: str) -> tuple[BusTemplate, ...]:
    """Parse `"bus(T,x0); bus(y,T)"` into templates: the first n registers of a `busn` are destinations."""
    ops = []
    for part in spec.split(";"):
        kind, args = part.strip().rstrip(")").split("(")
        regs = tuple(a.strip() for a in args.split(",") if a.strip())
        n = BUS_KINDS[kind][0]
        ops.append(BusTemplate(kind, regs[:n], regs[n:]))
    return tuple(ops)


# -- macros ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """`sign * operand`, moved by the macro's directions when `shifted`."""

    sign: int
    operand: int
    shifted: bool = False


@dataclass(frozen=True)
class Macro:
    """One SCAMP-5 analogue macro instruction, in one register form."""

    name: str
    """Cain's name for this form (the op name in the scamp5 dialect)."""
    sdk: str
    """The SDK call, `{role}` and `{d0}`/`{d1}` (directions) filled in."""
    results: tuple[str, ...]
    operands: tuple[str, ...]
    directions: int
    terms: tuple[Term, ...]
    """Every result holds `scale * sum(terms)`."""
    expansion: tuple[BusTemplate, ...]
    sets: frozenset[str]
    scale: Fraction = Fraction(1)
    scratch: tuple[str, ...] = ()
    tied: tuple[tuple[str, str], ...] = ()
    """(result, operand) pairs that must share a register: the macro works in place."""
    clobbers_operands: bool = False
    """Operands are overwritten (and not restored): their values die here."""
    doc: str = ""

    @property
    def icws(self) -> int:
        """Cost on the device: the number of bus micro-operations."""
        return len(self.expansion)

    @property
    def distinct_roles(self) -> list[tuple[str, str]]:
        """Pairs of register roles that must be different registers: from the bus rule, and the results
        of one macro are different registers."""
        pairs: set[tuple[str, str]] = set()
        registers = set(self.results + self.operands + self.scratch)

        def differ(a: str, b: str) -> None:
            if a != b and a in registers and b in registers:
                pairs.add((min(a, b), max(a, b)))

        for j, a in enumerate(self.results):  # two results are two registers
            for b in self.results[j + 1 :]:
                differ(a, b)
        for i, op in enumerate(self.expansion):
            roles = op.dests + op.srcs
            for j, a in enumerate(roles):
                for b in roles[j + 1 :]:
                    differ(a, b)
            # a register written here must not hold an operand that a later micro-op still reads
            for later in self.expansion[i + 1 :]:
                for written in op.dests:
                    for read in later.srcs:
                        if read in self.operands and (written, read) not in self.tied:
                            differ(written, read)
        return sorted(pairs)

    def apply(self, operands: tuple[Goal, ...], directions: tuple[str, ...] = ()) -> Goal:
        """The goal every result holds, given the operands' goals (forward semantics).

        Raises ValueError when a division meets an odd count (the result is not a whole goal).
        """
        offset = offset_of(directions)
        total = _EMPTY
        for t in self.terms:
            g = operands[t.operand].shifted(offset) if t.shifted else operands[t.operand]
            total = total + (g if t.sign > 0 else -g)
        if self.scale == 1:
            return total
        if self.scale == 0:
            return Goal()
        halved = total.halved()
        if halved is None:
            raise ValueError(f"{self.name}: halving a goal with an odd count")
        return halved

    def sdk_call(self, registers: dict[str, str], directions: tuple[str, ...] = ()) -> str:
        """The SDK spelling, e.g. `movx(B, A, north)`."""
        return self.sdk.format(**registers, **{f"d{i}": d for i, d in enumerate(directions)})


_EMPTY = Goal()
"""Where a macro's sum starts (`Goal.__add__` returns the other goal, without merging)."""


def _m(name, sdk, results, operands, dirs, terms, expansion, sets, **kw) -> Macro:
    return Macro(
        name=name,
        sdk=sdk,
        results=tuple(results.split()),
        operands=tuple(operands.split()),
        directions=dirs,
        terms=tuple(Term(*t) for t in terms),
        expansion=_bus(expansion),
        sets=frozenset(sets.split()),
        **kw,
    )


BOTH = "basic all"
MACROS: dict[str, Macro] = {
    m.name: m
    for m in [
        _m("res", "res({y})", "y", "", 0, [], "bus(T); bus(y,T)", BOTH, scale=Fraction(0), doc="y := 0"),
        _m("res2", "res({y0}, {y1})", "y0 y1", "", 0, [], "bus(T); bus(y0,T); bus(y1,T)", "all",
           scale=Fraction(0), doc="y0 := y1 := 0"),
        _m("mov", "mov({y}, {x0})", "y", "x0", 0, [(1, 0)], "bus(T,x0); bus(y,T)", BOTH, doc="y := x0"),
        _m("movx", "movx({y}, {x0}, {d0})", "y", "x0", 1, [(1, 0, True)], "bus(Xopp0,x0); bus(y,T)", BOTH,
           doc="y := x0 read from the neighbour on side d0"),
        _m("mov2x", "mov2x({y}, {x0}, {d0}, {d1})", "y", "x0", 2, [(1, 0, True)], "bus(Xopp0,x0); bus(y,X1)",
           "all", doc="y := x0 read from side d0, then from side d1"),
        _m("add", "add({y}, {x0}, {x1})", "y", "x0 x1", 0, [(1, 0), (1, 1)], "bus(T,x0,x1); bus(y,T)", BOTH,
           doc="y := x0 + x1"),
        _m("add3", "add({y}, {x0}, {x1}, {x2})", "y", "x0 x1 x2", 0, [(1, 0), (1, 1), (1, 2)],
           "bus(T,x0,x1,x2); bus(y,T)", "all", doc="y := x0 + x1 + x2"),
        _m("addx", "addx({y}, {x0}, {x1}, {d0})", "y", "x0 x1", 1, [(1, 0, True), (1, 1, True)],
           "bus(Xopp0,x0,x1); bus(y,T)", "all", doc="y := (x0 + x1) read from side d0"),
        _m("add2x", "add2x({y}, {x0}, {x1}, {d0}, {d1})", "y", "x0 x1", 2, [(1, 0, True), (1, 1, True)],
           "bus(Xopp0,x0,x1); bus(y,X1)", "all", doc="y := (x0 + x1) read from side d0, then d1"),
        _m("sub", "sub({y}, {x0}, {x1})", "y", "x0 x1", 0, [(1, 0), (-1, 1)], "bus(T,x0); bus(y,T,x1)", BOTH,
           doc="y := x0 - x1"),
        _m("subx", "subx({y}, {x0}, {d0}, {x1})", "y", "x0 x1", 1, [(1, 0, True), (-1, 1)],
           "bus(Xopp0,x0); bus(y,T,x1)", "all", doc="y := x0 read from side d0, minus x1"),
        _m("sub2x", "sub2x({y}, {x0}, {d0}, {d1}, {x1})", "y", "x0 x1", 2, [(1, 0, True), (-1, 1)],
           "bus(Xopp0,x0); bus(y,X1,x1)", "all", doc="y := x0 read from side d0 then d1, minus x1"),
        _m("neg", "neg({y}, {x0})", "y", "x0", 0, [(-1, 0)], "bus(T); bus(y,T,x0)", BOTH, doc="y := -x0"),
        _m("divq", "divq({y}, {x0})", "y", "x0", 0, [(1, 0)], "bus2(y,T,x0); bus(y,T)", "basic",
           scale=Fraction(1, 2), doc="y := x0 / 2, quick and noisier"),
        _m("div", "div({y}, {s0}, {x0})", "y", "x0", 0, [(1, 0)],
           "bus2(y,s0,x0); bus(T,x0,s0); bus(x0,T,y); bus2(y,s0,x0); bus(y,s0)", "all",
           scale=Fraction(1, 2), scratch=("s0",), doc="y := x0 / 2; x0 is re-formed in place"),
        _m("div4", "div({y}, {s0}, {s1}, {x0})", "y", "x0", 0, [(1, 0)],
           "bus2(y,s0,x0); bus(T,x0,s0); bus(s1,T,y); bus2(y,s0,s1); bus(y,s0)", "all",
           scale=Fraction(1, 2), scratch=("s0", "s1"), doc="y := x0 / 2; x0 only read"),
        _m("diva", "diva({y}, {s0}, {s1})", "y", "x0", 0, [(1, 0)],
           "bus2(s0,s1,y); bus(T,s0,y); bus(y,T,s1); bus2(s0,s1,y); bus(y,s0)", "all",
           scale=Fraction(1, 2), scratch=("s0", "s1"), tied=(("y", "x0"),), clobbers_operands=True,
           doc="y := x0 / 2 in x0's own register"),
    ]
}

INSTRUCTION_SETS: dict[str, frozenset[str]] = {
    s: frozenset(name for name, m in MACROS.items() if s in m.sets) for s in ("basic", "all")
}
"""`basic` is AUKE's instruction set; `all` is Cain's full set."""


def instruction_set(name: str) -> dict[str, Macro]:
    """The macros of an instruction set, by name; a clear error for an unknown set."""
    if name not in INSTRUCTION_SETS:
        raise ValueError(f"unknown instruction set '{name}' (choose from {', '.join(INSTRUCTION_SETS)})")
    return {n: MACROS[n] for n in sorted(INSTRUCTION_SETS[name])}


@dataclass(frozen=True)
class MicroOp:
    """A bus micro-operation on concrete registers (A..F, NEWS, XN, XE, XS, XW)."""

    kind: str
    dests: tuple[str, ...]
    srcs: tuple[str, ...] = field(default=())

    def __str__(self) -> str:
        return f"{self.kind}({', '.join(self.dests + self.srcs)})"


def check_bus(op: MicroOp, registers: Sequence[str] | None = None) -> None:
    """Raise SimulationError unless `op` obeys the bus rules of reference/scamp5.md section 2."""
    if op.kind not in BUS_KINDS:
        raise SimulationError(f"{op}: unknown micro-op (choose from {', '.join(BUS_KINDS)})")
    dests, most = BUS_KINDS[op.kind]
    if len(op.dests) != dests:
        raise SimulationError(f"{op}: {op.kind} writes exactly {dests} destination(s)")
    if len(op.srcs) > most:
        raise SimulationError(f"{op}: {op.kind} reads at most {most} source(s)")
    names = op.dests + op.srcs
    for name in names:
        if registers is not None and name not in registers and name != NEWS and name not in NEIGHBOUR_SIDE:
            raise SimulationError(f"{op}: unknown register {name}")
    for d in op.dests:
        if d in op.srcs:
            raise SimulationError(f"{op}: a destination is never also a source ({d})")
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise SimulationError(f"{op}: a register appears at most once in a micro-op ({', '.join(twice)})")


def expand(macro: Macro, registers: dict[str, str], directions: tuple[str, ...] = ()) -> list[MicroOp]:
    """A macro's bus micro-ops, its roles bound to registers (`registers` maps role -> register)."""
    names = dict(registers)
    names["T"] = NEWS
    for i, d in enumerate(directions):
        names[f"X{i}"] = NEIGHBOUR_NEWS[d]
        names[f"Xopp{i}"] = NEIGHBOUR_NEWS[OPPOSITE[d]]
    return [
        MicroOp(op.kind, tuple(names[r] for r in op.dests), tuple(names[r] for r in op.srcs))
        for op in macro.expansion
    ]
