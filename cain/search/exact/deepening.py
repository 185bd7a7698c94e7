"""The exact search: a shortest program of the goal model and the proof that none is shorter.

Iterative deepening over goal-bags from the kernels back to the inputs, with the complete move set of
the goal model: for every goal of the bag (inputs too) and every macro of the instruction set, every way
the macro's terms can split the goal's atoms (every sub-multiset for two operands, every three-way split
for `add3`, at every offset the macro can read through), negation, every move, the division, a copy for a
goal held twice, and `res`/`res2` for zero goals. A child is kept only if the step fits the register file:
the values alive before it, the result (unless it takes a dying operand's register, where the bus rule
allows) and the macro's scratch registers.

The goal model is the paper's: an instruction's terms split the atoms of its result, never cancelling
one another (`a + b` where `a` and `b` hold atoms of opposite sign at one position is outside it). Within
it nothing is left out, so when depth `k` is exhausted no program of `k` macros exists in the model.
Three reductions keep the search exact:

- a bag that cannot reach the inputs within `r` steps is remembered, under its canonical form for the
  symmetries of the square that map every input onto itself (all eight for a filter's inputs, at the
  origin; every direction is available to every move, so a rotated or mirrored bag needs exactly as many
  instructions);
- children equal up to those symmetries are tried once;
- a child is pruned when a lower bound (`cain.search.exact.bound`) says it needs more steps than are left.

The division of the instruction set is the one that keeps its operand with the fewest scratch registers
(`div` in `all`, `divq` in `basic`): `diva` and `div4` compute the same value and never need fewer
registers than `div` (`diva` reuses the dying operand's register but needs two scratch registers).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.program import Program
from cain.search.budget import Budget, OutOfBudget, Stopped, settle
from cain.search.exact.bound import Kinds, Summary, summary, summary_bound
from cain.search.exact.symmetry import SYMMETRIES, image
from cain.search.goals import atoms
from cain.search.goals.plan import to_program
from cain.search.goals.space import Form, Pair, Space

WORK_PER_NODE = 4096
"""Of a node budget, the work (each sub-multiset, split and child the move set generates: every budget check)
the search may spend per node on average: a deep bag's children are bounded by no node count, so without
it a node budget alone could run for minutes on a goal with large counts."""

TIME_CHECKS = 16
"""The clock is read at every this many budget checks (each a few microseconds of work apart); it divides
`WORK_PER_NODE`."""

MEMO_ITEMS = 2_000_000
"""Most sub-multisets and steps the per-goal memos hold together (a goal with large counts has hundreds of
thousands of sub-multisets)."""


@dataclass
class ExactResult:
    """What the exact search proved and found."""

    program: Program | None
    """The shortest verified, register-allocated program found (None if none within the budget)."""
    plan: Program | None
    """The same program on SSA values, before register allocation."""
    bound: int
    """No program of the goal model with fewer macros exists (proven)."""
    optimal: bool
    """`program` has `bound` macros: it is a shortest program of the goal model."""
    nodes: int
    stopped: Stopped
    """`optimal` (proven), `exhausted` (every length below the known plan refuted, but some plan of the model needed more registers than the count allowed), `nodes` or `time` (the budget ended first)."""


class _Found(Exception):
    def __init__(self, program: Program, plan: Program):
        self.program, self.plan = program, plan


class ExactSearch:
    """Iterative deepening over goal-bags with the goal model's complete move set."""

    def __init__(
        self,
        filt: Filter,
        instruction_set_name: str,
        names: tuple[str, ...],
        allocate,
        budget: Budget | None = None,
        memo_limit: int = 2_000_000,
        max_horizon: int = 3,
        table_limit: int = 3_000_000,
        only: frozenset[str] | None = None,
        inputs: list[atoms.Atoms] | None = None,
    ):
        """`inputs`: the values the program starts from, one per `filt.inputs` (default: the filter's
        initial goals, at the origin); symmetries of the square that move one of them are not used."""
        self.filt = filt
        self.budget = budget or Budget()
        """Nodes, time and resident memory: past the memory limit the memos are emptied, and if that is not
        enough the search stops (`memory`) with the bound proven so far."""
        self._checks = 0
        self._forgot = False
        self.names = names
        self.allocate = allocate
        """`allocate(plan) -> Program | None`: the plan register-allocated, None if it does not fit (the engine
        verifies the program the search returns)."""
        self.memo_limit = memo_limit
        self.registers = len(names)
        self.space = space = Space(
            instruction_set_name,
            filt.depth,
            len(names),
            [atoms.from_goal(g) for g in filt.initial_goals()] if inputs is None else inputs,
            only=only,
            statistics=False,
        )
        self.kinds = Kinds.of(space.macros)
        self.res2 = next((m for m in space.macros.values() if m.scale == 0 and len(m.results) == 2), None)
        self.root = space.bag(atoms.from_goal(g) for g in filt.final_goals())
        self.inputs = set(space.inputs)
        self.input_goals = [space.goal_of[i] for i in space.inputs]
        self._summaries: dict[int, Summary] = {}
        """`cain.search.exact.bound.summary` per goal, for `bound`."""
        self._input_summaries = [summary(g) for g in self.input_goals]
        self.nodes = 0
        self.failed: dict[tuple[int, ...], int] = {}
        self._binaries: dict[int, list] = {}
        self.symmetries = [
            s for s in SYMMETRIES if all(image(s, g) == tuple(sorted(g)) for g in self.input_goals)
        ]
        """The symmetries of the square mapping every input onto itself: a bag and its image need as many
        instructions (every direction is available to every move)."""
        self._sym: list[dict[int, int]] = [{} for _ in self.symmetries]
        self._bounds: dict[tuple[int, ...], int] = {}
        self.rejected = False
        self.max_horizon = max_horizon
        self.table_limit = table_limit
        self.table: dict[tuple[int, ...], int] = {}
        """Sets of non-input goals (sorted ids) -> the fewest instructions computing them, up to `horizon`."""
        self.horizon = 0
        self._level: set = set()
        self._started = False
        self._full = max_horizon == 0
        self._fitting: dict[atoms.Atoms, bool] = {}
        """`_value`'s test by pattern (`atoms.pattern`)."""
        self._operands: dict[tuple[int, ...], list[int]] = {}
        self._reach: set[int] = set()
        """The goals of the forward table and the inputs: a child within its horizon holds no other."""
        self._anchors: dict[atoms.Atoms, set[tuple[int, int]]] = {}
        """The goals of `_reach` by pattern (`atoms.pattern`): the positions of their first atoms."""
        self._shapes: set[tuple[int, int]] = set()
        """(atoms, total count) of the goals of `_reach`: a part of another shape has no pattern there."""
        self._parts: dict[int, list[tuple[atoms.Atoms, atoms.Atoms]]] = {}
        self._held_items = 0
        """Entries of `_parts`, `_near` and `_binaries` together (emptied past `MEMO_ITEMS`)."""
        self._near: dict[tuple[int, int, str], list] = {}
        """(goal, n, generator) -> the generator's steps with at most `n` operands outside the table."""

    # -- bounds and symmetry --------------------------------------------------------------------
    def bound(self, bag: tuple[int, ...], limit: int | None = None) -> int:
        """Steps `bag` needs at least: `cain.search.exact.bound`'s, and the forward table's for its goals.
        Past `limit` it may return the table's alone, which is cheap and prunes nearly every child."""
        b = self._bounds.get(bag)
        if b is None:
            table = self._table_bound(bag, limit)
            if limit is not None and table > limit:
                return table
            if len(self._bounds) > self.memo_limit:
                self._bounds.clear()
            counts: dict[int, int] = {}
            for g in bag:
                counts[g] = counts.get(g, 0) + 1
            summaries = [self._summary(g) for g in bag]
            made = [s for g, s in zip(bag, summaries, strict=True) if g not in self.inputs]
            b = summary_bound(self._goal_count(counts), summaries, made, self._input_summaries, self.kinds)
            b = self._bounds[bag] = max(b, table)
        return b

    def _table_bound(self, bag: tuple[int, ...], limit: int | None = None) -> int:
        """Steps the goals of `bag` need by the forward table (0 before it is built); past `limit`, as soon
        as it is known to be."""
        if not self.horizon:
            return 0
        goals = tuple(sorted({g for g in bag if g not in self.inputs and self.space.goal_of[g]}))
        b = self.table.get(goals, self.horizon + 1)
        if limit is not None and b > limit:
            return b
        # distinct goals are made by distinct instructions: the earliest made of those needing at least c
        # instructions each comes at step c or later, and each other one after it
        alone = sorted((self.table.get((g,), self.horizon + 1) for g in goals), reverse=True)
        for i, c in enumerate(alone):
            b = max(b, c + i)
        return b

    def _summary(self, g: int) -> Summary:
        got = self._summaries.get(g)
        if got is None:
            got = self._summaries[g] = summary(self.space.goal_of[g])
        return got

    # -- the forward table ----------------------------------------------------------------------
    def _embeds(self, goal: atoms.Atoms) -> bool:
        """Whether the signs of `goal` (or of its negation), moved, fit those of a kernel: true of every
        value of a goal-model program (inclusion, moves, negation and halving keep it up the chain)."""
        for sign in (1, -1):
            for gx, gy, gz, gc in self._kernel_atoms:
                x0, y0, z0, c0 = goal[0]
                if z0 != gz or (c0 * sign > 0) != (gc > 0):
                    continue
                dx, dy = gx - x0, gy - y0
                if all(
                    (x + dx, y + dy, z) in self._kernel_signs
                    and self._kernel_signs[(x + dx, y + dy, z)] == (c * sign > 0)
                    for x, y, z, c in goal
                ):
                    return True
        return False

    def _forward(self, horizon: int) -> None:
        """Extend the forward table to `horizon` instructions (or until it would pass `table_limit` entries):
        every set of goals some goal-model program of that many instructions computes, ignoring registers,
        and for each of its subsets the fewest instructions. It bounds the last steps exactly."""
        space = self.space
        if not self._started:
            self._started = True
            self._kernel_signs: dict = {}
            for g in self.root:
                for x, y, z, c in space.goal_of[g]:
                    sign = self._kernel_signs.setdefault((x, y, z), c > 0)
                    if sign != (c > 0):
                        self._kernel_signs[(x, y, z)] = None  # both signs: no value fits this position
            self._kernel_atoms = [a for g in self.root for a in space.goal_of[g]]
            self._level = {()}
            self.table = {(): 0}
        while self.horizon < horizon and self._level and not self._full:
            nxt = set()
            for state in self._level:
                avail = sorted(set(state) | self.inputs)
                for v in self._new_values(avail):
                    if v not in avail:
                        nxt.add(tuple(sorted((*state, v))))
                if len(nxt) * 2 ** (self.horizon + 1) > self.table_limit:
                    self._full = True
                    return
                self._check_budget()
            for state in nxt:
                self._check_budget()
                for n in range(1, len(state) + 1):
                    for sub in itertools.combinations(state, n):
                        if sub not in self.table:
                            self.table[sub] = self.horizon + 1
            self.horizon += 1
            self._level = nxt
            self._bounds.clear()
            self._near.clear()
            self._parts.clear()
            fresh = {g for state in nxt for g in state} - self._reach
            self._reach |= self.inputs | fresh
            for g in fresh | self.inputs:
                goal = space.goal_of[g]
                self._anchors.setdefault(atoms.pattern(goal), set()).add(goal[0][:2])
                self._shapes.add((len(goal), atoms.total(goal)))

    def _new_values(self, avail: list[int]):
        """Every value of a kernel's signs (`_embeds`) one instruction computes from `avail`."""
        for i, a in enumerate(avail):
            yield from self._values((a,))
            for j in range(i, len(avail)):
                yield from self._values((a, avail[j]))
                if self.space.ternary:
                    for c in avail[j:]:
                        yield from self._values((a, avail[j], c))

    def _values(self, operands: tuple[int, ...]) -> list[int]:
        """The values of `_new_values` computed from exactly `operands` (in any order; memoised): per
        operand set, not per form and offset, as most states share most of their operands."""
        got = self._operands.get(operands)
        if got is not None:
            return got
        space = self.space
        if len(operands) == 1:
            values = (value for _, _, value in self._forward_unary(operands[0]))
        elif len(operands) == 2:
            a, b = operands
            values = (
                self._combine(f, off, pair)
                for f in space.binary
                for pair in ([(a, b)] if f.symmetric or a == b else [(a, b), (b, a)])
                for _, off in f.offsets
            )
        else:
            values = (self._combine(f, (0, 0), operands) for f in space.ternary)
        got = self._operands[operands] = [v for v in dict.fromkeys(values) if v is not None]
        return got

    def _value(self, goal: atoms.Atoms) -> int | None:
        """The id of `goal` when it is non-zero and `_embeds` (memoised per pattern: `_embeds` tries every
        translation), else None; only such goals are interned (most a step computes are not)."""
        pattern = atoms.pattern(goal)
        ok = self._fitting.get(pattern)
        if ok is None:
            ok = self._fitting[pattern] = bool(goal) and self._embeds(goal)
        return self.space.intern(goal) if ok else None

    def _forward_unary(self, v: int):
        space = self.space
        goal = space.goal_of[v]
        if space.negate:
            yield space.negate, (), self._value(atoms.neg(goal))
        for f in space.moves:
            for dirs, (dx, dy) in f.offsets:
                yield f, dirs, self._value(atoms.shift(goal, dx, dy))
        if space.division:
            half = atoms.halved(goal)
            if half is not None:
                yield space.division, (), self._value(half)

    def _combine(self, f: Form, offset, operands) -> int | None:
        """The value form `f` computes from `operands`, or None when its terms would cancel."""
        counts: dict = {}
        dx, dy = offset
        goal_of = self.space.goal_of
        for o, sign, sh in zip(operands, f.signs, f.shifted, strict=True):
            for x, y, z, c in goal_of[o]:
                at = (x + dx, y + dy, z) if sh else (x, y, z)
                c = c * sign
                old = counts.get(at)
                if old is None:
                    counts[at] = c
                elif (old > 0) != (c > 0):
                    return None
                else:
                    counts[at] = old + c
        return self._value(atoms.from_counts(counts))

    def _image(self, s: int, g: int) -> int:
        table = self._sym[s]
        r = table.get(g)
        if r is None:
            r = self.space.intern(image(self.symmetries[s], self.space.goal_of[g]))
            table[g] = r
        return r

    def canonical(self, bag: tuple[int, ...]) -> tuple[int, ...]:
        """The least image of `bag` (as sorted goal ids) under the symmetries of the inputs."""
        return min(tuple(sorted([self._image(s, g) for g in bag])) for s in range(len(self.symmetries)))

    # -- the move set ---------------------------------------------------------------------------
    def _lowers(self, f: Form, dirs, offset, parts, held: set[int] | None = None) -> tuple[int, ...] | None:
        """The operands of form `f` at `offset` whose terms are `parts` (in operand order); with `held`, None
        unless `held` has them all (looked up, not interned)."""
        space = self.space
        dx, dy = offset
        out = []
        for p, sign, sh in zip(parts, f.signs, f.shifted, strict=True):
            if sign < 0:
                p = atoms.neg(p)
            if sh:
                p = atoms.shift(p, -dx, -dy)
            if held is None:
                out.append(space.intern(p))
            elif (i := space.id_of.get(p)) in held:
                out.append(i)
            else:
                return None
        return tuple(out)

    def _binary(self, u: int) -> list[tuple[Form, tuple[str, ...], tuple[int, ...]]]:
        """Every two-operand step computing `u`: every split into two sub-multisets, every binary form,
        operand order and offset (memoised)."""
        got = self._binaries.get(u)
        if got is not None:
            return got
        got = []
        for part, rest in self._splits(self.space.goal_of[u]):
            for f in self.space.binary:
                if f.symmetric and part > rest:
                    continue
                for dirs, off in f.offsets:
                    got.append((f, dirs, self._lowers(f, dirs, off, (part, rest))))
        self._remember(self._binaries, u, got)
        return got

    def _binary_from(self, u: int, known: set[int], both: bool):
        """The two-operand steps computing `u` with an operand in `known` (both operands, if `both`)."""
        space = self.space
        goal = space.goal_of[u]
        whole = atoms.counts(goal)
        for f in space.binary:
            for dirs, (dx, dy) in f.offsets:
                for i in (0, 1):
                    j = 1 - i
                    for e in known:
                        part = space.goal_of[e]
                        if f.shifted[i]:
                            part = atoms.shift(part, dx, dy)
                        if f.signs[i] < 0:
                            part = atoms.neg(part)
                        rest = atoms.less(whole, part) if part and part != goal else None
                        if rest is None:
                            continue
                        parts = [part, rest] if i == 0 else [rest, part]
                        lowers = self._lowers(f, dirs, (dx, dy), parts)
                        if both and lowers[j] not in known:
                            continue
                        yield f, dirs, lowers

    def _ternary(self, u: int, known: set[int], new: int, out: int = 3):
        """The three-operand steps computing `u` with at most `new` operands outside `known`, and at most `out`
        outside both `known` and the forward table (as `children` keeps them: `_strangers`)."""
        space = self.space
        goal = space.goal_of[u]
        id_of, reach = space.id_of, self._reach

        def strangers(*goals: atoms.Atoms) -> int:  # `_strangers` of goals not yet interned
            ids = (id_of.get(g) for g in goals)
            return len({g for g, i in zip(goals, ids) if i is None or (i not in known and i not in reach)})

        for f in space.ternary:
            if not all(s == 1 and not sh for s, sh in zip(f.signs, f.shifted, strict=True)):
                raise CainError(f"exact search: no reverse form for the three-operand macro {f.macro}")
            if new >= 3:
                for a, b, c in self._three_way(goal):
                    self._check_budget()
                    yield f, (), (space.intern(a), space.intern(b), space.intern(c))
                continue
            whole = atoms.counts(goal)
            for e in known:
                a = space.goal_of[e]
                w = atoms.less(whole, a) if a and a != goal else None
                if w is None:
                    continue
                if new == 2:
                    for b, c in self._splits(w):
                        if out < 2 and strangers(b, c) > out:
                            continue
                        yield f, (), (e, space.intern(b), space.intern(c))
                    continue
                left = atoms.counts(w)
                for e2 in known:
                    b = space.goal_of[e2]
                    c = atoms.less(left, b) if b and b != w else None
                    if c is None or (out < 1 and strangers(c)):
                        continue
                    c = space.intern(c)
                    if new == 1 or c in known:
                        yield f, (), (e, e2, c)

    def _outside(self, limit: int, rest_counts: dict[int, int]) -> int:
        """How many new goals outside the forward table a child of the rest `rest_counts` may hold within
        `limit` steps: each such goal needs `horizon + 1` steps alone, and distinct goals distinct
        instructions, so `m > 0` of them need `horizon + m` (as `bound` counts them); negative when the
        rest alone needs more."""
        if not self.horizon:
            return 3
        goal_of = self.space.goal_of
        far = sum(1 for g, c in rest_counts.items() if c and goal_of[g] and g not in self._reach)
        return limit - self.horizon - far if far else max(0, limit - self.horizon)

    def _strangers(self, lowers: tuple[int, ...], known: set[int]) -> int:
        """The distinct lowers that are new to the bag and outside the forward table."""
        return len({lo for lo in lowers if lo not in known and lo not in self._reach})

    def _remember(self, table: dict, key, got: list) -> None:
        """Memoise `got` in `table`, first emptying the per-goal memos when they would pass `MEMO_ITEMS`."""
        self._held_items += len(got)
        if self._held_items > MEMO_ITEMS:
            for memo in (self._parts, self._near, self._binaries):
                memo.clear()
            self._held_items = len(got)
        table[key] = got

    def _sub_parts(self, u: int):
        """(part, rest) for every non-empty proper sub-multiset `part` of goal `u` of a shape (atoms, total
        count) some goal of the forward table has (`_shapes`: no other part has a pattern there; memoised
        per horizon unless there are more than the memos hold)."""
        got = self._parts.get(u)
        if got is None:
            goal = self.space.goal_of[u]
            parts = self._shaped_splits(goal)
            if math.prod(abs(c) + 1 for *_, c in goal) > MEMO_ITEMS:
                return parts
            got = list(parts)
            self._remember(self._parts, u, got)
        return got

    def _shaped_splits(self, goal: atoms.Atoms):
        """`_splits` of `goal` (in its order) whose part has a shape of `_shapes`, built atom by atom, depth
        first: a part with more atoms or a larger total than any shape allows is not extended, and the last
        atom takes only the counts that complete a shape."""
        shapes = self._shapes
        most = [max((t for n, t in shapes if n >= m), default=-1) for m in range(len(goal) + 2)]

        def grow(i: int, part: atoms.Atoms, rest: atoms.Atoms, m: int, t: int):
            if i == len(goal):
                if part and rest and (m, t) in shapes:
                    yield part, rest
                return
            self._check_budget()
            x, y, z, c = whole = goal[i]
            s, n = (1, c) if c > 0 else (-1, -c)
            yield from grow(i + 1, part, (*rest, whole), m, t)
            for k in range(1, n + 1):
                if t + k > most[m + 1]:
                    break
                left = (*rest, (x, y, z, s * (n - k))) if k < n else rest
                yield from grow(i + 1, (*part, (x, y, z, s * k)), left, m + 1, t + k)

        return grow(0, (), (), 0, 0)

    def _view(self, part: atoms.Atoms, sign: int):
        """What `part` (negated for sign -1) looks like to the forward table: whether the table holds it,
        its first atom's position, and the positions of the first atoms of the table's goals of its pattern;
        None when it neither holds it nor anything of its pattern."""
        p = part if sign > 0 else atoms.neg(part)
        at = self._anchors.get(atoms.pattern(p))
        if at is None:
            return None
        return self.space.id_of.get(p) in self._reach, p[0][:2], at

    def _near_steps(self, u: int, out: int, make) -> list:
        """`make(u, out)`'s steps computing `u` with at most `out` operands outside the forward
        table (`_binary_near` or `_ternary_near`, memoised per horizon)."""
        key = (u, out, make.__name__)
        got = self._near.get(key)
        if got is None:
            got = list(make(u, out))
            self._remember(self._near, key, got)
        return got

    def _binary_near(self, u: int, out: int):
        """The two-operand steps computing `u` with at most `out` (0 or 1) operands outside the forward
        table: one operand found by its pattern, the other checked when `out` is 0."""
        reach = self._reach
        for part, rest in self._sub_parts(u):
            self._check_budget()
            views = {1: self._view(part, 1), -1: self._view(part, -1)}
            if views[1] is None and views[-1] is None:
                continue
            for f in self.space.binary:
                for i in (0,) if f.symmetric else (0, 1):
                    view = views[f.signs[i]]
                    if view is None:
                        continue
                    held, (ax, ay), at = view
                    if not f.shifted[i]:
                        if not held:
                            continue
                        near = f.offsets
                    else:
                        near = [(dirs, (dx, dy)) for dirs, (dx, dy) in f.offsets if (ax - dx, ay - dy) in at]
                    parts = (part, rest) if i == 0 else (rest, part)
                    for dirs, off in near:
                        lowers = self._lowers(f, dirs, off, parts, None if out else reach)
                        if lowers is not None:
                            yield f, dirs, lowers

    def _ternary_near(self, u: int, out: int):
        """The three-operand steps computing `u` with at most `out` (below 3) operands outside the
        forward table: the first found among the sub-multisets of `u`."""
        space = self.space
        reach = self._reach
        held = [(p, rest) for p, rest in self._sub_parts(u) if space.id_of.get(p) in reach]
        for f in space.ternary:
            if not all(s == 1 and not sh for s, sh in zip(f.signs, f.shifted, strict=True)):
                raise CainError(f"exact search: no reverse form for the three-operand macro {f.macro}")
            for a, w in held:
                self._check_budget()
                # a second operand in the table is one of `u`'s held parts: fewer than all of `w`'s parts
                if out >= 2:
                    second = self._splits(w)
                else:
                    left = atoms.counts(w)
                    second = ((b, c) for b, _ in held if b != w and (c := atoms.less(left, b)) is not None)
                for b, c in second:
                    if out < 1 and space.id_of.get(c) not in reach:
                        continue
                    yield f, (), (space.intern(a), space.intern(b), space.intern(c))

    def _splits(self, goal: atoms.Atoms):
        """(part, rest) for every non-empty proper sub-multiset `part` of `goal`, `rest` the remainder (the
        budget checked at each)."""
        # per atom, its share of the part and of the rest for each count the part takes (None: no share)
        choices = []
        for x, y, z, c in goal:
            s, n = (1, c) if c > 0 else (-1, -c)
            choices.append([((x, y, z, s * k) if k else None, (x, y, z, s * (n - k)) if k < n else None)
                            for k in range(n + 1)])  # fmt: skip
        for combo in itertools.product(*choices):
            self._check_budget()
            part = tuple([a for a, _ in combo if a])
            rest = tuple([b for _, b in combo if b])
            if part and rest:
                yield part, rest

    @staticmethod
    def _three_way(goal: atoms.Atoms):
        """Every split of `goal` into three non-empty sub-multisets, each unordered triple once."""
        per_atom = []
        for x, y, z, c in goal:
            s = 1 if c > 0 else -1
            n = abs(c)
            per_atom.append([(x, y, z, s, i, j, n - i - j) for i in range(n + 1) for j in range(n + 1 - i)])
        for choice in itertools.product(*per_atom):
            a = tuple((x, y, z, s * i) for x, y, z, s, i, _, _ in choice if i)
            b = tuple((x, y, z, s * j) for x, y, z, s, _, j, _ in choice if j)
            c = tuple((x, y, z, s * k) for x, y, z, s, _, _, k in choice if k)
            if a and b and c and a <= b <= c:
                yield a, b, c

    def _goal_count(self, counts: dict[int, int]) -> int:
        """Instructions the goals alone need (`cain.search.exact.bound`'s goal term, without division
        levels)."""
        n = 0
        for g, c in counts.items():
            if not c:
                continue
            if not self.space.goal_of[g] and self.res2 is not None:
                n += (c + 1) // 2
            else:
                n += c - (1 if g in self.inputs else 0)
        return n

    def children(self, bag: tuple[int, ...], limit: int):
        """(pair, child bag, canonical child) for every step of the move set that fits the registers and
        leaves a child the bound allows `limit` steps for, one per child up to the square's symmetries.

        A child within the bound has at most `limit` minus the goal count of the rest of the bag new goals
        (each is one more instruction), so when that is below two (three for `add3`) the operands are
        looked up among the goals of the bag and the inputs instead of enumerating every split."""
        R = self.registers
        seen: set[tuple[int, ...]] = set()
        counts: dict[int, int] = {}
        for g in bag:
            counts[g] = counts.get(g, 0) + 1
        space = self.space
        for u, cu in counts.items():
            rest = list(bag)
            rest.remove(u)
            rest_counts = dict(counts)
            rest_counts[u] -= 1
            new = limit - self._goal_count(rest_counts)
            if new < 0:
                continue
            if not space.goal_of[u]:
                if space.res and len(rest) + 1 <= R:
                    yield from self._emit(seen, (space.res, (), u, ()), tuple(rest), limit)
                if self.res2 is not None and cu >= 2:
                    rest.remove(u)
                    if len(rest) + 2 <= R:
                        yield from self._emit(seen, (self.res2.name, (), u, ()), tuple(rest), limit)
                continue
            if cu >= 2 and space.copy is not None:
                child = tuple(rest)
                if len(child) + 1 <= R:  # the copy's result takes a fresh register
                    yield from self._emit(seen, (space.copy.macro, (), u, (u,)), child, limit)
            known = set(rest) | self.inputs
            out = self._outside(limit, rest_counts)
            if out < 0:
                continue
            near_binary = new >= 2 and out < 2
            near_ternary = bool(space.ternary) and new >= 3 and out < 3
            steps = [space.unary_forms(u)]
            if new < 2:
                steps.append(self._binary_from(u, known, both=new == 0))
            elif not near_binary:
                steps.append(self._binary(u))
            if space.ternary and not near_ternary:
                steps.append(self._ternary(u, known, new))
            # the steps whose operands the table holds (at most `out` outside it), and those reading a goal
            # of the bag outside the table
            extra = {g for g in rest if g not in self._reach}
            if near_binary:
                steps.append(self._near_steps(u, out, self._binary_near))
                steps.append(self._binary_from(u, extra, both=False) if extra else ())
            if near_ternary:
                steps.append(self._near_steps(u, out, self._ternary_near))
                steps.append(self._ternary(u, extra, 2) if extra else ())
            for form, dirs, lowers in itertools.chain(*steps):
                if out < len(lowers) and self._strangers(lowers, known) > out:
                    continue
                child = list(rest)
                share = False
                if len(set(lowers)) == len(lowers):  # one copy of each (`form.copies` all 0), most steps
                    for i, lo in enumerate(lowers):
                        if not rest_counts.get(lo):
                            child.append(lo)
                            share = share or i in form.share
                else:
                    copies = form.copies(lowers)
                    for i, lo in enumerate(lowers):
                        have = rest_counts.get(lo, 0)
                        want = 1 + max(k for k, other in zip(copies, lowers, strict=True) if other == lo)
                        if i == lowers.index(lo) and want > have:
                            child.extend([lo] * (want - have))
                        if want > have and i in form.share:
                            share = True
                if len(child) + form.need + (0 if share else 1) > R:
                    continue
                yield from self._emit(seen, (form.macro, dirs, u, lowers), tuple(sorted(child)), limit)

    def _emit(self, seen: set, pair: Pair, child: tuple[int, ...], limit: int):
        self._check_budget()
        if self.bound(child, limit) > limit:
            return
        key = self.canonical(child)
        if key not in seen:
            seen.add(key)
            yield pair, child, key

    # -- the traversal --------------------------------------------------------------------------
    def _done(self, bag: tuple[int, ...]) -> bool:
        return len(set(bag)) == len(bag) and all(g in self.inputs for g in bag)

    def _visit(self, bag: tuple[int, ...], key: tuple[int, ...], r: int, path: list[Pair], k: int) -> None:
        """Raise `_Found` with a verified program of `k` macros through `bag`, or return when none
        exists within `r` more steps (remembered)."""
        if self._done(bag):
            self._accept(path, k)
            return
        if r == 0 or self.failed.get(key, -1) >= r:
            return
        self.nodes += 1
        if self.budget.out_of_nodes(self.nodes - 1):  # the node past the budget is counted, not searched
            raise OutOfBudget(Stopped.NODES)
        self._check_budget()
        rejected = self.rejected
        self.rejected = False
        for pair, child, ckey in self.children(bag, r - 1):
            if self.failed.get(ckey, -1) >= r - 1:
                continue
            path.append(pair)
            self._visit(child, ckey, r - 1, path, k)
            path.pop()
        if not self.rejected:
            if len(self.failed) >= self.memo_limit:
                self.failed.clear()
            self.failed[key] = r
        self.rejected = self.rejected or rejected

    def _check_budget(self) -> None:
        """Raise `OutOfBudget` past the deadline, past `WORK_PER_NODE` times the node budget in work, or past
        the memory limit once the memos were emptied."""
        self._checks += 1
        if self._checks % TIME_CHECKS:
            return
        self.budget.check_time()
        if self._checks % WORK_PER_NODE:  # the work count only changes here, so it is checked here
            return
        if self.budget.out_of_nodes(self._checks // WORK_PER_NODE):
            raise OutOfBudget(Stopped.NODES)
        settle()
        if self.budget.over_memory():
            if self._forgot:
                raise OutOfBudget(Stopped.MEMORY)
            self._forget()

    def _forget(self) -> None:
        """Empty the memos (kept refutations, bounds, steps): once, the first time memory runs short."""
        memos = (self.failed, self._bounds, self._binaries, self._parts, self._near,
                 self._operands, self._summaries, *self._sym)  # fmt: skip
        for memo in memos:
            memo.clear()
        self._held_items = 0
        self._forgot = True

    def _accept(self, path: list[Pair], k: int) -> None:
        plan = to_program(self.space, self.filt, list(path), shared=True)
        program = self.allocate(plan)
        # at most `k`: `find` searches one depth, where shorter programs are reached too (deepening from the
        # bound finds each at its own depth)
        if program is not None and program.macros <= k:
            raise _Found(program, plan)
        self.rejected = True  # a plan of the model that does not allocate without extra moves

    def run(self, start: int = 0, upper: int | None = None) -> ExactResult:
        """Deepen from the bound (or `start`) until a verified program is found, a length reaches `upper`
        (a program that long is known), or the budget ends."""
        self._check_registers()
        proven = max(start, self.bound(self.root))
        k = proven
        while upper is None or k < upper:
            done = self._depth(k, proven, proven == k)
            if done is not None:
                return done
            if not self.rejected and proven == k:
                proven = k + 1
            k += 1
        return ExactResult(
            None, None, proven, False, self.nodes, Stopped.OPTIMAL if proven == upper else Stopped.EXHAUSTED
        )

    def find(self, length: int) -> ExactResult:
        """A program of at most `length` macros, from one search at that depth: quicker than deepening up to
        it, and it proves nothing about shorter lengths (the bound is `bound`'s, `optimal` false)."""
        self._check_registers()
        proven = self.bound(self.root)
        done = self._depth(length, proven, False)
        if done is not None:
            return done
        refuted = proven if self.rejected else max(proven, length + 1)
        return ExactResult(None, None, refuted, False, self.nodes, Stopped.EXHAUSTED)

    def _depth(self, k: int, proven: int, optimal: bool) -> ExactResult | None:
        """One depth-first search at depth `k`: its result when it finds a program (`optimal` as given) or
        the budget ends, else None, `rejected` saying whether a plan of the model failed to allocate."""
        self.rejected = False
        try:
            if not self._full:
                self._forward(min(self.max_horizon, k - 1))
            self._visit(self.root, self.canonical(self.root), k, [], k)
        except _Found as found:
            return ExactResult(found.program, found.plan, proven, optimal, self.nodes, Stopped.OPTIMAL)
        except OutOfBudget as stop:
            return ExactResult(None, None, proven, False, self.nodes, stop.reason)
        return None

    def _check_registers(self) -> None:
        if len(self.root) > self.registers:
            raise CainError(
                f"exact search: the filter has {len(self.root)} kernels but only {self.registers} registers"
            )
