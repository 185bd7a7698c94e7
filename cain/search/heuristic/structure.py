"""Kernels that are convolutions of small ones: a forward plan as a chain of small steps.

A goal `G` is a polynomial in the shifts `x`, `y` (channel by channel). When `G = (1 + s m) Q` for a shift
`m` one move can apply and a sign `s`, the factor costs a move and an add (or sub), plus a division
when it also halves: a binomial Gaussian of `2^k` is `k` such factors around a single atom. This module
peels such factors off greedily (each must at least halve the atoms left), pairs `(1 + m)^2` into
`m (m^-1 + 2 + m)` (two moves and one three-operand add), and builds the chain's instructions, forward,
after a plan for the remainder `Q 2^h` (`h` the chain's divisions) that the ordinary search finds. The
result is a first plan and a bound for the reverse search, so it never splits a goal of thousands of
atoms atom by atom before it has a plan.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """One link of the chain, applied forward to the value `h` before it: `pair` is `(m^-1 + 2 + m) h`,
    otherwise `(1 + sign m) h`; `halvings` of the input are folded into it (0 to 2 for a pair, 0 or 1)."""

    m: tuple[int, int]
    sign: int
    pair: bool
    halvings: int


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
    shift = [0, 0]
    for m in canon:
        plus = sum(1 for f in found if f == (m, 1))
        for _ in range(plus // 2):
            steps.append(Step(m, 1, True, 0))
            shift[0] += m[0]
            shift[1] += m[1]
        steps += [Step(m, 1, False, 0)] * (plus % 2)
        steps += [Step(m, -1, False, 0)] * sum(1 for f in found if f == (m, -1))
    # divisions folded into the chain: as many as keep the remainder within the input's 2^depth
    peak = max(abs(c) for c in g.values())
    room = sum(2 if s.pair else 1 for s in steps)
    k = 0
    while k < room and peak << (k + 1) <= 1 << depth:
        k += 1
    for i, s in enumerate(steps):
        take = min(k, 2 if s.pair else 1)
        steps[i] = Step(s.m, s.sign, s.pair, take)
        k -= take
    rest = atoms.from_counts(
        {(x + shift[0], y + shift[1], z): c << sum(s.halvings for s in steps) for (x, y, z), c in g.items()}
    )
    return steps, rest


def chain_program(
    plan: Program,
    steps: list[Step],
    macros: set[str],
    division: str,
    moves: dict[tuple[int, int], tuple[str, tuple[str, ...]]],
    centre: int = 0,
) -> Program | None:
    """`plan` (an SSA plan whose first output is the chain's remainder) followed by the chain's
    instructions: the plan of the whole goal, or None when the instruction set lacks a step's macro.
    With a `centre` sign, the plan's second output is the centre term, added (or subtracted) last."""
    instrs = list(plan.instrs)
    nxt = 1 + max([v for v, _ in plan.inputs] + [r for i in instrs for r in i.results])
    (h, reg), *others = plan.outputs

    def emit(macro: str, operands: tuple[int, ...], directions: tuple[str, ...] = ()) -> int:
        nonlocal nxt
        instrs.append(Instr(macro, (nxt,), operands, directions))
        nxt += 1
        return nxt - 1

    for s in steps:
        back = (-s.m[0], -s.m[1])
        if s.m not in moves or (s.pair and back not in moves):
            return None
        if s.pair:
            half = emit(division, (h,)) if s.halvings >= 1 else h
            quarter = emit(division, (half,)) if s.halvings == 2 else half
            east = emit(moves[s.m][0], (quarter,), moves[s.m][1])
            west = emit(moves[back][0], (quarter,), moves[back][1])
            # the centre of (m + 2 + m^-1) at the quarter's scale: twice the quarter
            middle = half if s.halvings == 2 else h if s.halvings == 1 else emit("add", (h, h))
            if "add3" in macros:
                h = emit("add3", (east, west, middle))
            else:
                h = emit("add", (emit("add", (east, west)), middle))
        else:
            base = emit(division, (h,)) if s.halvings else h
            moved = emit(moves[s.m][0], (base,), moves[s.m][1])
            h = emit("add" if s.sign > 0 else "sub", (base, moved))
    if len(others) == 1 and centre:  # the centre term, the plan's second output, joins last
        (c, _), others = others[0], []
        h = emit("add" if centre > 0 else "sub", (h, c))
    if any(i.macro not in macros or i.macro not in MACROS for i in instrs):
        return None
    return Program(plan.name, plan.inputs, instrs, [(h, reg), *others])
