"""The exact search in ICWs: a shortest bus micro-op program of a small filter, and the proof.

Iterative deepening on the number of micro-ops, forwards from the inputs in their registers. A state is
what every register of the file and NEWS hold (a goal, or nothing usable); a step is any micro-op of
`cain.model.isa.BUS_KINDS` the rules of `check_bus` allow: `bus` with one to four sources, `bus2` with
one or two, `bus3` with one, each source a register, NEWS or a neighbour's NEWS (`XN`..`XW`), each
destination a register, NEWS or a neighbour's NEWS; without sources, zero into outputs whose kernel is 0.

**The model** (what "optimal" means here). Besides the bus rules, a program of the model obeys:

- the rules `cain.backend.bus_synth` keeps: a micro-op that writes NEWS or a neighbour's NEWS reads none
  of them, and writes at most one of them (they are one physical register);
- no micro-op's sources cancel: the sources never hold atoms of opposite signs at one position (the goal
  model of `cain.search.exact.deepening`, at bus level), and no register is read before the program sets it;
- every value is a whole goal at the filter's depth: a `bus2` (`bus3`) only halves (thirds) a sum whose
  counts are all even (multiples of three).

Within it nothing is left out, so when depth `k` is exhausted no program of `k` micro-ops exists in the
model. The reductions that keep the search exact:

- without cancelling, every value a program writes lies inside a kernel it reaches: its signs, moved at
  most one PE per micro-op left (none for a register value with one left: the last micro-op reads it in
  place), lie on the kernel's with counts at most `3^j` times its own (`j` micro-ops left to divide it).
  A value that does not is never written, and a partial sum of sources that already fails is not
  extended;
- a micro-op whose result is overwritten everywhere before anything reads it, or never read at all,
  could be deleted, leaving a shorter program, which deepening has refuted first: such programs are
  skipped (each register carries an "unread" flag, and the last micro-op reads every unread value);
- registers that are not outputs are interchangeable (what they hold is all that matters), and a
  dihedral symmetry of the square that maps every kernel onto itself maps programs onto programs: states
  equal up to both are searched once (`canonical`), and a state refuted with `r` steps left is
  remembered;
- a state is pruned when a lower bound says it needs more steps than are left (`bound`): one write per
  unfinished output, one `bus2` per halving between the values held and a kernel's odd counts, and for
  each atom of a kernel the shortest path to it from an atom held: one step per unit of distance (a
  micro-op moves a value at most one PE under the NEWS rules above), at least one, and one more when the
  parity is wrong (every micro-op negates and sources never cancel, so an atom reaches the kernel's sign
  from a held atom of the same sign in an even number of steps, from one of the other sign in an odd one);
- with one step left, the last micro-op is found by covering `-n` times the kernel with the values that
  lie inside it (`_last`), and a child that it cannot finish is not made;
- with two steps left, a child is made only if a relaxation of the last two micro-ops allows it
  (`two_steps`): the last one's sources cover `-n` times the kernel with what the child holds and one or
  more copies of one new value `w` (found by dividing what is left by the offsets it is read at), and
  one micro-op writes `w` from what the child holds; with two outputs left, one micro-op writes each, the
  second also from copies of the first. Three steps from the end, a result is tested once for every
  choice of its destinations (`_may_finish`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from cain.backend.bus_synth import NEWS_FAMILY, synthesize
from cain.backend.verify import verify_bus
from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.isa import BUS_KINDS, DIRECTIONS, NEIGHBOUR_NEWS, NEWS, MicroOp, check_bus
from cain.model.program import Program
from cain.search.budget import Budget, OutOfBudget, Stopped
from cain.search.exact.symmetry import SYMMETRIES, Symmetry, image

Value = int
"""An interned goal (an index into `ExactBusSearch.goal_of`); `UNSET` is a register holding no value."""
UNSET = 0

READ_SHIFT: dict[str, tuple[int, int]] = {NEWS: (0, 0)} | {
    NEIGHBOUR_NEWS[d]: DIRECTIONS[d] for d in DIRECTIONS
}
"""How far a source of the NEWS family moves the atoms of what NEWS holds."""

NEAR = tuple((dx, dy) for dx in range(-2, 3) for dy in range(-2, 3) if abs(dx) + abs(dy) <= 2)
"""How far a value written into NEWS (or a neighbour's) moves by the time a source reads it."""


@dataclass
class ExactBusResult:
    """What the exact ICW search proved and found."""

    ops: list[MicroOp] | None
    """The shortest verified micro-op program found (None if none within the budget or below `upper`)."""
    bound: int
    """No program of the model (module docstring) has fewer micro-ops: proven."""
    optimal: bool
    """`ops` has `bound` micro-ops."""
    nodes: int
    stopped: Stopped
    """`optimal`, `upper` (every length below the given upper bound refuted), `nodes` or `time`."""


class _Found(Exception):
    def __init__(self, ops: list[MicroOp]):
        self.ops = ops


Source = tuple[str | int, Value]
"""What a micro-op reads: (the copy index of a register value, or a NEWS-family name; the value)."""


class ExactBusSearch:
    """Iterative deepening over register states with every micro-op of the model."""

    def __init__(
        self,
        filt: Filter,
        names: Sequence[str] | None = None,
        budget: Budget | None = None,
        memo_limit: int = 1_000_000,
        symmetry: bool = True,
        last_step: bool = True,
    ):
        self.filt = filt
        self.names = tuple(names or filt.registers)
        self.budget, self.memo_limit = budget or Budget(), memo_limit
        self.last_step = last_step
        """Find the last micro-op by covering the kernel, and prune what it could not read (False: the
        generic steps all the way, for tests)."""
        R = self.R = len(self.names)
        self.slot_name = (*self.names, NEWS)
        index = {r: i for i, r in enumerate(self.names)}
        missing = [r for _, r in filt.inputs if r not in index] + [
            k.register for k in filt.kernels if k.register not in index
        ]
        if missing:
            raise CainError(f"exact search: register(s) {', '.join(missing)} are not in the register file")
        self.goal_of: list[tuple | None] = [None]
        self.id_of: dict[tuple, int] = {}
        self._shift: dict[tuple[int, int, int], int] = {}
        self._fits: dict[tuple[int, int], bool] = {}
        self._fits_counts: dict[tuple, bool] = {}
        self._tclass: dict[int, tuple] = {}
        self._val: dict[int, int] = {}
        self._far: dict[tuple, int] = {}
        self._bounds: dict[tuple, int] = {}
        self.outputs = [(index[k.register], self.intern(_goal_atoms(k.goal))) for k in filt.kernels]
        if len({s for s, _ in self.outputs}) != len(self.outputs):
            raise CainError("exact search: two outputs share a register")
        self.goals = dict(self.outputs)
        """Output register slot -> its goal."""
        self.free_slots = [i for i in range(R) if i not in set(self.goals)]
        start = [UNSET] * (R + 1)
        for goal, (_, reg) in zip(filt.initial_goals(), filt.inputs, strict=True):
            start[index[reg]] = self.intern(_goal_atoms(goal))
        self.start = tuple(start)
        self._kernels = [self.counts(g) for _, g in self.outputs]
        self.symmetries = [
            s for s in SYMMETRIES
            if all(self._image(s, g) == g for _, g in self.outputs) and all(self._image(s, v) == v for v in start if v)
        ] if symmetry else [SYMMETRIES[0]]  # fmt: skip
        self._sym: dict[tuple, int] = {}
        self._last_reads: dict[tuple[int, bool], bool] = {}
        self._sums: dict[tuple[int, int], dict] = {}
        self._insides: dict[tuple[int, int, int], bool] = {}
        self._twos: dict[tuple, bool] = {}
        self._readings_memo: dict[tuple, list] = {}
        self._targets = [
            {(x, y, z): -n * c for x, y, z, c in self.goal_of[g]} for _, g in self.outputs for n in (1, 2, 3)
        ]
        """What the last micro-op's sources add up to: `-n` times a kernel, for `bus`, `bus2`, `bus3`."""
        self.failed: dict[tuple, int] = {}
        self.nodes = 0

    # -- values ---------------------------------------------------------------------------------
    def intern(self, atoms: tuple) -> Value:
        i = self.id_of.get(atoms)
        if i is None:
            i = self.id_of[atoms] = len(self.goal_of)
            self.goal_of.append(atoms)
        return i

    def shifted(self, v: Value, dx: int, dy: int) -> Value:
        if not (dx or dy):
            return v
        key = (v, dx, dy)
        got = self._shift.get(key)
        if got is None:
            got = self._shift[key] = self.intern(
                tuple((x + dx, y + dy, z, c) for x, y, z, c in self.goal_of[v])
            )
        return got

    def _image(self, s: Symmetry, v: Value) -> Value:
        return self.intern(image(s, self.goal_of[v]))

    def counts(self, v: Value) -> dict:
        """The atoms of `v` as counts by position."""
        return {(x, y, z): c for x, y, z, c in self.goal_of[v]}

    def tclass(self, v: Value) -> tuple:
        """`v` up to translation: reading any translate of a value reads what one micro-op wrote."""
        got = self._tclass.get(v)
        if got is None:
            atoms = self.goal_of[v]
            x0, y0 = (atoms[0][0], atoms[0][1]) if atoms else (0, 0)
            got = self._tclass[v] = tuple((x - x0, y - y0, z, c) for x, y, z, c in atoms)
        return got

    def fits(self, counts: dict, factor: int, reach: int) -> bool:
        """Whether the atoms `counts` (or their negation), moved by at most `reach` PEs, lie on atoms of one
        kernel with the same signs and at most `factor` times its counts: true of every value that reaches
        that kernel through micro-ops that move it `reach` PEs at most and divide it by `factor` at most."""
        key = (frozenset(counts.items()), factor, reach)
        got = self._fits_counts.get(key)
        if got is None:
            got = self._fits_counts[key] = self._fits_uncached(counts, factor, reach)
        return got

    def _fits_uncached(self, counts: dict, factor: int, reach: int) -> bool:
        (x0, y0, z0), c0 = next(iter(counts.items()))
        for kernel in self._kernels:
            for (gx, gy, gz), gc in kernel.items():
                dx, dy = gx - x0, gy - y0
                if gz != z0 or abs(c0) > factor * abs(gc) or abs(dx) + abs(dy) > reach:
                    continue
                if _lies_on(counts, kernel, dx, dy, 1 if (gc > 0) == (c0 > 0) else -1, factor):
                    return True
        return False

    def fits_near(self, counts: dict, factor: int, offsets, sign: int) -> bool:
        """Whether the atoms `counts`, moved by one of `offsets`, lie on atoms of a kernel with its signs
        (`sign` 1) or the opposite ones (-1) and at most `factor` times its counts: a partial sum of sources
        whose result the last micro-op reads (or that is an output's goal, negated)."""
        return any(_lies_on(counts, k, dx, dy, sign, factor) for k in self._kernels for dx, dy in offsets)

    def fits_value(self, v: Value, factor: int, reach: int) -> bool:
        """`fits` for an interned value (memoised)."""
        key = (v, factor, reach)
        got = self._fits.get(key)
        if got is None:
            got = bool(self.goal_of[v]) and self.fits(self.counts(v), factor, reach)
            self._fits[key] = got
        return got

    def val2(self, v: Value) -> int:
        """The 2-adic valuation of `v`'s counts (the most halvings it survives as a whole goal)."""
        got = self._val.get(v)
        if got is None:
            got = min(((c & -c).bit_length() - 1 for *_, c in self.goal_of[v]), default=64)
            self._val[v] = got
        return got

    # -- the bound --------------------------------------------------------------------------------
    def bound(self, vals: tuple[Value, ...]) -> int:
        """Micro-ops still needed from `vals` at least (module docstring): one write per distinct unfinished
        goal, one `bus2` per halving between the smallest 2-adic valuation held and a goal's (only a `bus2`
        lowers it, by one), and the shortest path from an atom held to each of a goal's atoms (`_path`)."""
        got = self._bounds.get(vals)
        if got is not None:
            return got
        todo = tuple(g for s, g in self.outputs if vals[s] != g)
        held = tuple(sorted({v for v in vals if v}))
        key = (held, todo)
        b = self._far.get(key)
        if b is None:
            b = len(set(todo))
            if todo:
                low = min((self.val2(v) for v in held if self.goal_of[v]), default=0)
                points = {(x, y, z, c > 0) for v in held for x, y, z, c in self.goal_of[v]}
                for g in todo:
                    b = max(b, low - self.val2(g))
                    for x, y, z, c in self.goal_of[g]:
                        near = min(
                            (
                                _path(abs(x - px) + abs(y - py), up == (c > 0))
                                for px, py, pz, up in points
                                if pz == z
                            ),
                            default=1 << 20,
                        )
                        b = max(b, near)
            self._far[key] = b
        if len(self._bounds) > self.memo_limit:
            self._bounds.clear()
            self._far.clear()
        self._bounds[vals] = b
        return b

    def canonical(self, vals: tuple[Value, ...], unread: tuple[bool, ...]) -> tuple:
        """The state up to interchangeable registers and the filter's symmetries."""
        best = None
        for s in self.symmetries:
            if s is SYMMETRIES[0]:
                image = vals
            else:
                image = tuple(self._sym_image(s, v) for v in vals)
            key = (
                tuple((image[o], unread[o]) for o, _ in self.outputs),
                (image[self.R], unread[self.R]),
                tuple(sorted((image[i], unread[i]) for i in self.free_slots)),
            )
            if best is None or key < best:
                best = key
        return best

    def _sym_image(self, s, v: Value) -> Value:
        if not v:
            return v
        key = (s, v)
        got = self._sym.get(key)
        if got is None:
            got = self._sym[key] = self._image(s, v)
        return got

    # -- the steps ----------------------------------------------------------------------------------
    def steps(self, vals: tuple[Value, ...], unread: tuple[bool, ...], left: int):
        """(micro-op, values after, unread flags after) for every micro-op of the model from `vals` whose
        result can still reach an output with `left` micro-ops after it."""
        R = self.R
        factor = 3**left
        todo = {g for s, g in self.outputs if vals[s] != g}
        holders, items = self._sources(vals)
        # destinations: output registers, a few registers of each class of interchangeable others, NEWS and
        # the neighbours' NEWS (the latter only for micro-ops reading none of them)
        regs_out = [(s, self.slot_name[s]) for s, _ in self.outputs]
        classes: dict[tuple, list[int]] = {}
        for i in self.free_slots:
            classes.setdefault((vals[i], unread[i]), []).append(i)
        regs_free = [(i, self.slot_name[i]) for members in classes.values() for i in members[::-1][:3]]
        news_dests = [(R, NEWS)] + [(R, NEIGHBOUR_NEWS[d]) for d in DIRECTIONS]
        classes_of = [self.tclass(v) if v else None for v in vals]
        zero = [(s, self.slot_name[s]) for s, g in self.outputs if not self.goal_of[g] and vals[s] != g]
        if zero:  # no sources: zero to one, two or three destinations, one of them a zero output
            empty, dests = self.intern(()), zero + regs_free + news_dests
            for kind in BUS_KINDS:
                for step in self._place(vals, unread, classes_of, kind, (), {}, empty, left, dests):
                    if any(d in zero for d in step[0][1]):
                        yield step
        stack = [((), {}, 0, False)]
        while stack:
            chosen, counts, start, reads_news = stack.pop()
            if chosen:
                n = len(chosen)
                cands = regs_out + regs_free if reads_news else regs_out + regs_free + news_dests
                for kind, (dests, most) in BUS_KINDS.items():
                    if n > most or any(c % dests for c in counts.values()):
                        continue
                    result = {a: -c // dests for a, c in counts.items()}
                    if left and not self.fits(result, factor, left if reads_news else left + 1):
                        continue
                    w = self.intern(tuple(sorted((x, y, z, c) for (x, y, z), c in result.items())))
                    if not left and w not in todo:
                        continue
                    if left == 2 and self.last_step and not self._may_finish(vals, w, dests, reads_news):
                        continue
                    yield from self._place(vals, unread, classes_of, kind, chosen, holders, w, left, cands)
            if len(chosen) == 4:
                continue
            n = len(chosen) + 1
            for i in range(start, len(items)):
                tag, v = items[i]
                if isinstance(tag, int) and tag > 0 and items[i - 1] not in chosen:
                    continue  # the k-th copy of a register value only after the (k-1)-th
                new = dict(counts)
                for x, y, z, c in self.goal_of[v]:
                    old = new.get((x, y, z))
                    if old is None:
                        new[(x, y, z)] = c
                    elif (old > 0) != (c > 0):
                        break
                    else:
                        new[(x, y, z)] = old + c
                else:
                    scale = 3 if n == 1 else 2 if n == 2 else 1
                    news_after = reads_news or isinstance(tag, str)
                    if left == 1 and self.last_step:  # the last micro-op reads it: in place, or moved by NEWS
                        near = self.fits_near(new, 3 * scale, ((0, 0),) if news_after else NEAR, 1)
                        near = near or self.fits_near(new, scale, ((0, 0),), -1)  # an output written now
                    else:
                        near = self.fits(new, factor * scale, left + 1 if left and not news_after else left)
                    if near:
                        stack.append(((*chosen, items[i]), new, i + 1, reads_news or isinstance(tag, str)))
            self.budget.check_time()

    def _sources(self, vals: tuple[Value, ...]) -> tuple[dict[Value, list[int]], list[Source]]:
        """What a micro-op may read from `vals`: the registers holding each value, and the sources as
        (copy index of a register value, or NEWS-family name; value): a value held in m registers can be
        read up to m times, and NEWS through every read of its family."""
        holders: dict[Value, list[int]] = {}
        for i in range(self.R):
            v = vals[i]
            if v and self.goal_of[v]:
                holders.setdefault(v, []).append(i)
        items: list[Source] = [(k, v) for v, regs in holders.items() for k in range(len(regs))]
        news = vals[self.R]
        if news and self.goal_of[news]:
            for name, (dx, dy) in READ_SHIFT.items():
                items.append((name, self.shifted(news, dx, dy)))
        return holders, items

    def _place(self, vals, unread, classes_of, kind, chosen, holders, w: Value, left: int, cands):
        """Every choice of destinations among `cands` for result `w` of a `kind` micro-op reading `chosen`."""
        R = self.R
        n = BUS_KINDS[kind][0]
        factor = 3**left
        need: dict[Value, int] = {}
        for tag, v in chosen:
            if isinstance(tag, int):
                need[v] = need.get(v, 0) + 1
        read = {self.tclass(v) for _, v in chosen}
        flags = [f and classes_of[i] not in read for i, f in enumerate(unread)]
        stored = {}
        for s, name in cands:
            if s == R and name != NEWS:
                dx, dy = READ_SHIFT[name]
                v = self.shifted(w, -dx, -dy)
            else:
                v = w
            if left and self.goals.get(s) != v:
                if left == 1 and self.last_step and not self.read_last(v, s == R):
                    continue
                if not self.fits_value(v, factor, left):
                    continue
            stored[(s, name)] = v
        usable = [c for c in cands if c in stored]
        for dests in itertools.combinations(usable, n) if n > 1 else ((c,) for c in usable):
            if n > 1 and sum(1 for s, _ in dests if s == R) > 1:
                continue
            slots = {s for s, _ in dests}
            if need and any(sum(1 for r in holders[v] if r not in slots) < k for v, k in need.items()):
                continue
            new = list(vals)
            for d in dests:
                new[d[0]] = stored[d]
            dead = False
            for s in slots:
                if flags[s] and vals[s] != new[s]:
                    cls = classes_of[s]
                    if not any(new[i] and self.tclass(new[i]) == cls for i in range(R + 1)):
                        dead = True
                        break
            if dead:
                continue
            new_t = tuple(new)
            if not left and any(new_t[s] != g for s, g in self.outputs):
                continue
            if self.bound(new_t) > left:
                continue
            new_flags = list(flags)
            for s in slots:
                new_flags[s] = True
            new_flags = tuple(new_flags)
            if left == 1 and self.last_step and self._last(new_t, new_flags) is None:
                continue
            if left == 2 and self.last_step and not self.two_steps(new_t):
                continue
            yield (kind, dests, chosen), new_t, new_flags

    # -- the traversal --------------------------------------------------------------------------------

    def _visit(self, vals, unread, r: int, path: list) -> None:
        if all(vals[s] == g for s, g in self.outputs):
            raise _Found(self._program(path))
        if r == 0:
            return
        self.nodes += 1
        if not self.nodes % 4096:
            for memo in (
                self._fits, self._fits_counts, self._insides, self._last_reads, self._shift, self._sym, self._tclass,
                self._twos, self._readings_memo,
            ):  # fmt: skip
                if len(memo) > self.memo_limit:
                    memo.clear()
        self.budget.check(self.nodes - 1)  # the node past the budget is counted, not searched
        if r == 1 and self.last_step:
            last = self._last(vals, unread)
            if last is not None:
                path.append((last, vals))
                raise _Found(self._program(path))
            return
        seen: set = set()
        for step, child, flags in self.steps(vals, unread, r - 1):
            key = self.canonical(child, flags)
            if key in seen or self.failed.get(key, -1) >= r - 1:
                continue
            seen.add(key)
            path.append((step, vals))
            self._visit(child, flags, r - 1, path)
            path.pop()
            if len(self.failed) >= self.memo_limit:
                self.failed.clear()
            self.failed[key] = r - 1

    def unread_classes(self, vals: tuple[Value, ...], unread: tuple[bool, ...]) -> set[tuple]:
        """The values (up to translation) that the rest of a shortest program must read: written, not read
        since, and not a finished output (else the micro-op that wrote them could be deleted)."""
        done = {self.tclass(g) for s, g in self.outputs if vals[s] == g}
        return {self.tclass(vals[i]) for i, f in enumerate(unread) if f} - done

    def _last(self, vals: tuple[Value, ...], unread: tuple[bool, ...]):
        """The micro-op that finishes every output from `vals` at once, or None: its sources are found among
        the values that lie inside `-n` times the kernel, by covering what is left of it. It reads every
        value `unread_classes` names."""
        R = self.R
        must = self.unread_classes(vals, unread)
        if len(must) > 4:
            return None
        todo = [(s, g) for s, g in self.outputs if vals[s] != g]
        goal = todo[0][1]
        if any(g != goal for _, g in todo):
            return None
        slots = {s for s, _ in todo}
        holders: dict[Value, list[int]] = {}
        for i in range(R):
            if i not in slots and vals[i] and self.goal_of[vals[i]]:
                holders.setdefault(vals[i], []).append(i)
        news = vals[R] if vals[R] and self.goal_of[vals[R]] else None
        for kind, (n, most) in BUS_KINDS.items():
            if n < len(todo):
                continue
            target = self._target(goal, n)
            items = []
            for v, regs in holders.items():
                if self._inside_target(v, goal, n):
                    items += [(k, v) for k in range(len(regs))]
            if news is not None:
                for name, (dx, dy) in READ_SHIFT.items():
                    v = self.shifted(news, dx, dy)
                    if self._inside_target(v, goal, n):
                        items.append((name, v))
            if must - {self.tclass(v) for _, v in items}:
                continue
            for chosen in self._covers(items, 0, target, (), most) if target else [()]:
                if must - {self.tclass(v) for _, v in chosen}:
                    continue
                need: dict[Value, int] = {}
                for t, v in chosen:
                    if isinstance(t, int):
                        need[v] = need.get(v, 0) + 1
                # further destinations of a bus2/bus3: registers no source needs, a finished twin, NEWS
                spare = [(s, self.slot_name[s]) for s, g in self.outputs if g == goal and s not in slots]
                for i in self.free_slots:
                    v = vals[i]
                    if v in need:
                        if len(holders[v]) <= need[v]:
                            continue
                        need[v] += 1  # this holder becomes a destination: one fewer to read from
                    spare.append((i, self.slot_name[i]))
                if not any(isinstance(t, str) for t, _ in chosen):
                    spare.append((R, NEWS))
                if len(spare) >= n - len(todo):
                    dests = [(s, self.slot_name[s]) for s, _ in todo] + spare[: n - len(todo)]
                    return (kind, tuple(dests), chosen)
        return None

    def _may_finish(self, vals: tuple[Value, ...], w: Value, n: int, reads_news: bool) -> bool:
        """Whether a micro-op writing `w` to `n` destinations may leave a state that `two_steps` keeps,
        wherever it writes: tested on more than any placement holds (nothing overwritten, `w` in `n`
        registers, and unless the micro-op reads NEWS, in NEWS or a neighbour's NEWS instead of one), which
        `two_steps` can only keep more readily. Not tested (True) when an output is done or `w` is one."""
        R = self.R
        if any(vals[s] == g or w == g for s, g in self.outputs):
            return True
        done = tuple(False for _ in self.outputs)
        regs = tuple(v for v in vals[:R] if v)
        if self.two_steps_of(regs + (w,) * n, vals[R], done):
            return True
        if reads_news:
            return False
        regs += (w,) * (n - 1)
        return any(self.two_steps_of(regs, self.shifted(w, -dx, -dy), done) for dx, dy in READ_SHIFT.values())

    def two_steps(self, vals: tuple[Value, ...]) -> bool:
        """Whether two micro-ops may still finish every output from `vals`, in a relaxation of the model:
        False proves that none can (memoised). The last micro-op's sources add up to `-n` times the goal
        left; one or more of them are the value `w` the micro-op before writes, read from the registers it
        wrote and through NEWS (else that micro-op could be deleted, unless it writes the goal itself), the
        others are read from what `vals` holds; and `w` is the negated sum, divided, of what `vals` holds.
        Left out, so that the test only errs towards True: which registers the first micro-op overwrites,
        and which values must be read."""
        return self.two_steps_of(
            tuple(v for v in vals[: self.R] if v), vals[self.R], tuple(vals[s] == g for s, g in self.outputs)
        )

    def two_steps_of(self, regs: tuple[Value, ...], news: Value, done: tuple[bool, ...]) -> bool:
        """`two_steps` of the values `regs` held in registers, `news` in NEWS and the outputs `done`."""
        key = (tuple(sorted(regs)), news, done)
        got = self._twos.get(key)
        if got is None:
            got = self._twos[key] = self._two_steps(regs, news, done)
        return got

    def _two_steps(self, regs: tuple[Value, ...], news: Value, done: tuple[bool, ...]) -> bool:
        todo = {g for (_, g), d in zip(self.outputs, done) if not d}
        if len(todo) > 2 or not all(self.goal_of[g] for g in todo):
            return True
        items = [v for v in regs if self.goal_of[v]]
        if news and self.goal_of[news]:
            items += [self.shifted(news, dx, dy) for dx, dy in READ_SHIFT.values()]
        index = self._index(items)
        if len(todo) == 2:  # one goal per micro-op
            first, second = todo
            return self._in_turn(items, index, first, second) or self._in_turn(items, index, second, first)
        (goal,) = todo
        held = index.keys()
        if self._makes(items, self.counts(goal), index):
            return True  # the first micro-op writes the goal (into an output), the last one another copy
        tried: set[tuple] = set()
        for n, most in BUS_KINDS.values():
            target = self._target(goal, n)
            inside = [v for v in items if self._inside(v, target)]
            for rest, used in self._rests(inside, 0, target, most - 1, 0):
                for key, w, need in self._readings(rest, most - used):
                    if need <= held and key not in tried:
                        tried.add(key)
                        if self._makes(items, w, index):
                            return True
        return False

    def _index(self, items: list) -> dict[tuple, list[int]]:
        """The items holding each atom, by sign (for `_cover`)."""
        index: dict[tuple, list[int]] = {}
        for i, v in enumerate(items):
            for x, y, z, c in self.goal_of[v]:
                index.setdefault(((x, y, z), c > 0), []).append(i)
        return index

    def _in_turn(self, items: list, index: dict, first: Value, second: Value) -> bool:
        """Whether one micro-op writes `first` from `items`, and the next one `second` from `items` and
        copies of `first`: in place (in up to three registers) and at every offset NEWS can carry it by
        (more copies than a micro-op writes, so that the test only errs towards True)."""
        if not self._makes(items, self.counts(first), index):
            return False
        more = items + [first] * 3 + [self.shifted(first, dx, dy) for dx, dy in NEAR]
        return self._makes(more, self.counts(second), self._index(more))

    def _rests(self, items: list, start: int, target: dict, limit: int, used: int):
        """(what is left of `target`, how many of `items` taken) for every choice of at most `limit` of
        `items` (from `start` on) whose sum lies inside `target` and leaves something."""
        yield target, used
        if used == limit:
            return
        for i in range(start, len(items)):
            v = items[i]
            if not self._inside(v, target):
                continue
            left = self._minus(target, v)
            if left:
                yield from self._rests(items, i + 1, left, limit, used + 1)

    def _readings(self, rest: dict, room: int) -> list[tuple[tuple, dict, frozenset]]:
        """Every value `w` whose copies, at most `room` of them, add up to `rest` as one micro-op reads them:
        `k` from registers (in place) and the others through NEWS, each of its names at most once, from
        `w` written into NEWS or a neighbour's NEWS; each with the atoms, by sign, that the sources of a
        micro-op writing it must hold (memoised)."""
        key = (tuple(sorted(rest.items())), room)
        got = self._readings_memo.get(key)
        if got is not None:
            return got
        total = sum(abs(c) for c in rest.values())
        found: dict[tuple, dict] = {}
        reads = list(READ_SHIFT.values())
        for copies in range(1, room + 1):
            if total % copies:
                continue
            for k in range(min(copies, 3) + 1):
                for write in reads if k < copies else [(0, 0)]:
                    for chosen in itertools.combinations(reads, copies - k):
                        offsets = [(0, 0)] * k + [(write[0] + dx, write[1] + dy) for dx, dy in chosen]
                        w = _deconvolve(rest, offsets)
                        if w is not None:
                            found.setdefault(tuple(sorted(w.items())), w)
        got = self._readings_memo[key] = [
            (k, w, frozenset((a, c < 0) for a, c in w.items())) for k, w in found.items()
        ]
        return got

    def _makes(self, items: list, w: dict, index: dict) -> bool:
        """Whether one micro-op writes `w` from `items`: at most `most` of them add up to `-n` times it
        (`index`: the items holding each atom, by sign)."""
        for n, most in BUS_KINDS.values():
            if self._cover(items, {a: -n * c for a, c in w.items()}, most, index, ()):
                return True
        return False

    def _cover(self, items: list, rest: dict, most: int, index: dict, used: tuple) -> bool:
        """Whether at most `most` of `items` not `used` add up to exactly `rest`: its smallest atom first."""
        first = min(rest)
        for i in index.get((first, rest[first] > 0), ()):
            v = items[i]
            if i in used or not self._inside(v, rest):
                continue
            left = self._minus(rest, v)
            if not left or most > 1 and self._cover(items, left, most - 1, index, (*used, i)):
                return True
        return False

    def _covers(self, items: list, start: int, rest: dict, chosen: tuple, most: int):
        """Every choice of at most `most` of `items` (from `start` on, a register value's k-th copy only
        after its (k-1)-th) adding up to exactly `rest`."""
        for i in range(start, len(items)):
            tag, v = items[i]
            if isinstance(tag, int) and tag > 0 and items[i - 1] not in chosen:
                continue
            if not self._inside(v, rest):
                continue
            left = self._minus(rest, v)
            now = (*chosen, items[i])
            if not left:
                yield now
            elif len(now) < most:
                yield from self._covers(items, i + 1, left, now, most)

    def _minus(self, rest: dict, v: Value) -> dict:
        """What is left of the counts `rest` once `v`, which lies inside it, is taken out."""
        left = dict(rest)
        for x, y, z, c in self.goal_of[v]:
            k = left[(x, y, z)] - c
            if k:
                left[(x, y, z)] = k
            else:
                del left[(x, y, z)]
        return left

    def read_last(self, v: Value, news: bool) -> bool:
        """Whether the last micro-op can read `v` (held in NEWS, or in a register): moved by a read offset
        (none from a register), it lies inside `-n` times a kernel for some divisor `n` (memoised)."""
        key = (v, news)
        got = self._last_reads.get(key)
        if got is None:
            offsets = READ_SHIFT.values() if news else ((0, 0),)
            got = any(
                self._inside(self.shifted(v, dx, dy), target)
                for target in self._targets
                for dx, dy in offsets
            )
            self._last_reads[key] = got
        return got

    def _target(self, goal: Value, n: int) -> dict:
        """`-n` times `goal`, as counts: what the sources of a `busn` writing `goal` add up to."""
        key = (goal, n)
        got = self._sums.get(key)
        if got is None:
            got = self._sums[key] = {(x, y, z): -n * c for x, y, z, c in self.goal_of[goal]}
        return got

    def _inside_target(self, v: Value, goal: Value, n: int) -> bool:
        """`_inside(v, self._target(goal, n))`, memoised."""
        key = (v, goal, n)
        got = self._insides.get(key)
        if got is None:
            got = self._insides[key] = self._inside(v, self._target(goal, n))
        return got

    def _inside(self, v: Value, target: dict) -> bool:
        """Whether the atoms of `v` are a part of `target` (same signs, counts no larger)."""
        for x, y, z, c in self.goal_of[v]:
            t = target.get((x, y, z))
            if t is None or (t > 0) != (c > 0) or abs(c) > abs(t):
                return False
        return True

    def _program(self, path: list) -> list[MicroOp]:
        """The micro-ops of a path, with registers chosen for the sources."""
        ops = []
        for (kind, dests, chosen), vals in path:
            slots = {s for s, _ in dests}
            used: set[int] = set()
            srcs = []
            for tag, v in chosen:
                if isinstance(tag, str):
                    srcs.append(tag)
                    continue
                reg = next(i for i in range(self.R) if vals[i] == v and i not in slots and i not in used)
                used.add(reg)
                srcs.append(self.names[reg])
            op = MicroOp(kind, tuple(name for _, name in dests), tuple(srcs))
            check_bus(op, self.names)
            writes_news = any(d in NEWS_FAMILY for d in op.dests)
            if writes_news and (sum(d in NEWS_FAMILY for d in op.dests) > 1 or set(op.srcs) & NEWS_FAMILY):
                raise CainError(f"exact search: {op} breaks the NEWS rules of the model")
            ops.append(op)
        return ops

    def run(self, start: int = 0, upper: int | None = None) -> ExactBusResult:
        """Deepen from the bound (or `start`) until a verified program is found, a length reaches `upper`
        (a program that long is known), or the budget ends."""
        unread = tuple(False for _ in self.start)
        proven = max(start, self.bound(self.start))
        k = proven
        while upper is None or k < upper:
            try:
                self._visit(self.start, unread, k, [])
            except _Found as found:
                verify_bus(found.ops, self.filt, images=1, size=24)
                if len(found.ops) != k:
                    raise CainError(f"exact search: found {len(found.ops)} micro-ops at depth {k}") from None
                return ExactBusResult(found.ops, proven, True, self.nodes, Stopped.OPTIMAL)
            except OutOfBudget as stop:
                return ExactBusResult(None, proven, False, self.nodes, stop.reason)
            proven = k = k + 1
        return ExactBusResult(None, proven, False, self.nodes, Stopped.UPPER)


def _path(distance: int, same_sign: bool) -> int:
    """The fewest micro-ops that carry an atom `distance` PEs and keep (`same_sign`) or flip its sign: at
    least one, one PE at most each, and every micro-op negates."""
    steps = max(distance, 1)
    return steps + 1 if (steps % 2 == 0) != same_sign else steps


def _deconvolve(total: dict, offsets: list[tuple[int, int]]) -> dict | None:
    """The counts `w` whose copies moved by each of `offsets` add up to `total`, or None: division by a sum
    of monomials, the smallest atom first (no copy cancels another: they share `total`'s signs)."""
    (ox, oy) = min(offsets)
    lead = offsets.count((ox, oy))
    left = dict(total)
    w: dict = {}
    while left:
        (x, y, z) = min(left)
        c, odd = divmod(left[(x, y, z)], lead)
        at = (x - ox, y - oy, z)
        if odd or at in w:
            return None
        w[at] = c
        for dx, dy in offsets:
            p = (at[0] + dx, at[1] + dy, z)
            k = left.get(p)
            if k is None or (k > 0) != (c > 0) or abs(k) < abs(c):
                return None
            if k == c:
                del left[p]
            else:
                left[p] = k - c
    return w


def _lies_on(counts: dict, kernel: dict, dx: int, dy: int, sign: int, factor: int) -> bool:
    """Whether every atom of `counts`, moved by `(dx, dy)`, lies on an atom of `kernel` with `sign` times
    its sign and at most `factor` times its count."""
    for (x, y, z), c in counts.items():
        g = kernel.get((x + dx, y + dy, z))
        if g is None or (g > 0) != (sign * c > 0) or abs(c) > factor * abs(g):
            return False
    return True


def _goal_atoms(goal) -> tuple:
    return tuple(sorted((x, y, z, c) for (x, y, z), c in goal))


def upper_ops(program: Program, filt: Filter, names: Sequence[str]) -> list[MicroOp]:
    """The micro-ops bus-level synthesis makes of an allocated macro program, verified: the length the
    exact search has to beat."""
    ops = synthesize(program, dataclasses.replace(filt, registers=tuple(names))).ops
    verify_bus(ops, filt, images=1, size=24)
    return ops
