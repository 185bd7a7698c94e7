"""A constructive program for any filter, for when the search has none (or a longer one).

Each kernel is built on its own in one accumulator register by Horner's rule over the binary digits of
its counts (non-adjacent form, so a run of ones costs two digits): from the lowest digit up, the
accumulator walks a short tour over the positions whose count has a digit at that level, adding or
subtracting the input as it passes them, and is halved before the next level. The last tour ends at the
origin, so everything added lands in place; the tours before it either return there too or leave the
accumulator where they end, the next tour starting from there (both are tried). With the `all` set an
add and the move after it (or a move and the subtraction after it) are one macro.

Which registers this needs depends on when the input is halved: dividing the accumulator needs the input
and every finished kernel to stay live beside it (and a scratch register with `all`), so when registers
are short the input itself is halved first, in place, and the later kernels add halved copies several
times instead of dividing. The values one to three halvings before the last (re-formed in place by the
division) may be kept beside it, so a count is added over `u`, `2u`, `4u`, `8u` (seven is two adds, not
seven), by every kernel after the halving or with one copy fewer at each kernel (its register then holds
the next). A kernel may add one built before it (or given as a base: a value already computed), moved,
and build only the difference; or two kernels in a row add their common part once, into an accumulator
both go on from. `shortest_constructive` tries the kernel orders and the points to halve the input,
shortest first, and returns the first program that allocates and verifies.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from functools import cache, lru_cache

from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import MACROS
from cain.model.program import Instr, Program
from cain.search.allocate import allocated
from cain.search.constructive.builder import Builder, Position, single_moves, tour

Bases = tuple[tuple[str, Goal], ...]
"""Values already computed, as (register, goal): extra inputs a constructive program may read and keeps."""
Terms = dict[Position, list[tuple[int, int]]]
"""For each position, the `(channel, signed multiplicity)` terms of the sources to add there."""


@cache
def naf(c: int) -> tuple[int, ...]:
    """The non-adjacent form of `c`: digits in {-1, 0, 1}, lowest first, no two adjacent non-zero."""
    digits = []
    while c:
        if c & 1:
            d = 2 - (c % 4)
            c -= d
        else:
            d = 0
        digits.append(d)
        c //= 2
    return tuple(digits)


def registers_needed(program: Program) -> int:
    """A quick lower bound on the registers `program` needs: at each instruction, the values live across
    it, its operands, a register for its result unless an operand dies there, and its scratch registers
    (a division with `all`'s `div` keeps three registers busy)."""
    last = program.last_uses()
    live = sum(1 for v, _ in program.inputs if v in last)  # values made before and read from here on
    need = live
    for i, instr in enumerate(program.instrs):
        ends = {o for o in instr.operands if last[o] == i}
        used = sum(1 for r in instr.results if last.get(r, -1) > i)
        extra, change = _pressure(instr.macro, instr.operands, ends, used)
        need = max(need, live + extra)  # its operands are live already
        live += change
    return need


def _pressure(macro: str, operands: tuple, ends: set, used: int) -> tuple[int, int]:
    """One instruction's registers above the values live before it (a register for its result unless an
    operand it may share dies there, and its scratch registers) and the change in live values: `ends`,
    the operands read for the last time here; `used`, how many of its results are read after."""
    dies = any(o in ends for k, o in enumerate(operands) if k in _shares(macro))
    return len(MACROS[macro].scratch) + (0 if dies else 1), used - len(ends)


def _traced_registers(trace: list[tuple], first: int, outputs: list[int], fused: bool) -> int | None:
    """`registers_needed` of the program a counting `Builder` traced (values below `first` its inputs), found
    without building it: a walk counts as one step whose pressure inside depends only on its steps, which
    of its operands die in it and whether its result is used after (`_walk_pressure`, cached). None when
    a walk reads one value under two names (then only the program built can tell). Its last-use table is
    over the trace's items, not a program's instructions (`Program.last_uses`): there is no program yet."""
    last: dict[int, int] = {}
    walks: list[tuple | None] = []
    for i, item in enumerate(trace):
        if len(item) == 3:  # an instruction: (macro, operands, directions)
            operands = item[1]
            walks.append(None)
        else:  # a walk: (key, here, final, acc, sources)
            key, here, final, acc, sources = item
            steps, _ = _walk_steps(key, here, final, fused, acc is None)
            refs = _walk_refs(steps)
            operands = tuple(acc if r is None else sources[r[1]] for r in refs)
            walks.append((steps, refs, operands))
        for o in operands:
            last[o] = i
    n = len(trace)
    for v in outputs:
        last[v] = n
    live = sum(1 for v in range(first) if v in last)
    need = live
    value = first
    for i, item in enumerate(trace):
        walk = walks[i]
        if walk is None:
            macro, operands, _ = item
            ends = {o for o in operands if last[o] == i}
            extra, change = _pressure(macro, operands, ends, last.get(value, -1) > i)
            need = max(need, live + extra)
            live += change
            value += 1
            continue
        steps, refs, operands = walk
        if not steps:
            continue
        if len(set(operands)) < len(operands):
            return None  # one value read under two names: the pressure is not the steps' alone
        dying = frozenset(r for r, o in zip(refs, operands, strict=True) if last[o] == i)
        value += len(steps)
        peak, change = _walk_pressure(steps, dying, last.get(value - 1, -1) > i)
        need = max(need, live + peak)
        live += change
    return need


@lru_cache(maxsize=65536)
def _walk_refs(steps: tuple[Step, ...]) -> tuple[tuple[str, int] | None, ...]:
    """The operands a walk reads from outside it (None: the accumulator it starts from; `("s", z)`: source
    `z`), in order of first use."""
    return tuple(dict.fromkeys(r for _, refs, _ in steps for r in refs if r is None or r[0] == "s"))


@lru_cache(maxsize=65536)
def _walk_pressure(steps: tuple[Step, ...], dying: frozenset, used_after: bool) -> tuple[int, int]:
    """A walk's peak register pressure and its change in live values, both counted from the values live
    before it: `dying` are the outside operands read for the last time in it, `used_after` whether its
    result is (`registers_needed`, instruction by instruction). Its last-use table is over the walk's
    steps, whose operands are references (`_walk_refs`), not a program's values."""
    last = {}
    for t, (_, refs, _) in enumerate(steps):
        for r in refs:
            last[r] = t
    live = peak = 0
    for t, (macro, refs, _) in enumerate(steps):
        ends = {r for r in refs if last[r] == t and (r is not None and r[0] == "v" or r in dying)}
        used = ("v", t) in last or (t == len(steps) - 1 and used_after)
        extra, change = _pressure(macro, refs, ends, used)
        peak = max(peak, live + extra)
        live += change
    return peak, live


@cache
def _shares(name: str) -> frozenset[int]:
    """The operand indices of macro `name` whose register its result may take."""
    m = MACROS[name]
    distinct = set(m.distinct_roles)
    y = m.results[0] if m.results else None
    return frozenset(
        k for k, role in enumerate(m.operands) if y and (min(y, role), max(y, role)) not in distinct
    )


def _walk(
    b: Builder,
    acc: int | None,
    terms: Terms,
    sources: list[int],
    here: Position | None,
    final: bool,
) -> tuple[int | None, Position | None]:
    """`acc` (None: nothing yet) plus, for each position, its `(channel, signed multiplicity)` terms of the
    sources moved there, and where the walk ends. `here` is how far the accumulator still has to move
    back: an atom added when the walk stands at `p` is moved by `p` before the end, where it stands at the
    origin (`final`); a walk that is not final ends at its last position, and the next starts there."""
    key = tuple((p, tuple(ts)) for p, ts in sorted(terms.items()))
    steps, end = _walk_steps(key, here, final, b.all, acc is None)
    if b.count:
        b.trace.append((key, here, final, acc, tuple(sources)))
        b.next += len(steps)
        return (b.next - 1 if steps else acc), end
    first = b.next  # the walk's own i-th result is value first + i
    for macro, refs, directions in steps:
        operands = tuple(acc if r is None else sources[r[1]] if r[0] == "s" else first + r[1] for r in refs)
        b.op(macro, operands, directions)
    return (b.next - 1 if steps else acc), end


Step = tuple[str, tuple[tuple[str, int] | None, ...], tuple[str, ...]]
"""One instruction of a walk: its macro, its operands (None: the accumulator it starts from; `("s", z)`:
source `z`; `("v", i)`: the walk's own `i`-th result) and its directions."""


@lru_cache(maxsize=65536)
def _walk_steps(
    key: tuple[tuple[Position, tuple[tuple[int, int], ...]], ...],
    here: Position | None,
    final: bool,
    fused: bool,
    empty: bool,
) -> tuple[tuple[Step, ...], Position | None]:
    """`_walk`'s instructions for the terms `key` (sorted), with the `all` set's fused moves when `fused`
    and no accumulator yet when `empty`, and where it ends. Cached: the candidates walk the same terms
    many times over."""
    terms = {p: list(ts) for p, ts in key}
    instrs: list[Instr] = []

    def op(macro: str, operands: tuple[int, ...], directions: tuple[str, ...] = ()) -> int:
        instrs.append(Instr(macro, (len(instrs),), operands, directions))
        return len(instrs) - 1

    acc: int | None = None if empty else -1
    sources = [-2 - z for z in range(1 + max((z for ts in terms.values() for z, _ in ts), default=0))]
    if not terms and not (final and here not in (None, (0, 0))):
        return (), here
    path = tour(tuple(sorted(terms)), here, final)
    tokens = _tokens(terms, path, final)
    pending: int | None = None  # the accumulator is still this source, unchanged (no instruction yet)
    i = 0
    while i < len(tokens):
        t = tokens[i]
        moves = []
        j = i + 1
        while j < len(tokens) and tokens[j][0] == "move" and len(moves) < (2 if fused else 1):
            moves.append(tokens[j][1])
            j += 1
        if t[0] == "add":
            _, z, sign = t
            src = sources[z]
            if acc is None and pending is None:
                if sign > 0:
                    pending = src
                else:
                    acc = op("neg", (src,))
                i += 1
                continue
            if pending is not None:
                acc, pending = pending, None
                if sign > 0 and fused and moves:
                    acc = op("addx" if len(moves) == 1 else "add2x", (acc, src), tuple(moves))
                    i = j
                    continue
                acc = op("add" if sign > 0 else "sub", (acc, src))
            elif sign > 0 and fused and moves:
                acc = op("addx" if len(moves) == 1 else "add2x", (acc, src), tuple(moves))
                i = j
                continue
            else:
                acc = op("add" if sign > 0 else "sub", (acc, src))
            i += 1
            continue
        # a run of moves, fused with a subtraction that follows it (all set)
        moves = [t[1]]
        j = i + 1
        while j < len(tokens) and tokens[j][0] == "move" and len(moves) < (2 if fused else 1):
            moves.append(tokens[j][1])
            j += 1
        base = pending if pending is not None else acc
        pending = None
        nxt = tokens[j] if j < len(tokens) else None
        if fused and nxt is not None and nxt[0] == "add" and nxt[2] < 0:
            acc = op("subx" if len(moves) == 1 else "sub2x", (base, sources[nxt[1]]), tuple(moves))
            i = j + 1
            continue
        acc = op("movx" if len(moves) == 1 else "mov2x", (base,), tuple(moves))
        i = j
    if pending is not None:
        acc = op("mov", (pending,))

    def ref(v: int) -> tuple[str, int] | None:
        return None if v == -1 else ("s", -2 - v) if v < 0 else ("v", v)

    steps = tuple((i.macro, tuple(ref(o) for o in i.operands), i.directions) for i in instrs)
    return steps, ((0, 0) if final else path[-1])


def _tokens(terms: Terms, path: tuple[Position, ...], final: bool) -> list[tuple]:
    """A walk along `path` as tokens: `("add", channel, sign)` for each source added where the walk stands
    (the accumulator is moved back by the moves after it), `("move", direction)` for each step."""
    tokens: list[tuple] = []
    for i, p in enumerate(path):
        for z, n in terms.get(p, ()):
            tokens += [("add", z, 1 if n > 0 else -1)] * abs(n)
        nxt = path[i + 1] if i + 1 < len(path) else ((0, 0) if final else p)
        tokens += [("move", d) for d in single_moves(p[0] - nxt[0], p[1] - nxt[1])]
    return tokens


def _levels(goal: Goal, e: int) -> tuple[list[Terms], Terms]:
    """A kernel's digits over sources holding `2^e` atoms: the terms of each level below `e` (lowest
    first, from the lowest non-empty one) and the terms at and above `e`, as multiplicities. A fresh copy,
    for the caller to extend."""
    low, top = _digits(goal, e)
    return [{p: list(ts) for p, ts in level.items()} for level in low], {p: list(ts) for p, ts in top.items()}


@lru_cache(maxsize=4096)
def _digits(goal: Goal, e: int) -> tuple[list[Terms], Terms]:
    """`_levels`, cached (every candidate program asks again); not to be changed."""
    low: dict[int, Terms] = {}
    top: Terms = {}
    for (x, y, z), c in goal.items:
        mult = 0
        for j, digit in enumerate(naf(c)):
            if not digit:
                continue
            if j < e:
                low.setdefault(j, {}).setdefault((x, y), []).append((z, digit))
            else:
                mult += digit << (j - e)
        if mult:
            top.setdefault((x, y), []).append((z, mult))
    if not low:
        return [], top
    first = min(low)
    return [low.get(j, {}) for j in range(first, e)], top


def _high_levels(goal, e: int) -> list[Terms]:
    """A kernel's digits at and above `e` over sources holding `2^e` atoms, as the terms of each level,
    highest first (for Horner's rule by doubling)."""
    levels: dict[int, Terms] = {}
    for (x, y, z), c in goal.items:
        for j, digit in enumerate(naf(c)):
            if digit and j >= e:
                levels.setdefault(j, {}).setdefault((x, y), []).append((z, digit))
    return [levels.get(j, {}) for j in range(max(levels), e - 1, -1)] if levels else []


def constructive(
    filt: Filter,
    set_name: str,
    order: list[int],
    split: int,
    halvings: int,
    floating: bool = True,
    doubling: bool = False,
    sharing: bool = False,
    bases: Bases = (),
    copies: tuple[int, ...] = (),
    staircase: bool = False,
) -> Program | None:
    """The SSA program computing `filt`'s kernels in `order`, the first `split` from the inputs as they
    are, the rest after every input has been halved `halvings` times; None when the instruction set
    lacks a division the program needs. `floating`: each level's walk starts where the last one ended
    (else every walk returns to the origin; either can be the shorter). `doubling`: a kernel with no
    digit below the sources' level is built by Horner's rule from its highest digit down, the accumulator
    doubled (a copy and an add, one scratch register) between levels, instead of adding each source as
    many times as its count. `sharing`: a kernel adds the one built before it, moved, that leaves the
    least to build (`_from_earlier`; with `doubling`, the rest is built by doubling), or, with no digit
    below the sources' level and without `doubling`, adds its common part with the next kernel once, in
    an accumulator both go on from (`_common`), whichever saves more.
    `bases`: values already computed (register, goal), extra inputs kept to the end, that count as built
    before. `copies`: after the halvings, each input's values that many halvings before the last (re-formed
    in place by the division) are kept too, and the counts added once per unit are split over them
    (`_over`), so a count of 7 over `u` and `8u` is two adds, not seven; with `staircase` each
    kernel after the first keeps one copy fewer (the largest), its register free for the next."""
    channels = len(filt.inputs)
    b = Builder(set_name, channels + len(bases))
    results = _build(b, filt, order, split, halvings, floating, doubling, sharing, bases, copies, staircase)
    if results is None:
        return None
    kept = [(channels + i, reg) for i, (reg, _) in enumerate(bases)]
    return Program(
        filt.name,
        [(z, reg) for z, (_, reg) in enumerate(filt.inputs)] + kept,
        b.instrs,
        [(results[k], kern.register) for k, kern in enumerate(filt.kernels)] + kept,
    )


def _build(
    b: Builder,
    filt: Filter,
    order: list[int],
    split: int,
    halvings: int,
    floating: bool,
    doubling: bool,
    sharing: bool,
    bases: Bases,
    copies: tuple[int, ...],
    staircase: bool,
) -> dict[int, int] | None:
    """`constructive`'s instructions, into `b`: the value holding each kernel, or None as there."""
    channels = len(filt.inputs)
    sources = list(range(channels))
    chain: list[list[int]] = []  # after the split: each input's value after each halving
    results: dict[int, int] = {}
    goals = {k: kernel.goal for k, kernel in enumerate(filt.kernels)}
    goals.update({-1 - i: goal for i, (_, goal) in enumerate(bases)})
    results.update({-1 - i: channels + i for i in range(len(bases))})
    shared: dict[int, tuple[int | None, Position | None, Terms]] = {}  # kernel -> its start, its rest
    for n, k in enumerate(order):
        if n == split and halvings:
            if b.divide is None:
                return None
            chain = [sources]
            for _ in range(halvings):
                chain.append([b.half(s) for s in chain[-1]])
            sources = chain[-1]
        kept = _kept_input(filt, k)
        if kept is not None:  # an input held in its own register for later: nothing to compute
            results[k] = kept
            continue
        e = filt.depth - (halvings if n >= split else 0)
        low, top = _levels(filt.kernels[k].goal, e)
        kept_copies = copies[: max(len(copies) - (n - split if staircase else 0), 0)] if chain else ()
        if low and b.divide is None:
            return None
        acc, here, srcs, saved = None, None, sources, 0
        if k in shared:
            acc, here, top = shared.pop(k)
        elif sharing:
            built = [-1 - i for i in range(len(bases))] + list(order[:n])
            doubled = doubling and not low
            saved, i, offset, rest = _from_earlier(
                filt.kernels[k].goal, tuple(goals[j] for j in built), e, doubled
            )
            partner = order[n + 1] if n + 1 < len(order) else None
            e_next = filt.depth - (halvings if n + 1 >= split else 0)
            common_ok = not doubling and not low and partner is not None and e_next == e
            if common_ok and _kept_input(filt, partner) is None:
                low_next, top_next = _levels(filt.kernels[partner].goal, e)
                if not low_next and (common := _common(top, top_next))[0] > saved:
                    _, part, shift, top, after = common
                    acc, here = _walk(b, None, part, sources, None, final=False)
                    shared[partner] = acc, None if here is None else (here[0] + shift[0], here[1] + shift[1]), after
                    saved = 0
            if saved > 0:  # the rest by Horner's rule, and the earlier kernel added, moved, in the last walk
                low, top = _levels(rest, e)
                top.setdefault(offset, []).append((len(sources), 1))
                srcs = [*sources, results[built[i]]]
        if doubling and not low and not kept_copies:
            levels = _high_levels(rest if saved > 0 else filt.kernels[k].goal, e) or [{}]
            if saved > 0:
                levels[-1].setdefault(offset, []).append((len(sources), 1))
            acc = _doubled(b, acc, levels, srcs, here, floating)
        else:
            copied: list[int] = []
            if kept_copies:
                top = _over(top, channels, kept_copies, len(srcs))
                copied = [v for level in kept_copies for v in chain[-1 - level]]
            acc = _halved(b, acc, low, top, srcs, copied, here, floating)
        if acc is None:
            acc = b.op("res", ())
        results[k] = acc
    return results


def _doubled(
    b: Builder, acc: int | None, levels: list[Terms], srcs: list[int], here: Position | None, floating: bool
) -> int | None:
    """Horner's rule from the highest level down: each level's walk, the accumulator doubled (a copy and an
    add) before each level after the first; the accumulator after the last."""
    for j, terms in enumerate(levels):
        if acc is not None:
            acc = b.op("add", (acc, b.op("mov", (acc,))))
        acc, here = _walk(b, acc, terms, srcs, here, final=not floating or j == len(levels) - 1)
    return acc


def _halved(
    b: Builder,
    acc: int | None,
    low: list[Terms],
    top: Terms,
    srcs: list[int],
    copied: list[int],
    here: Position | None,
    floating: bool,
) -> int | None:
    """Horner's rule from the lowest level up: each level's walk, the accumulator halved after it, then the
    walk of the levels at and above the sources' over `srcs` and the `copied` inputs; the accumulator."""
    for terms in low:
        acc, here = _walk(b, acc, terms, srcs, here, final=not floating)
        acc = b.half(acc)
    acc, _ = _walk(b, acc, top, [*srcs, *copied], here, final=True)
    return acc


def _over(terms: Terms, channels: int, levels: tuple[int, ...], first: int) -> Terms:
    """`terms` with each input's multiplicity split over the input and its copies `2^j` times larger, `j`
    in `levels` (the copy of level `levels[i]` of input `z` is source `first + i * channels + z`), with the
    fewest units."""
    out: Terms = {}
    for p, ts in terms.items():
        for z, n in ts:
            if z >= channels:
                out.setdefault(p, []).append((z, n))
                continue
            for i, d in enumerate(_split(n, (0, *levels))):
                if d:
                    out.setdefault(p, []).append((z if i == 0 else first + (i - 1) * channels + z, d))
    return out


@cache
def _split(n: int, levels: tuple[int, ...]) -> tuple[int, ...]:
    """Digits `d` with `sum(d[i] << levels[i]) == n` and the fewest units `sum(|d|)`: each digit below the
    top one is the remainder modulo the next level's step, either sign."""
    if len(levels) == 1:
        return (n >> levels[0],)
    step = 1 << (levels[1] - levels[0])
    r = (n >> levels[0]) % step
    best = None
    for d in (r, r - step) if r else (0,):
        rest = _split(n - (d << levels[0]), levels[1:])
        if best is None or abs(d) + sum(map(abs, rest)) < sum(map(abs, best)):
            best = (d, *rest)
    return best


Counts = dict[tuple[Position, int], int]
"""Terms as one signed multiplicity per (position, channel)."""

_OFFSETS = [(dx, dy) for dx in range(-2, 3) for dy in range(-2, 3) if abs(dx) + abs(dy) <= 2]
"""The offsets, within two steps, by which one kernel's counts are matched against another's."""


def _counts(terms: Terms) -> Counts:
    return {(p, z): n for p, ts in terms.items() for z, n in ts}


def _terms(counts: Counts) -> Terms:
    out: Terms = {}
    for (p, z), n in sorted(counts.items()):
        if n:
            out.setdefault(p, []).append((z, n))
    return out


def _moved(counts: Counts, d: Position) -> Counts:
    return {((p[0] + d[0], p[1] + d[1]), z): n for (p, z), n in counts.items()}


def _minus(a: Counts, b: Counts) -> Counts:
    return {key: a.get(key, 0) - b.get(key, 0) for key in a.keys() | b.keys()}


def _size(counts: Counts) -> int:
    """How many sources adding `counts` takes, one per unit."""
    return sum(abs(n) for n in counts.values())


def _common(a: Terms, b: Terms) -> tuple[int, Terms, Position, Terms, Terms]:
    """The largest common part of two kernels' terms, `b`'s moved by the offset that makes it largest:
    (its size, the common part, the offset, what `a` adds after it, what `b` adds after it)."""
    counts_a, counts_b = _counts(a), _counts(b)

    def common(d: Position) -> Counts:
        moved_b = _moved(counts_b, (-d[0], -d[1]))
        return {
            key: min(n, m) if n > 0 else max(n, m)
            for key, n in counts_a.items()
            if n * (m := moved_b.get(key, 0)) > 0
        }

    d = max(_OFFSETS, key=lambda d: (_size(common(d)), -abs(d[0]) - abs(d[1]), d))
    part = common(d)
    return _size(part), _terms(part), d, _terms(_minus(counts_a, part)), _terms(_minus(counts_b, _moved(part, d)))


def _cost(goal: Goal, e: int, doubling: bool = False) -> int:
    """About how many instructions Horner's rule takes for `goal` over sources holding `2^e` atoms: an
    add per digit below `e`, a division per level, and an add per source at and above it; `doubling`: an
    add per digit at and above `e`, and a copy and an add per level."""
    if doubling:
        if _levels(goal, e)[0]:
            return 1 << 30  # digits below the sources' level: not by doubling
        levels = _high_levels(goal, e)
        return sum(len(ts) for level in levels for ts in level.values()) + 2 * max(len(levels) - 1, 0)
    low, top = _levels(goal, e)
    digits = sum(len(ts) for level in low for ts in level.values())
    return digits + len(low) + _size(_counts(top))


@lru_cache(maxsize=4096)
def _from_earlier(
    goal: Goal, built: tuple[Goal, ...], e: int, doubling: bool = False
) -> tuple[int, int, Position, Goal]:
    """Which of the goals `built` earlier, added once and moved by which offset, leaves `goal` the least
    to build over sources holding `2^e` atoms (by `doubling` or not, as `_cost`): (instructions saved,
    its index, the offset, the goal left to build). Saves 0 when none helps. Cached: every candidate
    program asks it again."""
    alone = _cost(goal, e, doubling)
    best: tuple[int, int, Position, Goal] = (0, -1, (0, 0), goal)
    for i, other in enumerate(built):
        for d in _OFFSETS:
            rest = goal - other.shifted(d)
            saved = alone - _cost(rest, e, doubling) - 1
            if saved > best[0]:
                best = saved, i, d, rest
    return best


def _kept_input(filt: Filter, k: int) -> int | None:
    """The input channel that kernel `k` is, unchanged and in that input's own register (as the kernels
    that keep an input alive for later ones are), else None."""
    kernel = filt.kernels[k]
    for z, (_, reg) in enumerate(filt.inputs):
        if reg == kernel.register and kernel.goal == Goal.identity(2**filt.depth, z):
            return z
    return None


COPIES: tuple[tuple[int, ...], ...] = ((), (1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2, 3))
"""Which values of the input before its last halvings (levels: how many halvings before) the kernels after
the split may add (`copies`). They are tried for one input channel halved to the filter's depth, where
every count is added once per unit; above it each accumulator divides, and with more channels the copies'
registers are seldom free, while trying them everywhere made the candidates about five times as many (a
minute and more for some two-channel fuzz filters)."""


def candidates(
    filt: Filter,
    set_name: str,
    bases: Bases = (),
    stop: Callable[[], bool] | None = None,
    registers: int | None = None,
) -> Iterator[Program]:
    """Every constructive program worth trying, shortest first: each kernel order (kernels whose register
    holds an input last), each point to halve the inputs and each number of halvings (`bases`: values
    already computed that the kernels may start from, as `constructive`). Their lengths are counted first,
    without instructions, and each program is built only when asked for: a big filter has thousands, and
    the first that fits usually ends the search. With `registers`, only those whose `registers_needed` (also
    counted without building them) is at most that. Once `stop()` is true, only those counted so far."""
    ranked = _ranked(filt, set_name, bases, stop)
    fit = [option for needed, option in ranked if registers is None or needed is None or needed <= registers]
    return _built(filt, set_name, bases, fit)


_RANKED: dict[tuple[Filter, str, Bases], list[tuple[int | None, dict]]] = {}
"""`_ranked`'s complete answers: the engine asks again for more registers, kernel by kernel again and
again."""


def _ranked(
    filt: Filter, set_name: str, bases: Bases, stop: Callable[[], bool] | None
) -> list[tuple[int | None, dict]]:
    """Each different option of `candidates` as `(registers needed, options)`, shortest first (ties in the
    order tried), both counted without building the programs (`_traced_registers`)."""
    key = (filt, set_name, bases)
    if key in _RANKED:
        return _RANKED[key]
    input_regs = {reg for _, reg in filt.inputs}
    kernels = range(len(filt.kernels))
    orders = sorted(
        itertools.permutations(kernels) if len(filt.kernels) <= 4 else [tuple(kernels)],
        key=lambda o: (
            sum(1 for i, k in enumerate(o) if filt.kernels[k].register in input_regs and i < len(o) - 1),
            o,
        ),
    )[:6]
    channels = len(filt.inputs)

    def options():
        for order in orders:
            for split in range(len(order) + 1):
                for halvings, floating, doubling, sharing, copies, staircase in itertools.product(
                    range(filt.depth + 1) if split < len(order) else (0,),
                    (True, False),
                    (False, True),
                    (False, True),
                    COPIES,
                    (False, True),
                ):
                    if sharing and len(order) + len(bases) < 2:
                        continue
                    if copies and (channels > 1 or halvings < filt.depth or max(copies) > halvings):
                        continue  # copies stand in for adding the input halved to its last digit
                    if staircase and (not copies or len(order) - split < 2):
                        continue
                    if not floating and not doubling and split == 0 and halvings == filt.depth:
                        continue  # one walk a kernel: where it ends does not matter
                    yield {
                        "order": list(order),
                        "split": split,
                        "halvings": halvings,
                        "floating": floating,
                        "doubling": doubling,
                        "sharing": sharing,
                        "copies": copies,
                        "staircase": staircase,
                    }

    first = channels + len(bases)
    ranked = []
    traces = set()  # options with the same trace build the same program: only the first is kept
    complete = True
    for i, option in enumerate(options()):
        if stop is not None and stop():
            complete = False
            break
        b = Builder(set_name, first, count=True)
        results = _build(b, filt, bases=bases, **option)
        if results is not None:
            trace = tuple(b.trace)
            if trace in traces:
                continue
            traces.add(trace)
            outputs = [results[k] for k in range(len(filt.kernels))] + list(range(channels, first))
            needed = _traced_registers(b.trace, first, outputs, b.all)
            ranked.append((b.next - first, i, needed, option))
    ranked.sort(key=lambda r: r[:2])
    out = [(needed, option) for _, _, needed, option in ranked]
    if complete:
        if len(_RANKED) >= 64:
            _RANKED.clear()
        _RANKED[key] = out
    return out


def _built(filt: Filter, set_name: str, bases: Bases, options: list[dict]) -> Iterator[Program]:
    """The programs of `options` (`constructive`'s arguments, ranked by length), built one at a time as
    they are asked for, each different one once."""
    seen = set()
    for option in options:
        program = constructive(filt, set_name, bases=bases, **option)
        key = tuple(program.instrs)
        if key not in seen:
            seen.add(key)
            yield program


def shortest_constructive(
    filt: Filter,
    set_name: str,
    registers: tuple[str, ...],
    allocate: Callable[[Program], Program | None],
    bases: Bases = (),
    stop: Callable[[], bool] | None = None,
) -> tuple[Program, Program] | None:
    """The shortest constructive program that `allocate` register-allocates (on `registers`, verifying it
    if the caller wants), and its SSA form; None when none fits the registers. `bases` and `stop` as for
    `candidates`."""
    return shortest_fitting(candidates(filt, set_name, bases, stop, len(registers)), registers, allocate)


def shortest_fitting(
    programs: Iterable[Program], registers: tuple[str, ...], allocate: Callable[[Program], Program | None]
) -> tuple[Program, Program] | None:
    """The first of `programs` (shortest first) that fits `registers` and that `allocate` allocates (and
    verifies, if the caller wants), with its SSA form; None when none does."""
    for program in programs:
        if registers_needed(program) > len(registers):
            continue
        done = allocate(program)
        if done is not None:
            return done, program
    return None


_PLANS: dict[tuple[Filter, str, Bases], Program | None] = {}
"""`constructive_plan`'s answers: kernel-by-kernel compilation asks again each time it runs."""


def constructive_plan(
    sub: Filter, set_name: str, bases: Bases = (), stop: Callable[[], bool] | None = None
) -> Program | None:
    """The constructive plan (SSA) of `sub` that allocates on its registers and those of `bases`; None when
    none fits, or when `stop()` turns true first (nothing is then remembered)."""
    key = (sub, set_name, bases)
    if key not in _PLANS:
        names = sub.registers + tuple(reg for reg, _ in bases)
        programs = candidates(sub, set_name, bases, stop, len(names))
        if stop is not None and stop():
            return None
        found = shortest_fitting(programs, names, lambda p: allocated(p, names))
        if len(_PLANS) >= 256:
            _PLANS.clear()
        _PLANS[key] = found[1] if found is not None else None
    return _PLANS[key]
