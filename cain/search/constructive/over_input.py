"""The last kernel formed over an input, when the constructive program needs one register more.

When inputs and kernels outnumber the registers by one, once the other kernels are built every register
holds an input or a kernel, so the last kernel `l` has no accumulator of its own: it is formed in the
register of an input channel `c`, by steps in place. That register holds `a = 2^e·c`; moved by `m` and
added the other inputs and the finished kernels `k_j`, moved too (each restored after), it becomes

    k_l = ±m·a + sum_b F_b·b + sum_j g_j·k_j

with integer polynomials `F_b` and `g_j`. So, channel by channel: `l`'s channel-`c` polynomial is ±m·2^e
plus a combination of the others', and each other channel's remainder is a multiple of its input's
scale (docs/search-design.md, "One kernel over the inputs"). The certificate `(±m, g, F)` is found by integer
linear algebra in a window one step past the kernels (python-flint's lattice reduction: without it, none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import lru_cache

from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.program import Program
from cain.search.constructive.builder import Builder, single_moves, tour
from cain.search.constructive.program import candidates, registers_needed

try:
    from flint import fmpz_mat
except ImportError:  # pragma: no cover - python-flint is an optional extra
    fmpz_mat = None

Position = tuple[int, int]
Poly = dict[Position, int]
Polys = tuple[tuple[tuple[tuple[Position, int], ...], ...], ...]
"""Each kernel's polynomial per channel, as sorted `(position, coefficient)` items (hashable)."""

SUB_PROGRAMS = 12
"""Constructive programs of the other kernels tried per last kernel and input scale (the shortest that fit)."""
UNIT_REACH = 2
"""Farthest move `m` of the unit ±m·2^e, in steps (the nearer, the fewer targets to test)."""
WEIGHT = 1 << 40
"""How much more an unmet equation weighs than a certificate's size, in the lattice reduction."""


def applies(filt: Filter, registers: int) -> bool:
    """Whether `filt` is the case this module is for: inputs and kernels outnumber the registers by one."""
    return (
        fmpz_mat is not None
        and len(filt.kernels) > 1
        and len(filt.inputs) + len(filt.kernels) == registers + 1
    )


def _poly(goal: Goal, channel: int) -> Poly:
    return {(x, y): c for (x, y, z), c in goal.items if z == channel}


def _polys(filt: Filter) -> Polys:
    """Each kernel's polynomial per channel."""
    return tuple(
        tuple(tuple(sorted(_poly(k.goal, z).items())) for z in range(len(filt.inputs))) for k in filt.kernels
    )


def _scale(goal: Goal) -> tuple[int, int] | None:
    """`(channel, e)` when `goal` is an input as it is, times 2^e, else None."""
    if len(goal.items) != 1:
        return None
    (x, y, z), count = goal.items[0]
    if (x, y) != (0, 0) or count <= 0 or count & (count - 1):
        return None
    return z, count.bit_length() - 1


def _members(columns: list[list[int]], targets: list[list[int]]) -> list[bool]:
    """Which `targets` are integer combinations of `columns`: a lattice reduction gives a basis with small
    numbers, whose coordinates of each target, solved on independent positions, must be integers and
    give the target on every position."""
    basis = [[int(v) for v in row] for row in fmpz_mat(columns).lll().tolist() if any(row)]
    if not basis:
        return [not any(t) for t in targets]
    echelon = fmpz_mat(basis).rref()[0]
    pivots = [next(c for c in range(echelon.ncols()) if echelon[i, c]) for i in range(len(basis))]
    square = fmpz_mat([[row[c] for c in pivots] for row in basis]).transpose()
    solved = square.solve(fmpz_mat([[t[c] for c in pivots] for t in targets]).transpose())
    found = []
    for k, target in enumerate(targets):
        x = [solved[i, k] for i in range(len(basis))]
        if any(v.q != 1 for v in x):
            found.append(False)
            continue
        x = [int(v.p) for v in x]
        found.append(
            all(sum(x[i] * basis[i][c] for i in range(len(basis))) == t for c, t in enumerate(target))
        )
    return found


def _box(P: list[list[Poly]]) -> list[Position]:
    """The positions a certificate's `g` and unit `m` may take: one step past the kernels' extent."""
    r = 1 + max(max(abs(x), abs(y)) for kernel in P for poly in kernel for x, y in poly)
    return [(x, y) for x in range(-r, r + 1) for y in range(-r, r + 1)]


def _system(P: list[list[Poly]], last: int, channel: int, scale: int | None):
    """A certificate's linear equations, one per channel and position: the unknowns (`("g", j, w)`: g[j]
    at position w; `("F", b, p)`), their columns, each equation's row, and the right-hand side `P[last]`
    before the unit is taken off. `scale` None: channel `channel`'s equations alone (`scales`)."""
    box = _box(P)
    others = [j for j in range(len(P)) if j != last]
    unknowns = [("g", j, w) for j in others for w in box]
    rows: list[tuple[int, Position]] = []
    for b in [channel] if scale is None else range(len(P[last])):
        positions = {(w[0] + px, w[1] + py) for j in others for w in box for px, py in P[j][b]}
        positions |= set(P[last][b]) | (set(box) if b == channel else set())
        rows += [(b, p) for p in sorted(positions)]
        if b != channel:
            unknowns += [("F", b, p) for p in sorted(positions)]
    index = {row: i for i, row in enumerate(rows)}
    columns = []
    for kind, j, w in unknowns:
        column = [0] * len(rows)
        if kind == "g":
            for b, poly in enumerate(P[j]):
                for (px, py), c in poly.items():
                    if (b, (w[0] + px, w[1] + py)) in index:
                        column[index[(b, (w[0] + px, w[1] + py))]] += c
        else:
            column[index[(j, w)]] = 2**scale
        columns.append(column)
    base = [0] * len(rows)
    for b, poly in enumerate(P[last]):
        for p, c in poly.items():
            if (b, p) in index:
                base[index[(b, p)]] += c
    return unknowns, columns, index, base


def _units(P: list[list[Poly]], channel: int, index: dict, base: list[int], exponents: range):
    """Each unit `(e, sign, m)` for `exponents` (nearest `m` and `+` first), and the right-hand side with
    it taken off."""
    units = sorted(
        (
            (e, s, m)
            for e in exponents
            for s in (1, -1)
            for m in _box(P)
            if abs(m[0]) + abs(m[1]) <= UNIT_REACH
        ),
        key=lambda u: (abs(u[2][0]) + abs(u[2][1]), u[1] < 0, u[2], u[0]),
    )
    targets = []
    for e, s, m in units:
        target = list(base)
        target[index[(channel, m)]] -= s * 2**e
        targets.append(target)
    return units, targets


@lru_cache(maxsize=256)
def scales(polys: Polys, last: int, channel: int, depth: int) -> frozenset[int]:
    """The scales `e` (0 to `depth`) at which channel `channel` alone admits a certificate: `polys[last]`'s
    polynomial is ±m·2^e plus a combination of the others' (a quick screen: the other channels are
    checked by `certificate`)."""
    P = [[dict(p) for p in kernel] for kernel in polys]
    if not any(p for kernel in P for p in kernel):
        return frozenset()
    _, columns, index, base = _system(P, last, channel, None)
    units, targets = _units(P, channel, index, base, range(depth + 1))
    return frozenset(e for (e, _, _), ok in zip(units, _members(columns, targets), strict=True) if ok)


@lru_cache(maxsize=256)
def certificate(
    polys: Polys, last: int, channel: int, scale: int
) -> tuple[int, Position, dict[int, Poly], dict[int, Poly]] | None:
    """`(sign, m, g, F)` with `polys[last][channel] = sign·m·2^scale + sum_j g[j]·polys[j][channel]` and,
    for every other channel `b`, `polys[last][b] - sum_j g[j]·polys[j][b] = 2^scale·F[b]`, all integer
    polynomials, `g` moved at most one step past the kernels; short (a lattice reduction), or None."""
    P = [[dict(p) for p in kernel] for kernel in polys]
    if not any(p for kernel in P for p in kernel):
        return None
    unknowns, columns, index, base = _system(P, last, channel, scale)
    units, targets = _units(P, channel, index, base, range(scale, scale + 1))
    for (_, sign, m), target, member in zip(units, targets, _members(columns, targets), strict=True):
        if not member:
            continue
        # the shortest solution: Kannan's embedding, the equations weighed far above the unknowns
        n, size = len(unknowns), len(target)
        basis = [
            [WEIGHT * v for v in col] + [int(i == k) for k in range(n)] + [0] for i, col in enumerate(columns)
        ]
        basis.append([WEIGHT * v for v in target] + [0] * n + [1])
        for vector in fmpz_mat(basis).lll().tolist():
            vector = [int(v) for v in vector]
            if not any(vector[:size]) and abs(vector[-1]) == 1:
                g: dict[int, Poly] = {j: {} for j in range(len(P)) if j != last}
                F: dict[int, Poly] = {b: {} for b in range(len(P[last])) if b != channel}
                for (kind, j, w), v in zip(unknowns, vector[size : size + n], strict=True):
                    if v:
                        (g if kind == "g" else F)[j][w] = -vector[-1] * v
                return sign, m, g, F
    return None


def _add_moved(b: Builder, acc: int, value: int, poly: Poly, restore: bool) -> tuple[int, int]:
    """`acc` plus `value` moved to each position of `poly`, its count times (in place: `value` walks and,
    when `restore`, walks back); the new `acc` and `value`."""
    here = (0, 0)
    for p in tour(tuple(sorted(poly)), None, False):
        for d in single_moves(p[0] - here[0], p[1] - here[1]):
            value = b.op("movx", (value,), (d,))
        here = p
        for _ in range(abs(poly[p])):
            acc = b.op("add" if poly[p] > 0 else "sub", (acc, value))
    if restore:
        for d in single_moves(-here[0], -here[1]):
            value = b.op("movx", (value,), (d,))
    return acc, value


def _values(sub: Program) -> list[int]:
    """Every value `sub` defines, its inputs first, in order."""
    return [v for v, _ in sub.inputs] + [r for i in sub.instrs for r in i.results]


def _inputs(sub: Program, depth: int, channels: int) -> tuple[list[int], int] | None:
    """The last value of `sub` that is each input as it is, and their common scale `e` (each is the
    input times 2^e); None when there is no such value, or the scales differ."""
    values = sub.evaluate([Goal.identity(2**depth, z) for z in range(channels)])
    latest: dict[int, tuple[int, int]] = {}
    for v in _values(sub):
        if (found := _scale(values[v])) is not None:
            latest[found[0]] = (v, found[1])
    scales = {e for _, e in latest.values()}
    if len(latest) < channels or len(scales) != 1:
        return None
    return [latest[z][0] for z in range(channels)], scales.pop()


def formed_over(
    sub: Program, inputs: list[int], scale: int, filt: Filter, polys: Polys, last: int, set_name: str
) -> Iterator[Program]:
    """`sub` (the other kernels' constructive program, its inputs ending as the values `inputs`, times
    2^scale) followed by kernel `last` formed in place over each input channel whose certificate exists
    (`polys`: `filt`'s, from `_polys`)."""
    kernels = [k for k in range(len(filt.kernels)) if k != last]
    outputs = dict(zip(kernels, (v for v, _ in sub.outputs), strict=True))
    for channel in range(len(filt.inputs)):
        if scale not in scales(polys, last, channel, filt.depth):
            continue
        found = certificate(polys, last, channel, scale)
        if found is None:
            continue
        sign, m, g, F = found
        b = Builder(set_name, 1 + max(_values(sub)))
        done = dict(outputs)
        acc = inputs[channel]
        if sign < 0:  # a kernel's register and the input's swap, the input negated: k - a, k, -a
            j = kernels[0]
            moved = b.op("sub", (done[j], acc))
            done[j] = b.op("add", (acc, moved))
            acc = b.op("sub", (moved, done[j]))
        for d in single_moves(*m):
            acc = b.op("movx", (acc,), (d,))
        for z, poly in F.items():
            acc, _ = _add_moved(b, acc, inputs[z], poly, restore=False)
        for j, poly in g.items():
            if poly:
                acc, done[j] = _add_moved(b, acc, done[j], poly, restore=True)
        done[last] = acc
        yield Program(
            filt.name,
            sub.inputs,
            [*sub.instrs, *b.instrs],
            [(done[k], kernel.register) for k, kernel in enumerate(filt.kernels)],
        )


def programs(
    filt: Filter, set_name: str, registers: int, stop: Callable[[], bool] | None = None
) -> list[Program]:
    """Programs forming each kernel in turn over an input, after the others' shortest constructive
    programs (at each scale of the inputs they end with), that need no more than `registers` registers;
    shortest first."""
    out = []
    channels = len(filt.inputs)
    polys = _polys(filt)
    for last in range(len(filt.kernels)):
        if stop is not None and stop():
            break
        possible = set().union(*(scales(polys, last, z, filt.depth) for z in range(channels)))
        if not possible:
            continue
        sub_filter = replace(filt, kernels=tuple(k for i, k in enumerate(filt.kernels) if i != last))
        tried: dict[int, int] = {}
        for sub in candidates(sub_filter, set_name, stop=stop, registers=registers):
            if stop is not None and stop():
                break
            if registers_needed(sub) > registers or (ends := _inputs(sub, filt.depth, channels)) is None:
                continue
            inputs, scale = ends
            if scale not in possible or tried.get(scale, 0) >= SUB_PROGRAMS:
                continue
            tried[scale] = tried.get(scale, 0) + 1
            made = formed_over(sub, inputs, scale, filt, polys, last, set_name)
            out.extend(p for p in made if registers_needed(p) <= registers)
    out.sort(key=lambda p: p.macros)
    return out
