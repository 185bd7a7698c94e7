"""Kernels that are convolutions of small ones: a forward plan as a chain of small steps.

A goal `G` is a polynomial in the shifts `x`, `y` (channel by channel). When `G = (1 + s m) Q` for a shift
`m` one move can apply and a sign `s`, the factor costs a move and an add (one moved difference for
`s = -1`), plus a division when it also halves: a binomial Gaussian of `2^k` is `k` such factors around a
single atom. This module peels such factors off greedily (each must at least halve the atoms left), pairs
`(1 + m)^2` into `m (m^-1 + 2 + m)` (two moves and one three-operand add) and `(1 + m)(1 + m^2)` into
`h + m h + m^2 (h + m h)` (a move, a moved add and a three-operand add: a box of four taps), moves the
steps so that the remainder is nearest the origin, and builds the chain's instructions, forward, after a
plan for the remainder `Q 2^h` (`h` the chain's divisions) that the ordinary search finds. The result is a
first plan and a bound for the reverse search, so it never splits a goal of thousands of atoms atom by atom
before it has a plan.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cain.model.isa import MACROS
from cain.model.program import Instr, Program
from cain.search.goals import atoms
from cain.search.goals.atoms import Atoms

Counts = dict[tuple[int, int, int], int]


def divide(goal: Counts, m: tuple[int, int], sign: int) -> Counts | None:
    """`Q` with `goal = Q + sign * shift(Q, m)` exactly, or None when `1 + sign m` does not divide `goal`."""
    if not goal:
        return None
    dx, dy = m
    xs = [x for x, _, _ in goal]
    ys = [y for _, y, _ in goal]
    zs = sorted({z for _, _, z in goal})
    cells = [(x, y) for x in range(min(xs), max(xs) + 1) for y in range(min(ys), max(ys) + 1)]
    cells.sort(key=lambda p: p[0] * dx + p[1] * dy)
    q: Counts = {}
    for z in zs:
        for x, y in cells:
            c = goal.get((x, y, z), 0) - sign * q.get((x - dx, y - dy, z), 0)
            if c:
                q[(x, y, z)] = c
    product = dict(q)
    for (x, y, z), c in q.items():
        key = (x + dx, y + dy, z)
        product[key] = product.get(key, 0) + sign * c
    if {k: v for k, v in product.items() if v} != goal:
        return None
    return q


@dataclass(frozen=True)
class Step:
    """One link of the chain, applied forward to the value `h` before it: `(1 + sign m) h`, or with `pair`
    `(1 + m)^2 h`, or with `box` `(1 + m)(1 + m^2) h`, each moved by `-lag m` (so the chain's remainder
    is moved by `lag m`: a pair is `(m^-1 + 2 + m) h`, `lag` 1); `halvings` of the input are folded into
    it (0 to 2 for a pair or a box, 0 or 1)."""

    m: tuple[int, int]
    sign: int
    pair: bool
    halvings: int
    box: bool = False
    lag: int = 0

    @property
    def factors(self) -> int:
        return 2 if self.pair or self.box else 1

    @property
    def lags(self) -> range:
        """The lags its instructions can make: a pair's moves are `m` and `m^-1`, `(1 - m)` is one moved
        difference, `m^-1 h - h`, and a box moves `h` and then `h + m h` by `m^2`, each either way; `(1 + m)`
        is `h + m h` (`m^-1 h + h` would do too, but from it the digital search found no plan of a 2x2 box on
        3 bits that fits six data DREGs, `tests/backend/test_digital.py`)."""
        if self.pair or self.sign < 0:
            return range(1, 2)
        return range(4) if self.box else range(1)


def factor_with_centre(goal: Atoms, offsets, depth: int) -> tuple[list[Step], Atoms, Atoms] | None:
    """`factor` of `goal`, or of `goal` less `c` atoms at the origin (a sharpening or a Laplacian is a
    factored blur against the centre): the chain, its remainder and the centre term (empty when none),
    the candidate with the fewest remainder positions, then the smallest remainder."""
    found = factor(goal, offsets, depth)
    best = (len(found[1]), atoms.total(found[1]), 0, found[0], found[1], ()) if found else None
    counts = atoms.counts(goal)
    for z in sorted({z for _, _, z in counts}):
        here = counts.get((0, 0, z), 0)
        for c in sorted({here} | {s << j for j in range(depth + 3) for s in (1, -1)}, key=abs):
            if not c:
                continue
            rest = dict(counts)
            rest[(0, 0, z)] = here - c
            found = factor(atoms.from_counts(rest), offsets, depth)
            if found is None:
                continue
            key = (len(found[1]), atoms.total(found[1]), abs(c).bit_count())
            if best is None or key < best[:3]:
                best = (*key, found[0], found[1], ((0, 0, z, c),))
    return (best[3], best[4], best[5]) if best else None


def factor(goal: Atoms, offsets, depth: int) -> tuple[list[Step], Atoms] | None:
    """The chain of `goal` and its remainder (the goal the chain starts from), or None when no factor
    halves the goal's atoms. `offsets` are the shifts one move applies."""
    g: Counts = atoms.counts(goal)
    if not g:
        return None
    canon = sorted(
        {o for o in offsets if o > (0, 0) and (-o[0], -o[1]) in offsets},
        key=lambda o: (abs(o[0]) + abs(o[1]), o),
    )
    found: list[tuple[tuple[int, int], int]] = []
    while True:
        size = sum(abs(c) for c in g.values())
        best = None
        for m in canon:
            for sign in (1, -1):
                q = divide(g, m, sign)
                if q is None:
                    continue
                n = sum(abs(c) for c in q.values())
                if 2 * n <= size and (best is None or n < best[0]):
                    best = (n, m, sign, q)
        if best is None:
            break
        _, m, sign, g = best
        found.append((m, sign))
    if not found:
        return None
    steps: list[Step] = []
    for m in canon:
        plus = sum(1 for f in found if f == (m, 1))
        steps += [Step(m, 1, True, 0)] * (plus // 2)
        steps += [Step(m, 1, False, 0)] * (plus % 2)
        steps += [Step(m, -1, False, 0)] * sum(1 for f in found if f == (m, -1))
    steps = _lagged(_boxes(steps), g)
    shift = [sum(s.lag * s.m[0] for s in steps), sum(s.lag * s.m[1] for s in steps)]
    # divisions folded into the chain: as many as keep the remainder within the input's 2^depth
    peak = max(abs(c) for c in g.values())
    room = sum(s.factors for s in steps)
    k = 0
    while k < room and peak << (k + 1) <= 1 << depth:
        k += 1
    for i, s in enumerate(steps):
        take = min(k, s.factors)
        steps[i] = replace(s, halvings=take)
        k -= take
    rest = atoms.from_counts(
        {(x + shift[0], y + shift[1], z): c << sum(s.halvings for s in steps) for (x, y, z), c in g.items()}
    )
    return steps, rest


def _boxes(steps: list[Step]) -> list[Step]:
    """`steps` with each single `(1 + m)` and a single `(1 + m^2)` made one box step."""
    out = list(steps)
    for s in steps:
        double = (2 * s.m[0], 2 * s.m[1])
        mate = Step(double, 1, False, 0)
        if s == Step(s.m, 1, False, 0) and s in out and mate in out:
            out[out.index(s)] = replace(s, box=True)
            out.remove(mate)
    return out


def _lagged(steps: list[Step], rest: Counts) -> list[Step]:
    """`steps` with the lags that bring the remainder `rest` (its bounding box's centre) nearest the origin,
    chosen step by step: the remainder the search must find then needs the fewest moves."""
    xs, ys = [x for x, _, _ in rest], [y for _, y, _ in rest]
    at = [(min(xs) + max(xs)) // 2, (min(ys) + max(ys)) // 2]
    out = []
    for s in steps:
        lag = min(s.lags, key=lambda k: (abs(at[0] + k * s.m[0]) + abs(at[1] + k * s.m[1]), k))
        at = [at[0] + lag * s.m[0], at[1] + lag * s.m[1]]
        out.append(replace(s, lag=lag))
    return out


@dataclass(frozen=True)
class ChainForms:
    """The macros a chain is written in, by the offset each applies: `moves` (a move), `sums` (`(a + b)`
    moved: `addx`, `add2x`) and `differences` (`a` moved, less `b`: `subx`, `sub2x`); the division, and every
    macro of the instruction set."""

    moves: dict[tuple[int, int], tuple[str, tuple[str, ...]]]
    sums: dict[tuple[int, int], tuple[str, tuple[str, ...]]]
    differences: dict[tuple[int, int], tuple[str, tuple[str, ...]]]
    division: str
    macros: frozenset[str]

    @classmethod
    def of(cls, space) -> ChainForms:
        """The forms of a `cain.search.goals.space.Space` (fewest directions first)."""
        moves = {o: (f.macro, d) for o, (f, d) in space.shift_offsets.items()}
        by_kind: dict[tuple, dict] = {((1, 1), (True, True)): {}, ((1, -1), (True, False)): {}}
        for f in sorted(space.binary, key=lambda f: len(f.offsets[0][0]), reverse=True):
            kind = by_kind.get((f.signs, f.shifted))
            for d, o in f.offsets if kind is not None else ():
                kind[o] = (f.macro, d)
        sums, differences = by_kind.values()
        return cls(moves, sums, differences, space.division.macro, frozenset(space.macros))


def chain_program(plan: Program, steps: list[Step], forms: ChainForms, centre: int = 0) -> Program | None:
    """`plan` (an SSA plan whose first output is the chain's remainder) followed by the chain's
    instructions: the plan of the whole goal, or None when the instruction set lacks a step's macro.
    With a `centre` sign, the plan's second output is the centre term, added (or subtracted) last; a
    subtracted one joins the last step's last move when a form allows (`subx`: the move's `m h - c`, which
    the step's add then sums). An added one stays an `add` of its own: as an `add3` beside a `1 + m` step's
    two terms it made no suite filter shorter and one longer at bus level (benchmarks/README.md).
    Without the moved forms a box step is two single steps, and `(1 - m)` a move and a `sub`."""
    instrs = list(plan.instrs)
    nxt = 1 + max([v for v, _ in plan.inputs] + [r for i in instrs for r in i.results])
    (h, reg), *others = plan.outputs
    moves, macros = forms.moves, forms.macros
    c = None
    if len(others) == 1 and centre:
        (c, _), others = others[0], []

    def emit(macro: str, operands: tuple[int, ...], directions: tuple[str, ...] = ()) -> int:
        nonlocal nxt
        instrs.append(Instr(macro, (nxt,), operands, directions))
        nxt += 1
        return nxt - 1

    def halve(h: int, times: int) -> int:
        for _ in range(times):
            h = emit(forms.division, (h,))
        return h

    def difference(a: int, m: tuple[int, int], b: int) -> int:
        """`m a - b` by one moved difference (`subx`, `sub2x`)."""
        macro, dirs = forms.differences[m]
        return emit(macro, (a, b), dirs)

    def moved(h: int, m: tuple[int, int], last: bool = False) -> int:
        """`m h`; in the last step, `m h - c` when the centre is subtracted and one form does it."""
        nonlocal c
        if last and c is not None and centre < 0 and m in forms.differences:
            h, c = difference(h, m, c), None
            return h
        return emit(moves[m][0], (h,), moves[m][1])

    def single(h: int, m: tuple[int, int], sign: int, halvings: int, lag: int, last: bool) -> int:
        base = halve(h, halvings)
        if sign > 0:  # (1 + m) base moved by -lag m: base and m base, or m^-1 base and base
            near = (m[0] * (1 - 2 * lag), m[1] * (1 - 2 * lag))
            return emit("add", (base, moved(base, near, last)))
        back = (-m[0], -m[1])
        if back in forms.differences:  # m^-1 base - base = m^-1 (1 - m) base
            return difference(base, back, base)
        return emit("sub", (moved(base, back), base))

    for i, s in enumerate(steps):
        last = i == len(steps) - 1
        back = (-s.m[0], -s.m[1])
        double = (2 * s.m[0], 2 * s.m[1])
        if s.m not in moves or back not in moves:
            return None
        if s.pair:
            half = halve(h, min(s.halvings, 1))
            quarter = halve(half, s.halvings - 1)
            east = moved(quarter, s.m)
            west = moved(quarter, back, last)
            # the centre of (m + 2 + m^-1) at the quarter's scale: twice the quarter
            middle = half if s.halvings == 2 else h if s.halvings == 1 else emit("add", (h, h))
            if "add3" in macros:
                h = emit("add3", (east, west, middle))
            else:
                h = emit("add", (emit("add", (east, west)), middle))
        elif s.box:
            # h, a = m^(+-1) h and b = m^(+-2) (h + a): taps 0..3 moved by -lag (0: +m, +2m; 1: -m, +2m;
            # 2: +m, -2m; 3: -m, -2m)
            near = s.m if s.lag % 2 == 0 else back
            far = double if s.lag < 2 else (-double[0], -double[1])
            if far in forms.sums and "add3" in macros:  # (near is m or its back: both moves)
                base = halve(h, s.halvings)
                a = moved(base, near)
                h = emit("add3", (base, a, emit(forms.sums[far][0], (base, a), forms.sums[far][1])))
            else:  # two single steps: (1 + m) with lag lag % 2, (1 + m^2) with lag lag // 2
                first = min(s.halvings, 1)
                h = single(h, s.m, 1, first, s.lag % 2, False)
                h = single(h, double, 1, s.halvings - first, s.lag // 2, last)
        else:
            h = single(h, s.m, s.sign, s.halvings, s.lag, last)
    if c is not None:  # the centre term, the plan's second output, joins last
        h = emit("add" if centre > 0 else "sub", (h, c))
    if any(i.macro not in macros or i.macro not in MACROS for i in instrs):
        return None
    return Program(plan.name, plan.inputs, instrs, [(h, reg), *others])
