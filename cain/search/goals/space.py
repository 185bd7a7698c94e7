"""The search space: goals interned as integers, pair generation (paper 3.2) and the local heuristic (3.3).

A `Space` holds everything one search learns about goals: an id per distinct goal with its statistics,
the candidate splits of each goal (memoised, since the same goal turns up in many goal-bags), and the
instruction forms of the chosen instruction set, derived from `cain.model.isa` (`Macro.terms`, `directions`,
`scale`, `scratch`, `distinct_roles`). A goal-bag is a sorted tuple of goal ids.

A pair is `(macro, directions, upper, lowers)`: the upper goal is computed by `macro` from the lowers
(in operand order). The child goal-bag is `(F minus upper) plus lowers`, a lower equal to a goal already
in the bag merging with it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from cain.model.isa import DIRECTIONS, Macro, instruction_set, offset_of
from cain.search.goals import atoms
from cain.search.goals.atoms import Atoms

ELIMINATES, DERIVES, OTHER = 0, 1, 2
"""Tiers of pairs, tried in this order whatever the heuristic says: a pair whose lowers are all in the
goal-bag already (it removes a goal for one instruction); a pair whose new lowers are moved or halved
copies of goals of the bag (made from them by moves and divisions alone); any other pair."""
TIERED_POSITIONS = 3
"""Only pairs whose upper goal has at least this many positions are tiered (the others are `OTHER`): among
small goals such coincidences are common and carry little, and ranking them first lengthened the plans
of random multi-kernel filters."""

OVERLAP_WORK = 60_000
"""Most translations times positions `_self_overlaps` examines for one goal: a big goal keeps only its
most frequent translations, so one node's pair generation stays bounded whatever the kernel's size."""

TRIPLES = 12
"""Three-way splits of a goal kept for `add3` (`Space.triples`), the cheapest by the heuristic."""
SHARED_TRIPLES = 8
"""Per goal of the bag that shares atoms with the upper goal, how many of the rest's best splits make
three-way splits with the shared part (`Space.shared_triples`)."""

Pair = tuple[str, tuple[str, ...], int, tuple[int, ...]]
"""(macro name, directions, upper goal id, lower goal ids in operand order)."""


@dataclass(frozen=True)
class Form:
    """One way a macro computes its result from terms: used to turn a split of a goal into lowers."""

    macro: str
    signs: tuple[int, ...]
    shifted: tuple[bool, ...]
    offsets: tuple[tuple[tuple[str, ...], tuple[int, int]], ...]
    """(directions, atom offset) per distinct non-zero offset the macro can apply; `((), (0, 0))` if none."""
    symmetric: bool
    """Swapping the operands gives the same lowers (same sign and shift on every term)."""
    need: int
    """Registers beyond the child goal-bag: scratch registers plus one if the result cannot take the
    register of a dying operand."""
    share: tuple[int, ...]
    """Operand indices whose register the result may take."""
    distinct: tuple[tuple[int, int], ...] = ()
    """Operand index pairs the bus rule puts in different registers (`sub(y, a, a)` may read one register
    twice, `add(y, a, a)` may not)."""

    def copies(self, lowers: tuple[int, ...]) -> tuple[int, ...]:
        """Per operand, which register holding its goal it reads (0, 1, ...): operands with the same goal
        share one register where the bus rule lets them."""
        out: list[int] = []
        for i, lo in enumerate(lowers):
            k = 0
            while any(lowers[j] == lo and out[j] == k and (j, i) in self.distinct for j in range(i)):
                k += 1
            out.append(k)
        return tuple(out)

    def held(self, lowers: tuple[int, ...], i: int, before: bool = False) -> set[int]:
        """The copies of operand `i`'s goal (registers holding it) that operands 0 to `i` read (with
        `before`, 0 to `i - 1`)."""
        copies = self.copies(lowers)
        return {copies[j] for j in range(i if before else i + 1) if lowers[j] == lowers[i]}

    def new_copy(self, lowers: tuple[int, ...], i: int) -> bool:
        """Whether operand `i` reads a copy of its goal that no earlier operand reads (a register of its own
        where an earlier operand has the same goal)."""
        return len(self.held(lowers, i)) > len(self.held(lowers, i, before=True))


class Option(NamedTuple):
    """A candidate pair of `Space.pairs` before it is scored: its tier, cheap estimate and the order it was
    made in (the sort key), its form (None: `res`), directions, upper goal and lowers, and the rest of the
    goal-bag without the upper goal."""

    tier: int
    estimate: int
    order: int
    form: Form | None
    directions: tuple[str, ...]
    upper: int
    lowers: tuple[int, ...]
    rest: list[int]


_make_option = tuple.__new__
"""`Option`s are made by `tuple.__new__(Option, fields)`, without the named tuple's Python-level constructor:
pair generation makes hundreds of thousands of them."""


@dataclass(slots=True)
class _Upper:
    """One goal of a goal-bag taken as the upper goal of pairs: the rest of the bag, its goals as a set and
    their patterns, the estimate's starting term (the goal's own, taken away), per scale-free pattern the
    rest's biggest goal (`source`), the goal's source if it is a copy of one (else -1), whether its pairs
    are tiered, and whether a pair of two new lowers can fit the registers."""

    u: int
    rest: list[int]
    rest_set: set[int]
    rest_pats: set[int]
    base: int
    source: dict[int, int]
    src: int
    tiered: bool
    fresh_pairs_fit: bool


def _offsets(macro: Macro) -> tuple[tuple[tuple[str, ...], tuple[int, int]], ...]:
    if macro.directions == 0:
        return (((), (0, 0)),)
    seen: dict[tuple[int, int], tuple[str, ...]] = {}
    for dirs in itertools.product(sorted(DIRECTIONS), repeat=macro.directions):
        off = offset_of(dirs)
        if off != (0, 0) and off not in seen:
            seen[off] = dirs
    return tuple((d, o) for o, d in sorted(seen.items()))


def form_of(macro: Macro) -> Form:
    """The reverse-search form of `macro`: its terms' signs and shifts, offsets and register needs."""
    distinct = set(macro.distinct_roles)
    y = macro.results[0] if macro.results else None
    share = tuple(
        i
        for i, role in enumerate(macro.operands)
        if y is not None and (min(y, role), max(y, role)) not in distinct
    )
    signs = tuple(t.sign for t in macro.terms)
    shifted = tuple(t.shifted for t in macro.terms)
    return Form(
        macro=macro.name,
        signs=signs,
        shifted=shifted,
        offsets=_offsets(macro),
        symmetric=len(set(zip(signs, shifted, strict=True))) <= 1,
        need=len(macro.scratch) + len(macro.results) - 1,
        share=share,
        distinct=tuple(
            (i, j)
            for i, j in itertools.combinations(range(len(macro.operands)), 2)
            if (min(macro.operands[i], macro.operands[j]), max(macro.operands[i], macro.operands[j]))
            in distinct
        ),
    )


def _no_tick() -> None:
    """The default budget check of a `Space`: none."""


def division_macro(macros: dict[str, Macro]) -> Macro | None:
    """The division the search emits: halving, keeps its operand, fewest scratch registers."""
    divs = [m for m in macros.values() if m.scale == 0.5 and not m.tied and not m.clobbers_operands]
    return min(divs, key=lambda m: (len(m.scratch), m.name)) if divs else None


class Space:
    """Goal ids, per-goal statistics, memoised splits, and the heuristic, for one search."""

    def __init__(
        self,
        instruction_set_name: str,
        depth: int,
        registers: int,
        inputs: list[Atoms],
        exhaustive_atoms: int = 6,
        keep_splits: int = 48,
        heuristic: str = "scamp5",
        seed: int = 0,
        jitter: float = 0.0,
        scaled_relations: int = 0,
        scaled_patterns: bool = False,
        only: frozenset[str] | None = None,
        kernels: Sequence[Atoms] = (),
        statistics: bool = True,
    ):
        self.statistics = statistics
        """Whether `intern` keeps the per-goal statistics the heuristic reads (`tot`, `dist`, `pat`...); the
        exact search reads none, and interning a goal without them takes a third of the time."""
        self.prescore = 4
        """Candidates scored exactly per child kept (the rest are dropped on the cheap estimate)."""
        self.tick = _no_tick
        """Called often during pair generation (the worker's budget check: it may raise to stop)."""
        self.scaled_relations = scaled_relations
        self.scaled_patterns = scaled_patterns
        self.macros = instruction_set(instruction_set_name)
        if only is not None:
            self.macros = {n: m for n, m in self.macros.items() if n in only}
        self.depth = depth
        self.registers = registers
        self.exhaustive_atoms = exhaustive_atoms
        self.keep_splits = keep_splits
        self.random_order = heuristic == "random"
        self.rng = random.Random(seed)
        self.jitter = jitter
        self.goal_of: list[Atoms] = []
        self.id_of: dict[Atoms, int] = {}
        # per goal id: total atoms, distance sum, pattern id (-1 if one position), 2-adic valuation of the gcd
        self.tot: list[int] = []
        self.dist: list[int] = []
        self.pat: list[int] = []
        self.spat: list[int] = []
        """Per goal id: its pattern up to translation and a power-of-two scale (goals made from each other
        by moves and divisions share it)."""
        self._spat_ids: dict[Atoms, int] = {}
        self.anchor: list[tuple[int, int]] = []
        """Per goal id: the position of its first atom (a moved copy's anchor moves with it)."""
        self.val: list[int] = []
        self.minabs: list[int] = []
        self.sig: list[int] = []
        """Per goal id: a 64-bit set of its atoms' positions and signs (hashed), so that a goal holding an
        atom another lacks is known not to be inside it without looking at either."""
        self._pattern_ids: dict[Atoms, int] = {}
        self.tpat: list[int] = []
        """Per goal id: its pattern up to translation alone (single positions included)."""
        self._tpat_ids: dict[Atoms, int] = {}
        self._atoms: dict[tuple[int, int, int, int], tuple[int, int, int, int]] = {}
        self._splits: dict[int, list[tuple[int, int]]] = {}
        self._triples: dict[int, tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]] = {}
        self._relations: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self._shared: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        self._contains: dict[int, bool] = {}
        self._split_forms: dict[tuple[int, int], list] = {}
        self._unary_forms: dict[int, list] = {}
        self._costs: dict[tuple[int, ...], float] = {}
        """`cost` by goal-bag: a third of the children a traversal scores were scored before."""
        self.inputs = [self.intern(g) for g in inputs]
        self.input_set = frozenset(self.inputs)
        self.kernels = frozenset(self.intern(g) for g in kernels)
        """Kernels whose repeated sub-patterns are offered first, as their designed symmetries (`triples`)."""
        self.zero = self.intern(atoms.ZERO)
        self._derive_forms()

    def _derive_forms(self) -> None:
        """The instruction set's forms by kind (unary, binary, ternary; the division, copy, negation, moves
        and `res`), and what the search derives from them."""
        registers = self.registers
        unary, binary, ternary, zeros = [], [], [], []
        div = division_macro(self.macros)
        self.division = form_of(div) if div else None
        for m in self.macros.values():
            if m.scale == 0:
                zeros.append(m)
            elif m.scale == 1 and len(m.terms) == 1:
                unary.append(form_of(m))
            elif m.scale == 1 and len(m.terms) == 2:
                binary.append(form_of(m))
            elif m.scale == 1 and len(m.terms) == 3:
                ternary.append(form_of(m))
        self.unary, self.binary, self.ternary = unary, binary, ternary
        self.sums = [f for f in ternary if all(f.signs[i] == 1 and not f.shifted[i] for i in range(3))]
        """The ternary forms that add three unmoved operands (`add3`): the forms of `triples`."""
        self.fresh_pair = min((f.need + (0 if f.share else 1) for f in binary), default=registers)
        """Registers a binary form needs beyond its two lowers when neither is a goal of the bag: a bag
        with fewer free registers takes a split's lowers only where one of them is in it already."""
        self._offset_dirs = {f.macro: {o: d for d, o in f.offsets} for f in binary}
        self.res = next((m.name for m in zeros if len(m.results) == 1), None)
        self.copy = next((f for f in unary if f.signs == (1,) and not f.shifted[0]), None)
        self.negate = next((f for f in unary if f.signs == (-1,) and not f.shifted[0]), None)
        self.moves = [f for f in unary if f.signs == (1,) and f.shifted[0]]
        self.shift_offsets = {o: (f, d) for f in self.moves for d, o in f.offsets}
        """Every offset one move can apply, with the first macro (fewest directions) that does it."""
        for f in sorted(self.moves, key=lambda f: len(f.offsets[0][0]), reverse=True):
            for d, o in f.offsets:
                self.shift_offsets[o] = (f, d)

    def forget(self) -> None:
        """Empty the memoised pair generation (to free memory; it is rebuilt as needed)."""
        memos = (
            self._splits, self._triples, self._relations, self._shared, self._contains, self._split_forms,
            self._unary_forms,
        )
        for table in (*memos, self._costs):
            table.clear()

    # -- goals ----------------------------------------------------------------------------------
    def intern(self, goal: Atoms) -> int:
        i = self.id_of.get(goal)
        if i is not None:
            return i
        # the table keeps one tuple per distinct atom, shared by every goal holding it: most of its memory
        shared = self._atoms
        goal = tuple([shared.setdefault(a, a) for a in goal])
        i = len(self.goal_of)
        self.id_of[goal] = i
        self.goal_of.append(goal)
        if not self.statistics:
            return i
        tot = 0
        dist = 0
        minabs = 1 << 60
        g = 0
        sig = 0
        for x, y, z, c in goal:
            a = c if c > 0 else -c
            sig |= 1 << ((x * 11 + y * 37 + z * 5 + (c > 0) * 23) & 63)
            tot += a
            dist += a * ((x if x > 0 else -x) + (y if y > 0 else -y) + z + (1 if c < 0 else 0))
            minabs = min(minabs, a)
            g |= a
        self.tot.append(tot)
        self.dist.append(dist)
        self.sig.append(sig)
        k = (g & -g).bit_length() - 1 if g else 0  # the power of two dividing every count
        self.val.append(k if g else 1 << 20)
        p = atoms.pattern(goal)
        self.tpat.append(self._tpat_ids.setdefault(p, len(self._tpat_ids)))
        sp = tuple([(x, y, z, c >> k) for x, y, z, c in p]) if k else p
        self.spat.append(self._spat_ids.setdefault(sp, len(self._spat_ids)))
        self.anchor.append(goal[0][:2] if goal else (0, 0))
        if len(goal) >= 2:
            if self.scaled_patterns:
                p = sp
            pid = self._pattern_ids.get(p)
            if pid is None:
                pid = self._pattern_ids[tuple([shared.setdefault(a, a) for a in p])] = len(self._pattern_ids)
            self.pat.append(pid)
        else:
            self.pat.append(-1)
        self.minabs.append(minabs if goal else 0)
        return i

    def bag(self, goals) -> tuple[int, ...]:
        return tuple(sorted(self.intern(g) for g in goals))

    def contains(self, big: int, small: int) -> bool:
        """Whether goal `small` is a proper sub-multiset of goal `big`."""
        key = big << 32 | small  # an int key: a third of a tuple's memory in a table of up to a million
        r = self._contains.get(key)
        if r is None:
            if len(self._contains) > 1_000_000:
                self._contains.clear()
            r = (
                self.tot[small] < self.tot[big]
                and not self.sig[small] & ~self.sig[big]
                and atoms.contains(self.goal_of[big], self.goal_of[small])
            )
            self._contains[key] = r
        return r

    # -- heuristic ------------------------------------------------------------------------------
    def cost(self, bag: tuple[int, ...]) -> float:
        """The SCAMP-5 local heuristic of a goal-bag (lower is better), after the paper's equation 10:
        atoms plus their distance from the origin (halved for a goal inside another goal of the bag), plus
        the squared size of each distinct pattern (goals equal up to translation count once; a goal held
        twice counts twice), plus
        `2^d / smallest count`, which grows with the divisions still needed."""
        h = self._costs.get(bag)
        if h is not None:
            return h
        if len(self._costs) > 200_000:
            self._costs.clear()
        tot, dist, pat, sig, minabs_of = self.tot, self.dist, self.pat, self.sig, self.minabs
        known = self._contains  # `contains`' memo, read here without the call
        sized = [(tot[g], sig[g], g) for g in bag]  # the inner loop's reads, made once
        h = 0.0
        seen = set()
        minabs = 1 << 60
        last = -1
        for t, s, g in sized:
            d = dist[g]
            if d:
                for to, so, other in sized:
                    if to > t and not s & ~so:
                        inside = known.get(other << 32 | g)
                        if inside is None:
                            inside = self.contains(other, g)
                        if inside:
                            d *= 0.5
                            break
            h += t + d
            p = pat[g]
            if p >= 0 and p not in seen:
                seen.add(p)
                h += t * t
            elif g == last:
                h += t * t  # a second register holding the same goal shares nothing with it
            last = g
            m = minabs_of[g]
            if 0 < m < minabs:
                minabs = m
        if minabs < (1 << 60):
            h += (1 << self.depth) / minabs
        self._costs[bag] = h
        return h

    def lower_bound(self, bag: tuple[int, ...]) -> int:
        """Instructions still needed, at least: one per goal that is not an input (or is a second copy),
        plus one division for every power of two `2^j` between the smallest one dividing a goal's counts
        and the input's `2^d` that no goal of the bag has as its own: only a division can first make a
        value whose counts have `j` factors of two, and that value is then none of the bag's goals."""
        n = 0
        kmin = depth = self.depth
        last = -1
        levels = set()
        val = self.val
        for g in bag:
            if g == last:
                n += 1
                continue
            last = g
            if g not in self.input_set:
                n += 1
                v = val[g]
                levels.add(v)
                kmin = min(kmin, v)
        for j in range(kmin, depth):
            if j not in levels:
                n += 1
        return n

    # -- pair generation ------------------------------------------------------------------------
    def _parts(self, u: int) -> list[Atoms]:
        """Candidate sub-multisets of goal `u` (one side of a two-way split), without regard to the bag."""
        goal = self.goal_of[u]
        tot = self.tot[u]
        parts: set[Atoms] = set()
        if tot <= self.exhaustive_atoms:
            ranges = [range(abs(c) + 1) for *_, c in goal]
            for ks in itertools.product(*ranges):
                part = tuple(
                    (x, y, z, k if c > 0 else -k) for (x, y, z, c), k in zip(goal, ks, strict=True) if k
                )
                if part and len(part) <= len(goal) and sum(ks) < tot:
                    parts.add(part)
            return sorted(parts)
        # repeated sub-patterns: u = q + shift(q, t) + r
        for q, t, _ in self._self_overlaps(u):
            qt = atoms.shift(q, *t)
            parts.add(q)
            parts.add(qt)
        # cuts along a line, and single positions peeled off
        xs = sorted({a[0] for a in goal})
        ys = sorted({a[1] for a in goal})
        for k in xs[1:]:
            parts.add(tuple(a for a in goal if a[0] < k))
        for k in ys[1:]:
            parts.add(tuple(a for a in goal if a[1] < k))
        if len(goal) > 1:
            for a in goal:
                parts.add((a,))
        # halves of every count (what is left is the other half)
        half = tuple((x, y, z, c // 2 if c > 0 else -((-c) // 2)) for x, y, z, c in goal)
        half = tuple(a for a in half if a[3])
        if half:
            parts.add(half)
        parts.discard(goal)
        parts.discard(())
        return sorted(parts)

    def _self_overlaps(self, u: int) -> list[tuple[Atoms, tuple[int, int], Atoms]]:
        """For each translation t between two same-sign atoms of `u`: the largest q (greedily) with
        q + shift(q, t) inside u, and the rest r = u - q - shift(q, t)."""
        goal = self.goal_of[u]
        cnt = atoms.counts(goal)
        tick = self.tick
        ts: dict[tuple[int, int], int] = {}
        for a in goal:
            tick()
            for b in goal:
                if a is not b and a[2] == b[2] and (a[3] > 0) == (b[3] > 0):
                    t = (b[0] - a[0], b[1] - a[1])
                    if t >= (0, 0):  # q + shift(q, -t) is the same split seen from the other side
                        ts[t] = ts.get(t, 0) + 1
        most = max(1, OVERLAP_WORK // max(1, len(goal)))
        if len(ts) > most:
            ts = dict(sorted(ts.items(), key=lambda e: (-e[1], e[0]))[:most])
        out = []
        for t in sorted(ts):
            tick()
            rem = dict(cnt)
            q = {}
            for x, y, z, _ in sorted(goal, key=lambda a: a[0] * t[0] + a[1] * t[1]):
                c = rem[(x, y, z)]
                d = rem.get((x + t[0], y + t[1], z), 0)
                if c and d and (c > 0) == (d > 0):
                    m = min(c, d) if c > 0 else max(c, d)
                    q[(x, y, z)] = m
                    rem[(x, y, z)] -= m
                    rem[(x + t[0], y + t[1], z)] -= m
            if q:
                out.append((atoms.from_counts(q), t, atoms.from_counts(rem)))
        return out

    def splits(self, u: int) -> list[tuple[int, int]]:
        """Two-way splits `{a, u - a}` of goal `u`, best first by the heuristic of the two parts alone,
        at most `keep_splits` of them (memoised)."""
        s = self._splits.get(u)
        if s is not None:
            return s
        if len(self._splits) > 100_000:
            self._splits.clear()
            self._triples.clear()
        goal = self.goal_of[u]
        seen = set()
        scored = []
        tick = self.tick
        for part in self._parts(u):
            tick()
            a = self.intern(part)
            b = self.intern(atoms.sub(goal, part))
            key = (min(a, b), max(a, b))
            if key in seen:
                continue
            seen.add(key)
            scored.append((self.cost(key), key))
        scored.sort()
        s = [k for _, k in scored[: self.keep_splits]]
        self._splits[u] = s
        return s

    def triples(self, u: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Three-way splits for a three-operand add (memoised), cheapest first: for a kernel of `kernels`,
        each repeated sub-pattern with its moved copy and the rest, q + shift(q, t) + r (all of them, as
        Cain-Java offers them: the kernel's own symmetries); and the best `TRIPLES` others, of a repeated
        sub-pattern or of a split's part."""
        s = self._triples.get(u)
        if s is not None:
            return s
        repeated, split = set(), set()
        if self.tot[u] >= 3:
            for q, t, r in self._self_overlaps(u):
                if r:
                    parts = (self.intern(q), self.intern(atoms.shift(q, *t)), self.intern(r))
                    repeated.add(tuple(sorted(parts)))
            for a, b in self.splits(u)[:8]:
                for big, small in ((a, b), (b, a)):
                    for c, e in self.splits(big)[:4] if self.tot[big] >= 2 else ():
                        split.add(tuple(sorted((c, e, small))))

        def cheapest(ts: set[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
            scored = sorted((self.cost(t), t) for t in ts if len(set(t)) == 3 and self.zero not in t)
            return [t for _, t in scored]

        if u not in self.kernels:
            split, repeated = split | repeated, set()
        s = cheapest(repeated), cheapest(split - repeated)[:TRIPLES]
        self._triples[u] = s
        return s

    def shared_triples(self, u: int, g: int) -> list[tuple[int, int, int]]:
        """Three-way splits of goal `u` around the part it shares in place with goal `g` of the same bag
        (their common atoms, unmoved): that part, and the rest split in two (its best `SHARED_TRIPLES`
        splits), so that two kernels sharing a sub-expression can each be one `add3` on it (memoised)."""
        key = (u, g)
        r = self._shared.get(key)
        if r is not None:
            return r
        if len(self._shared) > 100_000:
            self._shared.clear()
        ug = self.goal_of[u]
        p = atoms.overlap(ug, self.goal_of[g])
        r = []
        if len(p) >= 2 and p != ug:  # a single position is peeled off by `splits` already
            a, b = self.intern(p), self.intern(atoms.sub(ug, p))
            if self.tot[b] >= 2:
                for c, e in self.splits(b)[:SHARED_TRIPLES]:
                    t3 = tuple(sorted((a, c, e)))
                    if t3[0] != t3[1] != t3[2] and self.zero not in t3:
                        r.append(t3)
        self._shared[key] = r
        return r

    def relations(self, u: int, g: int) -> list[tuple[int, int]]:
        """Splits of `u` that share a part with goal `g` of the same bag: for each sign and each offset
        one move can apply (and none), the common part of u and the moved g, and the rest."""
        key = (u, g)
        r = self._relations.get(key)
        if r is not None:
            return r
        if len(self._relations) > 100_000:
            self._relations.clear()
        ug, gg = self.goal_of[u], self.goal_of[g]
        out = []
        seen = set()
        bases = [gg]
        for _ in range(self.scaled_relations):
            half = atoms.halved(bases[-1])
            if half is None:
                break
            bases.append(half)
        for base in [b for g0 in bases for b in (g0, atoms.neg(g0))]:
            for off in ((0, 0), *self.shift_offsets):
                self.tick()
                p = atoms.overlap(ug, atoms.shift(base, *off))
                if not p or p == ug:
                    continue
                a = self.intern(p)
                b = self.intern(atoms.sub(ug, p))
                k = (min(a, b), max(a, b))
                if k not in seen:
                    seen.add(k)
                    out.append(k)
        self._relations[key] = out
        return out

    def pairs(self, bag: tuple[int, ...], keep: int = 0) -> list[tuple[float, Pair, tuple[int, ...]]]:
        """The pairs this generator offers for `bag`, with their child goal-bags and heuristic costs, by
        tier (`ELIMINATES`, `DERIVES`, `OTHER`), cheapest first within a tier; pairs whose child needs more
        registers than exist are dropped. A copy's own pairs are `DERIVES` only when they bring it nearer
        its source (a division, or a move towards the source's position). With `keep`,
        candidates are first ranked by a cheap estimate (the heuristic's per-goal terms of the goals
        that change) and only the best `4 * keep` are scored exactly, of which `keep` are returned."""
        options = self._options(bag)
        if self.random_order:
            self.rng.shuffle(options)
        else:
            options.sort(key=lambda e: (e[0], e[1], e[2]))
        if keep:
            options = options[: self.prescore * keep]
        out = []
        tick = self.tick
        copy_macro = self.copy.macro if self.copy else None
        for tier, _, _, form, dirs, u, lowers, rest in options:
            tick()
            child = list(rest)
            for i, lo in enumerate(lowers):
                if not (i and lo in lowers[:i]):
                    if lo not in child:
                        child.append(lo)
                elif child.count(lo) < len(form.held(lowers, i)):
                    child.append(lo)  # a second register holding the same goal
            cb = tuple(sorted(child))
            macro = form.macro if form is not None else self.res
            h = 0.0 if self.random_order else self.cost(cb)
            if macro == copy_macro:
                h *= 2
            out.append((tier, h, (macro, dirs, u, lowers), cb))
        if self.random_order:
            out = [(h, p, c) for _, h, p, c in out]
            return out[:keep] if keep else out
        if self.jitter:
            j = self.jitter
            out = [(t, h * (1.0 + j * self.rng.random()), p, c) for t, h, p, c in out]
        out.sort(key=lambda e: (e[0], e[1]))
        return [(h, p, c) for _, h, p, c in (out[:keep] if keep else out)]

    def _options(self, bag: tuple[int, ...]) -> list[Option]:
        """Every candidate pair of `bag` that fits the registers, with its tier and cheap estimate, in the
        order made: a copy for a goal held twice, `res` for the zero goal, each other goal's pairs."""
        bag_set = set(bag)
        by_tpat: dict[int, list[int]] = {}
        for g in bag_set:
            by_tpat.setdefault(self.tpat[g], []).append(g)
        # the inputs are at hand whether or not the bag holds them: a shifted form's lower may equal one
        for g in self.inputs:
            if g not in bag_set:
                by_tpat.setdefault(self.tpat[g], []).append(g)
        at_hand = bag_set | self.input_set
        options: list[Option] = []
        for idx, u in enumerate(bag):
            if idx and bag[idx - 1] == u:
                if self.copy and u != self.zero:
                    rest = list(bag)
                    rest.remove(u)
                    options.append(Option(OTHER, 0, len(options), self.copy, (), u, (u,), rest))
                continue
            if u in self.input_set:
                continue
            upper = self._upper(bag, u)
            if u == self.zero:
                if self.res:
                    options.append(Option(OTHER, upper.base, len(options), None, (), u, (), upper.rest))
                continue
            self._options_of(upper, bag, at_hand, by_tpat, options)
        return options

    def _upper(self, bag: tuple[int, ...], u: int) -> _Upper:
        """Goal `u` of `bag` as the upper goal of a pair: the rest of the bag and what scoring needs."""
        tot, pat, spat = self.tot, self.pat, self.spat
        rest = list(bag)
        rest.remove(u)
        # per scale-free pattern, the biggest goal of the rest: the source its moved and halved copies are
        # made from
        source: dict[int, int] = {}
        for g in rest:
            s = spat[g]
            if s not in source or tot[g] > tot[source[s]]:
                source[s] = g
        src = source.get(spat[u], -1) if pat[u] >= 0 else -1
        if src >= 0 and tot[src] < tot[u]:
            src = -1  # u is a copy of src when src is at least as big (and has two positions or more)
        t = tot[u]
        rest_set, rest_pats = set(rest), {pat[g] for g in rest}
        # the pattern's term leaves with u unless a translate of u stays (a second copy of u counts again)
        gone = pat[u] >= 0 and (pat[u] not in rest_pats or u in rest_set)
        base = -(t + self.dist[u] + (t * t if gone else 0))
        return _Upper(
            u,
            rest,
            rest_set,
            rest_pats,
            base,
            source,
            src,
            len(self.goal_of[u]) >= TIERED_POSITIONS,
            len(rest) + 2 + self.fresh_pair <= self.registers,
        )

    def _options_of(
        self, upper: _Upper, bag, bag_set: set[int], by_tpat: dict, options: list[Option]
    ) -> None:
        """The pairs of `upper`'s goal, onto `options`: its unary forms, its splits (and relations to the
        other goals of the bag) by every binary form, its triples (and those around a part it shares with
        another goal of the bag) by `add3`. `bag_set` holds the bag's goals and the inputs, at hand."""
        u = upper.u
        add = self._add_options
        add(upper, self.unary_forms(u), options)
        seen = set()
        splits = list(self.splits(u))
        for g in bag:
            if g != u:
                splits.extend(self.relations(u, g))
        for split in splits:
            self.tick()
            if split in seen:
                continue
            seen.add(split)
            main, others, moved_pats, kept, lows = self.split_forms(split)
            if upper.fresh_pairs_fit or not lows.isdisjoint(upper.rest_set):  # else none would fit
                add(upper, main, options)
            if not moved_pats.isdisjoint(by_tpat) or not kept.isdisjoint(bag_set):
                add(upper, self.other_forms(others, bag_set, by_tpat), options)
        sums = self.sums
        if sums:  # the basic set has no `add3`: no three-way splits made for nothing
            repeated, triples = self.triples(u)
            if len(bag) > 1:
                shared = [t for g in bag if g != u for t in self.shared_triples(u, g)]
                triples = [t for t in dict.fromkeys(triples + shared) if t not in repeated]
            for f in sums:
                add(upper, [(f, (), t) for t in repeated], options, repeated=True)
                add(upper, [(f, (), t) for t in triples], options)

    def _add_options(self, upper: _Upper, candidates, options: list[Option], repeated: bool = False) -> None:
        """Each pair `form(lowers) -> upper` of `candidates` (form, directions, lowers) onto `options`, with
        its tier and cheap estimate (the heuristic's per-goal terms of the goals that change), unless its
        child needs more registers than exist. It runs for every candidate of every node: the tables it
        reads are bound once per batch of candidates."""
        rest_set, rest_pats, n_rest, u = upper.rest_set, upper.rest_pats, len(upper.rest), upper.u
        registers, tot, dist, pat = self.registers, self.tot, self.dist, self.pat
        tiered, base, rest = upper.tiered, upper.base, upper.rest
        for form, dirs, lowers in candidates:
            # the registers first: most candidates of a bag near the register count fail them
            size = n_rest
            extra = 1
            for i, lo in enumerate(lowers):
                if i and lo in lowers[:i]:
                    if form.new_copy(lowers, i):
                        size += 1  # a second register holding the same goal
                elif lo not in rest_set:
                    size += 1
                    if i in form.share:
                        extra = 0
            if size + form.need + extra > registers:
                continue
            q = base
            pats = None
            for i, lo in enumerate(lowers):
                t = tot[lo]
                if i and lo in lowers[:i]:
                    if form.new_copy(lowers, i):
                        q += t + dist[lo] + 2 * t * t
                elif lo not in rest_set:
                    q += t + dist[lo]
                    p = pat[lo]
                    if p >= 0 and p not in rest_pats and (pats is None or p not in pats):
                        q += t * t
                        if pats is None:
                            pats = {p}
                        else:
                            pats.add(p)
            if not tiered:
                tier = OTHER
            elif size == n_rest:
                tier = ELIMINATES
            elif repeated:
                tier = DERIVES
            else:
                tier = self._tier(upper, form, lowers)
            options.append(_make_option(Option, (tier, q, len(options), form, dirs, u, lowers, rest)))

    def _tier(self, upper: _Upper, form: Form, lowers: tuple[int, ...]) -> int:
        """The tier of the pair `form(lowers) -> upper` that takes a new register (see `DERIVES`, `OTHER`)."""
        tot, src = self.tot, upper.src
        if src >= 0:
            # u is a copy of src: a division towards src, or a move towards src's position
            if len(lowers) == 1:
                lo = lowers[0]
                if form is self.division:
                    return DERIVES if tot[lo] <= tot[src] else OTHER
                if form.shifted[0]:
                    sx, sy = self.anchor[src]
                    lx, ly = self.anchor[lo]
                    ux, uy = self.anchor[upper.u]
                    if abs(lx - sx) + abs(ly - sy) < abs(ux - sx) + abs(uy - sy):
                        return DERIVES
            return OTHER
        pat, spat, source, rest_set = self.pat, self.spat, upper.source, upper.rest_set
        for lo in lowers:
            if lo not in rest_set and (pat[lo] < 0 or tot[source.get(spat[lo], lo)] <= tot[lo]):
                return OTHER
        return DERIVES

    def unary_forms(self, u: int) -> list[tuple[Form, tuple[str, ...], tuple[int]]]:
        """The one-operand pairs of goal `u` (memoised): its negation, every move's, and its division's
        (twice `u`)."""
        r = self._unary_forms.get(u)
        if r is not None:
            return r
        if len(self._unary_forms) > 100_000:
            self._unary_forms.clear()
        ug = self.goal_of[u]
        r = []
        if self.negate:
            r.append((self.negate, (), (self.intern(atoms.neg(ug)),)))
        for f in self.moves:
            for dirs, (dx, dy) in f.offsets:
                r.append((f, dirs, (self.intern(atoms.shift(ug, -dx, -dy)),)))
        if self.division:
            r.append((self.division, (), (self.intern(atoms.scale(ug, 2)),)))
        self._unary_forms[u] = r
        return r

    def split_forms(self, split: tuple[int, int]):
        """The lowers of the split `u = a + b` under every binary form (memoised): each part takes a
        term's sign and is moved back by the form's offset when the term is shifted. Per form and
        operand order: the lowers at the offset bringing the parts nearest the origin (`main`, with the lowers
        reading one value twice where the moved part is the kept part moved, `_one_value`), and the
        signed parts (`others`), from which `other_forms` makes the other offsets' lowers on demand; and the
        translation patterns of the parts `others` move and the parts they keep in place, so a bag where
        `other_forms` can find nothing is passed over with two set tests; and every lower of `main`."""
        r = self._split_forms.get(split)
        if r is not None:
            return r
        if len(self._split_forms) > 20_000:
            self._split_forms.clear()
        goal_of = self.goal_of
        a, b = split
        main: list = []
        others: list = []
        for f in self.binary:
            self.tick()
            orders = ((a, b),) if f.symmetric else ((a, b), (b, a))
            for p0, p1 in orders:
                parts = (goal_of[p0], goal_of[p1])
                signed = [p if s > 0 else atoms.neg(p) for p, s in zip(parts, f.signs, strict=True)]
                if not any(f.shifted):
                    l0, l1 = self.intern(signed[0]), self.intern(signed[1])
                    main.append((f, (), (l0, l1)))
                    continue
                best = None
                # the moved parts' distance as `intern` counts it: per atom |c| * (|x - dx| + |y - dy|), plus
                # a term the offset does not change (|c| * z, and |c| more for a negative count)
                fixed = 0
                spots = []
                for part, sh in zip(signed, f.shifted, strict=True):
                    if sh:
                        for x, y, z, c in part:
                            w = c if c > 0 else -c
                            fixed += w * z if c > 0 else w * (z + 1)
                            spots.append((x, y, w))
                for dirs, (dx, dy) in f.offsets:
                    dist = fixed
                    for x, y, w in spots:
                        x -= dx
                        y -= dy
                        dist += w * ((x if x > 0 else -x) + (y if y > 0 else -y))
                    if best is None or dist < best[0]:
                        best = (dist, dirs, (dx, dy))
                _, dirs, off = best
                lowers = tuple(
                    self.intern(atoms.shift(p, -off[0], -off[1]) if sh else p)
                    for p, sh in zip(signed, f.shifted, strict=True)
                )
                main.append((f, dirs, lowers))
                ids = tuple(self.intern(p) for p in signed)
                others.append((f, ids, off))
                same = self._one_value(f, ids, off)
                if same is not None:
                    main.append(same)
        moved_pats = frozenset(self.tpat[p] for f, parts, _ in others for p, sh in zip(parts, f.shifted) if sh)
        kept = frozenset(p for f, parts, _ in others for p, sh in zip(parts, f.shifted) if not sh)
        lows = frozenset(lo for _, _, lowers in main for lo in lowers)
        r = (main, others, moved_pats, kept, lows)
        self._split_forms[split] = r
        return r

    def _one_value(self, f: Form, parts: tuple[int, int], best: tuple[int, int]):
        """The lowers of `f` on one value twice, `x op shift(x)`, where its moved part is its kept part moved
        by an offset `f` can apply (other than `best`, already taken): one new register instead of two."""
        (p0, s0), (p1, s1) = zip(parts, f.shifted, strict=True)
        if s0 == s1 or self.tpat[p0] != self.tpat[p1]:
            return None
        moved, kept = (p0, p1) if s0 else (p1, p0)
        (mx, my), (kx, ky) = self.anchor[moved], self.anchor[kept]
        off = (mx - kx, my - ky)
        dirs = self._offset_dirs[f.macro].get(off)
        if dirs is None or off == best:
            return None
        return (f, dirs, (kept, kept))

    def other_forms(self, others, bag_set, by_tpat) -> list:
        """The lowers of `split_forms`' shifted forms at their other offsets, where a lower is a goal of
        the bag or an input (`by_tpat`: those goals by `tpat`): a shifted part equal to it up to that offset,
        or an unshifted part equal to it (then every offset). Once per such goal among an entry's lowers."""
        out = []
        tpat, anchor, goal_of = self.tpat, self.anchor, self.goal_of
        for f, parts, best in others:
            table = self._offset_dirs[f.macro]
            hits: dict[int, list] = {}
            for p, sh in zip(parts, f.shifted, strict=True):
                if not sh:
                    continue
                px, py = anchor[p]
                for g in by_tpat.get(tpat[p], ()):
                    gx, gy = anchor[g]
                    off = (px - gx, py - gy)
                    if off in table and off != best:
                        offs = hits.setdefault(g, [])
                        if off not in offs:
                            offs.append(off)
            for p, sh in zip(parts, f.shifted, strict=True):
                if not sh and p in bag_set:
                    hits[p] = [o for _, o in f.offsets if o != best]
            for offs in hits.values():
                for off in offs:
                    lowers = tuple(
                        self.intern(atoms.shift(goal_of[p], -off[0], -off[1])) if sh else p
                        for p, sh in zip(parts, f.shifted, strict=True)
                    )
                    out.append((f, table[off], lowers))
        return out
