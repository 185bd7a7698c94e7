"""Bus-level synthesis: a macro plan's dataflow lowered straight to bus micro-ops, short in ICWs.

Every value of the plan is a linear combination of shifted earlier values (halved for the division
family). Copies (`mov`, `neg`) and zeros (`res`) are folded away first. A beam search then walks the
plan in order; each state records what every register holds (a value, stored positive or negated),
what NEWS holds (any linear combination of shifted values) and which values are deferred (inlined
into each of their consumers instead of computed). A value is computed by fused patterns: at most one
write into NEWS or a neighbour's NEWS (`bus(XW, x, y)`), read back at up to four offsets together with
registers of the right sign in one `bus` (or one `bus2` when halving), after at most a few one-ICW
sign flips into free registers. Values stay negated until an output needs them positive; NEWS left
over from one value is reused by the next. The result is verified before anyone sees it
(`cain.backend.verify.verify_bus`); `synthesize` falls back to the macros' own expansion whenever that
is shorter or synthesis fails.

Conservative bus rules, beyond reference/scamp5.md section 2: a micro-op that writes NEWS or a
neighbour's NEWS reads no NEWS-family register, and the second destination of a halving `bus2` is
NEWS only when the op reads no NEWS-family register.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations, product

from cain.backend.regalloc import allocate
from cain.backend.sim import Noise, expansion, output_noise
from cain.backend.verify import VerificationError, verify_bus
from cain.model.filter import Filter
from cain.model.isa import DIRECTIONS, MACROS, NEIGHBOUR_NEWS, NEWS, OPPOSITE, MicroOp, offset_of
from cain.model.program import Program

Term = tuple[int, int, int]
"""`(value, dx, dy)`: a value of the plan read at offset `(dx, dy)`."""
Lin = tuple[tuple[Term, int], ...]
"""A linear combination of terms, sorted, without zero coefficients."""

READS: dict[tuple[int, int], str] = {(0, 0): NEWS} | {DIRECTIONS[d]: NEIGHBOUR_NEWS[d] for d in DIRECTIONS}
"""Offset at which a source reads the NEWS content -> the source's name."""
WRITES: dict[tuple[int, int], str] = {(0, 0): NEWS} | {
    DIRECTIONS[d]: NEIGHBOUR_NEWS[OPPOSITE[d]] for d in DIRECTIONS
}
"""Pre-shift of the NEWS content -> the destination that writes it so (`X_opp(d)` moves by d)."""
NEWS_FAMILY = frozenset(READS.values())


def lin(items: Iterable[tuple[Term, int]]) -> Lin:
    """The canonical form of a linear combination (terms merged, zeros dropped). The terms are distinct once
    merged, so sorting them alone gives the order of sorting the pairs."""
    merged: dict[Term, int] = {}
    get = merged.get
    for t, c in items:
        merged[t] = get(t, 0) + c
    return tuple([(t, merged[t]) for t in sorted(merged) if merged[t]])


_MICRO_OPS: dict[tuple, MicroOp] = {}
"""Every micro-op the synthesis has made, by its fields: the search makes the same few over and over, and a
frozen dataclass is slow to construct."""


def micro_op(kind: str, dests: tuple[str, ...], srcs: tuple[str, ...] = ()) -> MicroOp:
    """`MicroOp(kind, dests, srcs)`, shared with every equal one made before."""
    key = (kind, dests, srcs)
    op = _MICRO_OPS.get(key)
    if op is None:
        if len(_MICRO_OPS) > 100_000:
            _MICRO_OPS.clear()
        op = _MICRO_OPS[key] = MicroOp(kind, dests, srcs)
    return op


def shifted(x: Lin, dx: int, dy: int, factor: int = 1) -> list[tuple[Term, int]]:
    """The terms of `factor * x` read at offset `(dx, dy)` further."""
    return [((v, a + dx, b + dy), c * factor) for (v, a, b), c in x]


# -- the plan as linear steps -------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """`result := L / 2 if halve else L`: one value of the plan still to compute."""

    result: int
    form: Lin
    halve: bool


@dataclass(frozen=True)
class Plan:
    """A program's dataflow: its inputs (value, register), steps, and outputs (value or None for zero,
    sign, register)."""

    inputs: tuple[tuple[int, str], ...]
    steps: tuple[Step, ...]
    outputs: tuple[tuple[int | None, int, str], ...]


def linear_plan(program: Program, fold_copies: bool = True, merge: bool = True) -> Plan:
    """The steps of `program`: copies folded into their uses (`fold_copies`), zeros dropped, equal
    steps merged (`merge`: which keeps the first value live until the last use of its twin, so a plan
    that recomputes a value to spare a register may then not fit), dead steps removed."""
    alias: dict[int, tuple[int, int]] = {}
    zeros: set[int] = set()
    seen: dict[tuple[Lin, bool], int] = {}
    steps: list[Step] = []
    for instr in program.instrs:
        macro = MACROS[instr.macro]
        if macro.scale == 0:
            zeros.update(instr.results)
            continue
        offset = offset_of(instr.directions)
        items = []
        for t in macro.terms:
            v, sign = instr.operands[t.operand], t.sign
            if v in zeros:
                continue
            if v in alias:
                v, s = alias[v]
                sign *= s
            dx, dy = offset if t.shifted else (0, 0)
            items.append(((v, dx, dy), sign))
        form = lin(items)
        halve = macro.scale != 1
        if not form:
            zeros.update(instr.results)
            continue
        (r,) = instr.results
        if fold_copies and not halve and len(form) == 1 and form[0][0][1:] == (0, 0) and abs(form[0][1]) == 1:
            alias[r] = (form[0][0][0], form[0][1])
            continue
        if merge and (form, halve) in seen:
            alias[r] = (seen[form, halve], 1)
            continue
        seen[form, halve] = r
        steps.append(Step(r, form, halve))
    outputs = []
    for v, reg in program.outputs:
        if v in zeros:
            outputs.append((None, 1, reg))
        else:
            base, sign = alias.get(v, (v, 1))
            outputs.append((base, sign, reg))
    needed = {v for v, _, _ in outputs if v is not None}
    kept: list[Step] = []
    for step in reversed(steps):
        if step.result in needed:
            kept.append(step)
            needed.update(t[0] for t, _ in step.form)
    return Plan(tuple(program.inputs), tuple(reversed(kept)), tuple(outputs))


# -- the beam search ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """Knobs of the synthesis."""

    beam: int = 48
    """States kept after each step."""
    slack: int = 1
    """Patterns up to this many ICWs dearer than a step's cheapest are kept (for their signs and NEWS)."""
    max_bus2: int | None = None
    """Most `bus2`/`bus3` micro-ops (the noisiest) a program may hold; None: no limit."""
    noise: Noise | None = field(default_factory=lambda: Noise(0.5, 1.0))
    """The noise model under which a synthesized program must be no noisier than the macros' expansion at
    every output, or the expansion is kept (by default the bus benchmark's: 0.5 per transfer, 1.0 more on
    bus2/bus3); None: the ICW count alone decides."""
    defer: tuple[str, ...] = ("shared", "single", "none")
    """Which values may be inlined into their consumers, per run of the search (`DEFERRALS`): `synthesize_ops`
    runs it once per mode and keeps the shortest program."""
    work: int | None = None
    """Most states the beam search may build over all its runs (deterministic); None: no limit."""
    deadline: float | None = None
    """A `time.perf_counter()` instant at which the search stops; None: none."""


WORK = 50_000
"""The work budget (states built) of the synthesis that scores plans under `cost=icws` and lowers them in
the default compile: a 25-step plan of AnalogNet2 takes 7,600 (1.4 s on a loaded machine), so it bounds
only plans of about a hundred steps and more, which then keep the macros' own expansion."""


class Budget:
    """What a synthesis may still spend: states built (`Options.work`) and time (`Options.deadline`), checked
    once per state expanded. `stopped` says whether it ran out."""

    def __init__(self, options: Options):
        self.left = options.work
        self.deadline = options.deadline
        self.stopped = False

    def spend(self, states: int) -> bool:
        """Count `states` built; whether the budget still holds."""
        if self.left is not None:
            self.left -= states
            self.stopped = self.stopped or self.left < 0
        if self.deadline is not None and not self.stopped:
            self.stopped = time.perf_counter() >= self.deadline
        return not self.stopped


DEFERRALS = ("shared", "single", "none")
"""Deferral modes: values with any number of users may be inlined, values with one user, nothing."""
RUN_ORDER = ("none", "shared", "single")
"""The order the modes run in: `none`, the quick one, first, so that a budget ending in a slow mode still
leaves its program (a 40-step 9x9 Gaussian: `none` 40 ICWs in 2 s, the others 32 in 14 s each, so 10 s kept
the 128 of the macros' expansion)."""
SHARED_STEPS = 40
"""Longest plan (in steps) synthesised with shared values deferred too: on the 57- and 76-step plans of two
random and CNN filters that mode took 22-24 s (as long as the single-use mode) and saved nothing."""


class _State:
    __slots__ = ("bus2", "icws", "news", "ops", "pending", "regs")

    def __init__(self, regs, news, pending, icws, bus2, ops):
        self.regs: tuple[tuple[int, int] | None, ...] = regs
        self.news: Lin | None = news
        self.pending: tuple[tuple[int, Lin], ...] = pending
        self.icws: int = icws
        self.bus2: int = bus2
        self.ops: tuple = ops  # (earlier ops, new ops) chain

    def key(self):
        return (self.regs, self.news, self.pending)

    def micro_ops(self) -> list[MicroOp]:
        chunks = []
        node = self.ops
        while node:
            node, new = node
            chunks.append(new)
        return [op for chunk in reversed(chunks) for op in chunk]


class _Synth:
    """The beam search over one plan. Its liveness table (`last`) is over the plan's steps, not the
    program's instructions (`Program.last_uses`): copies are folded into their readers and equal steps
    merged, so a value's last reader is another step, often of another value (the copy's source)."""

    def __init__(
        self, plan: Plan, registers: Sequence[str], options: Options, mode: str, budget: Budget | None = None
    ):
        if mode not in DEFERRALS:
            raise ValueError(f"unknown deferral mode {mode!r} (choose from {', '.join(DEFERRALS)})")
        self.plan, self.names, self.options, self.mode = plan, tuple(registers), options, mode
        self.budget = budget or Budget(options)
        self.index = {r: i for i, r in enumerate(self.names)}
        steps = plan.steps
        last: dict[int, int] = {}
        users: dict[int, set[int]] = {}
        for i, step in enumerate(steps):
            for (v, _, _), _ in step.form:
                last[v] = i
                users.setdefault(v, set()).add(i)
        self.outputs = {v for v, _, _ in plan.outputs if v is not None}
        for v in self.outputs:
            last[v] = len(steps)
        self.last = last
        self.users = users
        self.alive = [frozenset(v for v, j in last.items() if j > i) for i in range(len(steps))]
        """Per step, the values read after it (`live_after` without the deferred values' operands)."""
        self.pinned = {reg: v for v, _, reg in plan.outputs}
        self.targets = [(v, s, self.index[reg]) for v, s, reg in plan.outputs if v is not None]
        """The outputs that are not zero: (value, sign, register index)."""
        self.plans_seen: dict[tuple, list[tuple]] = {}
        self.held: dict[tuple, dict[tuple[int, int], int]] = {}
        """`holders` by register contents."""

    # liveness
    def live_after(self, state: _State, i: int) -> frozenset[int]:
        """The values still needed after step `i`: read by a later step or an output, or by a deferred value."""
        if not state.pending:
            return self.alive[i]
        live = set(self.alive[i])
        for _, form in state.pending:
            live.update(t[0] for t, _ in form)
        return frozenset(live)

    def expand(self, state: _State, form: Lin) -> Lin | None:
        if not state.pending:  # `form` is canonical already
            return form if all(abs(c) == 1 for _, c in form) else None
        pending = dict(state.pending)
        items: list[tuple[Term, int]] = []
        for (v, dx, dy), c in form:
            if v in pending:
                items += shifted(pending[v], dx, dy, c)
            else:
                items.append(((v, dx, dy), c))
        out = lin(items)
        return out if all(abs(c) == 1 for _, c in out) else None

    def run(self) -> list[MicroOp] | None:
        """The shortest program the beam found; None if it found none or its budget ran out."""
        regs: list[tuple[int, int] | None] = [None] * len(self.names)
        for v, reg in self.plan.inputs:
            regs[self.index[reg]] = (v, 1)
        states = [_State(tuple(regs), None, (), 0, 0, ())]
        for i, step in enumerate(self.plan.steps):
            children: dict[object, _State] = {}
            for state in states:
                grown = self.advance(state, i, step)
                if not self.budget.spend(len(grown) + 1):
                    return None
                for child in grown:
                    k = child.key()
                    old = children.get(k)
                    if old is None or (child.icws, child.bus2) < (old.icws, old.bus2):
                        children[k] = child
            ranked = sorted(
                children.values(), key=lambda s: (s.icws + len(s.pending) / 2 + self.owed(s), s.bus2)
            )
            states = ranked[: self.options.beam]
            settled = [s for s in ranked[self.options.beam :] if not s.pending]
            states += settled[: self.options.beam // 4]  # deferring is a bet: keep some states that did not
            if not states:
                return None
        best = None
        for state in states:
            done = self.finish(state)
            if done is not None and (best is None or (done.icws, done.bus2) < (best.icws, best.bus2)):
                best = done
        return best.micro_ops() if best is not None else None

    # one step
    def advance(self, state: _State, i: int, step: Step) -> list[_State]:
        form = self.expand(state, step.form)
        out = []
        if form is not None and self.deferrable(state, step, form):
            out.append(
                _State(
                    state.regs,
                    state.news,
                    tuple(sorted((*state.pending, (step.result, form)))),
                    state.icws,
                    state.bus2,
                    state.ops,
                )
            )
        used = {t[0] for t, _ in step.form}
        pending = tuple(p for p in state.pending if p[0] not in used)
        # a deferred value inlined here stays deferred for its later users
        inlined = tuple(p for p in state.pending if p[0] not in used or self.last[p[0]] > i)
        base = _State(state.regs, state.news, inlined, state.icws, state.bus2, state.ops)
        lowered = self.lower(base, i, step.result, form, step.halve) if form is not None else []
        base = _State(state.regs, state.news, pending, state.icws, state.bus2, state.ops)
        if not lowered and len(pending) < len(state.pending):
            # the deferred operands do not fuse into this step: compute them first, then the step itself
            keep = frozenset(used).union(
                *({t[0] for t, _ in vform} for v, vform in state.pending if v in used)
            )
            mids = [base]
            for v, vform in state.pending:
                if v in used:
                    mids = [m for s in mids for m in self.lower(s, i, v, vform, False, keep=keep)]
            lowered = [
                x for m in self.prune(mids) for x in self.lower(m, i, step.result, step.form, step.halve)
            ]
        return out + lowered

    def prune(self, states: list[_State]) -> list[_State]:
        """The few cheapest states to go on from when a step is computed in parts (bounds the recursion)."""
        return sorted(states, key=lambda s: (s.icws, s.bus2))[:3]

    def deferrable(self, state: _State, step: Step, form: Lin) -> bool:
        """A value may be inlined into its consumers (every one of them) when each combined form is still
        one the patterns can compute: coefficients of one, at most two steps away."""
        if self.mode == "none" or step.halve or step.result in self.outputs or len(form) > 4:
            return False
        users = self.users.get(step.result, ())
        if self.mode == "single" and len(users) != 1:
            return False
        pending = dict(state.pending)
        pending[step.result] = form
        for user in users:
            items: list[tuple[Term, int]] = []
            for (v, dx, dy), c in self.plan.steps[user].form:
                items += shifted(pending[v], dx, dy, c) if v in pending else [((v, dx, dy), c)]
            combined = lin(items)
            if len(combined) > 4 or any(abs(c) != 1 or abs(dx) + abs(dy) > 2 for (_, dx, dy), c in combined):
                return False
        return True

    def holders(self, state: _State) -> dict[tuple[int, int], int]:
        """The first register holding each (value, sign) of `state` (memoised by the registers' contents:
        callers only read it)."""
        found = self.held.get(state.regs)
        if found is None:
            if len(self.held) > 100_000:
                self.held.clear()
            found = {}
            for r, held in enumerate(state.regs):
                if held is not None and held not in found:
                    found[held] = r
            self.held[state.regs] = found
        return found

    def lower(
        self, state: _State, i: int, result: int, form: Lin, halve: bool, split: int = 2, keep=frozenset()
    ) -> list[_State]:
        """Every way to compute `result` by the fused patterns; when there is none, the terms at one offset
        are computed first into a register of their own (a part), and then the rest with that part. `form`
        is canonical (`lin`), and so is every part of it."""
        if any(abs(c) != 1 for _, c in form):  # a source is read at most once: 2x needs two copies
            return []
        out = self.fused(state, i, result, form, halve, keep)
        if out or split == 0:
            return out
        offsets = sorted({t[1:] for t, _ in form})
        if len(offsets) == 1 and offsets[0] != (0, 0):  # the sum first, then its shift
            ident = -(1 + i * 64 + 48 + (2 - split))
            (dx, dy), base = offsets[0], lin(((v, 0, 0), c) for (v, _, _), c in form)
            for mid in self.prune(self.fused(state, i, ident, base, False, keep)):
                out += self.lower(mid, i, result, (((ident, dx, dy), 1),), halve, split - 1, keep)
            return out
        for k, offset in enumerate(offsets if len(offsets) > 1 else []):
            part = tuple([(t, c) for t, c in form if t[1:] == offset])  # canonical, as `form` is
            if len(part) == len(form):
                continue
            ident = -(1 + i * 64 + k + 16 * (2 - split))
            others = tuple([(t, c) for t, c in form if t[1:] != offset])
            for mid in self.prune(
                self.fused(state, i, ident, part, False, keep | frozenset(t[0] for t, _ in others))
            ):
                rest = lin([*others, ((ident, 0, 0), 1)])
                out += self.lower(mid, i, result, rest, halve, split - 1, keep)
        for k, (t0, c0) in enumerate(form if not out and len(form) > 1 else ()):  # one term at a time
            ident = -(1 + i * 64 + 32 + k + 8 * (2 - split))
            others = tuple([x for x in form if x[0] != t0])
            for mid in self.prune(
                self.fused(state, i, ident, ((t0, c0),), False, keep | frozenset(t[0] for t, _ in others))
            ):
                out += self.lower(mid, i, result, lin([*others, ((ident, 0, 0), 1)]), halve, split - 1, keep)
        return out

    def fused(
        self, state: _State, i: int, result: int, form: Lin, halve: bool, keep=frozenset()
    ) -> list[_State]:
        limit = 2 if halve else 4
        held = self.holders(state)
        live_after = self.live_after(state, i)
        if keep:
            live_after = live_after | keep
        live_now = live_after.union([t[0] for t, _ in form])
        options = []
        for sigma in (1, -1):
            need = [(t, -sigma * c) for t, c in form]  # what the final op's sources must sum to
            direct = [(t, c) for t, c in need if t[1:] == (0, 0)]
            modes = []
            for (v, _, _), c in direct:
                m = ["rest"]
                if (v, c) in held:
                    m.append("direct")
                elif (v, -c) in held:
                    m.append("flip")
                modes.append(m)
            for combo in product(*modes):
                chosen = {direct[k][0] for k, m in enumerate(combo) if m != "rest"}
                flips = [(direct[k][0][0], direct[k][1]) for k, m in enumerate(combo) if m == "flip"]
                d_terms = [(t, c) for t, c in direct if t in chosen]
                if len(d_terms) > limit:
                    continue
                rest = tuple([(t, c) for t, c in need if t not in chosen])  # canonical as `form` is
                for plan in self.news_plans(state.news, rest, limit - len(d_terms)):
                    cost = len(flips) + 1
                    if plan[0] == "write":
                        cost += 1 + sum(1 for src in plan[2] if src not in held)
                    options.append((cost, sigma, d_terms, flips, plan))
        if not options:
            return []
        cheapest = min(o[0] for o in options)
        out: list[_State] = []
        for cost, sigma, d_terms, flips, plan in options:
            if cost <= cheapest + self.options.slack:
                out += self.build(
                    state, i, result, sigma, halve, d_terms, flips, plan, held, live_now, live_after
                )
        return out

    def news_plans(self, news: Lin | None, rest: Lin, room: int) -> list[tuple]:
        """Ways to supply `rest` through NEWS: ("none",), ("reuse", reads), ("write", dest, sources, reads)."""
        if not rest:
            return [("none",)]
        if room <= 0:
            return []
        key = (news, rest, room)
        plans = self.plans_seen.get(key)  # one lookup: hashing the nested key is most of its cost
        if plans is not None:
            return plans
        plans = []
        self.plans_seen[key] = plans
        if news is not None:
            target = dict(rest)
            fits = []
            for offset in READS:
                part = shifted(news, *offset)
                if all(target.get(t) == c for t, c in part):
                    fits.append(offset)
            for n in range(1, min(room, len(fits)) + 1):
                for reads in combinations(fits, n):
                    if lin(x for o in reads for x in shifted(news, *o)) == rest:
                        plans.append(("reuse", reads))
        groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for (v, dx, dy), c in rest:
            groups.setdefault((dx, dy), []).append((v, c))
        first = next(iter(groups.values()))
        if len(groups) <= room and all(g == first for g in groups.values()) and len(first) <= 4:
            sources = [(v, -c) for v, c in first]
            for pre in WRITES:
                reads = [(dx - pre[0], dy - pre[1]) for dx, dy in groups]
                if all(o in READS for o in reads):
                    plans.append(("write", pre, sources, tuple(reads)))
        return plans

    def build(self, state, i, result, sigma, halve, d_terms, flips, news_plan, held, live_now, live_after):
        regs = list(state.regs)
        ops: list[MicroOp] = []
        busy: set[int] = set()  # registers written in this step and still needed in it
        flips = list(flips)
        if news_plan[0] == "write":
            for v, c in news_plan[2]:
                if (v, c) not in held:
                    if (v, -c) not in held:
                        return []
                    flips.append((v, c))

        where: dict[tuple[int, int], int] = dict(held)
        busy.update(where[(t[0], c)] for t, c in d_terms if (t[0], c) in where)
        if news_plan[0] == "write":
            busy.update(where[s] for s in news_plan[2] if s in where)

        def reusable(live: set[int], regs=regs) -> list[int]:
            """The registers that may be overwritten: their value is dead, or another register holds it too."""
            copies: dict[int, int] = {}
            for h in regs:
                if h is not None:
                    copies[h[0]] = copies.get(h[0], 0) + 1
            return [
                r
                for r, h in enumerate(regs)
                if r not in busy and (h is None or h[0] not in live or copies[h[0]] > 1)
            ]

        def free_for_copy(source: int) -> int | None:
            spare = [r for r in reusable(live_now) if r != source]
            plain = [r for r in spare if self.pinned.get(self.names[r], result) == result]
            return (plain or spare or [None])[0]

        for v, c in flips:
            if (v, c) in where and where[(v, c)] in busy:
                continue
            source = where.get((v, -c))
            if source is None:  # an earlier flip of this step overwrote its only holder
                return []
            r = free_for_copy(source)
            if r is None:
                return []
            ops.append(micro_op("bus", (self.names[r],), (self.names[source],)))
            overwritten = regs[r]
            regs[r] = (v, c)
            if overwritten is not None and where.get(overwritten) == r:  # read it from its other holder, if any
                other = next((k for k, h in enumerate(regs) if h == overwritten), None)
                if other is None:
                    del where[overwritten]
                else:
                    where[overwritten] = other
            where[(v, c)] = r
            busy.add(r)
        news = state.news
        reads: tuple = ()
        if news_plan[0] == "write":
            _, pre, sources, reads = news_plan
            src_regs = tuple(self.names[where[s]] for s in sources)
            ops.append(micro_op("bus", (WRITES[pre],), src_regs))
            news = lin(((v, pre[0], pre[1]), -c) for v, c in sources)
        elif news_plan[0] == "reuse":
            reads = news_plan[1]
        final_srcs = [self.names[where[(t[0], c)]] for t, c in d_terms] + [READS[o] for o in reads]
        src_set = set(final_srcs)
        busy.clear()
        candidates = [r for r in reusable(live_after) if self.names[r] not in src_set]
        if not candidates:
            return []
        own = [r for r in candidates if self.pinned.get(self.names[r], -1) == result]
        others = [r for r in candidates if self.names[r] not in self.pinned]
        rest_c = [r for r in candidates if r not in own and r not in others]
        order = own + others + rest_c
        children = []
        reads_news = bool(src_set & NEWS_FAMILY)
        for y in order[:2]:
            new_regs = list(regs)
            new_ops = list(ops)
            new_news = news
            if halve:
                if reads_news:
                    after = list(regs)
                    after[y] = (result, sigma)
                    spare = set(reusable(live_after, after))
                    z = next((r for r in order if r != y and r in spare), None)
                    if z is None:
                        continue
                    second = self.names[z]
                    new_regs[z] = (result, sigma)
                else:
                    second = NEWS
                    new_news = (((result, 0, 0), sigma),)
                new_ops.append(micro_op("bus2", (self.names[y], second), tuple(final_srcs)))
            else:
                new_ops.append(micro_op("bus", (self.names[y],), tuple(final_srcs)))
            new_regs[y] = (result, sigma)
            bus2 = state.bus2 + (1 if halve else 0)
            if self.options.max_bus2 is not None and bus2 > self.options.max_bus2:
                continue
            children.append(
                _State(
                    tuple(new_regs),
                    new_news,
                    state.pending,
                    state.icws + len(new_ops),
                    bus2,
                    (state.ops, tuple(new_ops)),
                )
            )
        return children

    def owed(self, state: _State) -> int:
        """A lower estimate of the ICWs `finish` will spend on the outputs computed so far: none for one in
        its register with its sign, one when another register (or NEWS) holds it negated, two when one holds
        it with its sign, three when only its own register holds it, negated."""
        total = 0
        regs, news = state.regs, state.news
        for v, s, r in self.targets:
            here = regs[r]
            if here == (v, s):
                continue
            neg = (v, -s)
            if (neg in regs and (here != neg or regs.count(neg) > 1)) or news == (((v, 0, 0), -s),):
                total += 1  # a register other than r holds it negated, or NEWS does
            elif (v, s) in regs:
                total += 2
            elif here == neg:
                total += 3
        return total

    # the outputs into their registers, positive
    def finish(self, state: _State) -> _State | None:
        regs = list(state.regs)
        news = state.news
        ops: list[MicroOp] = []
        todo = [(v, s, self.index[reg]) for v, s, reg in self.plan.outputs]
        zeros = [r for v, _, r in todo if v is None]
        todo = [(v, s, r) for v, s, r in todo if v is not None and regs[r] != (v, s)]
        while todo:
            for k, (v, s, r) in enumerate(todo):
                here = regs[r]
                blocking = (
                    here is not None
                    and any(here[0] == w for w, _, rr in todo if rr != r)
                    and sum(1 for h in regs if h is not None and h[0] == here[0]) == 1
                )
                if blocking:
                    continue
                neg = next((q for q, h in enumerate(regs) if h == (v, -s) and q != r), None)
                if neg is not None:
                    ops.append(micro_op("bus", (self.names[r],), (self.names[neg],)))
                elif news == (((v, 0, 0), -s),):
                    ops.append(micro_op("bus", (self.names[r],), (NEWS,)))
                else:
                    same = next((q for q, h in enumerate(regs) if h == (v, s) and q != r), None)
                    if same is not None:  # through NEWS, negated twice
                        ops += [
                            micro_op("bus", (NEWS,), (self.names[same],)),
                            micro_op("bus", (self.names[r],), (NEWS,)),
                        ]
                    elif regs[r] == (v, -s):  # only r holds it, negated: via a spare register
                        outs = {rr for _, _, rr in self.plan.outputs}
                        needed = {w for w, _, _ in todo}
                        spare = next(
                            (
                                q
                                for q, h in enumerate(regs)
                                if self.names[q] not in outs and (h is None or h[0] not in needed)
                            ),
                            None,
                        )
                        if spare is None:
                            return None
                        ops += [
                            micro_op("bus", (self.names[spare],), (self.names[r],)),
                            micro_op("bus", (NEWS,), (self.names[spare],)),
                            micro_op("bus", (self.names[r],), (NEWS,)),
                        ]
                        regs[spare] = (v, s)
                    else:
                        return None
                    news = (((v, 0, 0), -s),)
                regs[r] = (v, s)
                del todo[k]
                break
            else:
                return None
        for r in zeros:
            ops.append(micro_op("bus", (self.names[r],)))
        return _State(
            tuple(regs), news, state.pending, state.icws + len(ops), state.bus2, (state.ops, tuple(ops))
        )


# -- entry points -------------------------------------------------------------------------------------


def synthesize_ops(
    program: Program,
    registers: Sequence[str],
    options: Options = Options(),
    accept: Callable[[list[MicroOp]], bool] | None = None,
    budget: Budget | None = None,
) -> list[MicroOp] | None:
    """Micro-ops computing `program`'s outputs in their registers, by the beam search; None if it found
    none (e.g. too few registers for its patterns) or none that `accept` takes. Not yet verified.

    The search runs deferring every value it can, only single-use values, and none (the beam's ranking
    cannot tell which pays off) and keeps the shortest; when none finds a program, it runs again on the
    plan with copies kept as steps of their own and equal steps not merged: the plan's own register use,
    which fits. All runs share `budget` (by default `Options.work` and `deadline`): they go in `RUN_ORDER`,
    and when it runs out, the shortest program of the runs that ended is kept (`budget.stopped` says so); of
    equally short programs, the one of the mode `options.defer` lists first."""
    budget = budget or Budget(options)
    for plan in (linear_plan(program), linear_plan(program, fold_copies=False, merge=False)):
        found = []
        for mode in sorted(options.defer, key=RUN_ORDER.index):
            if budget.stopped or (mode == "shared" and len(plan.steps) > SHARED_STEPS):
                continue
            ops = _Synth(plan, registers, options, mode, budget).run()
            if ops is not None and (accept is None or accept(ops)):
                found.append((len(ops), noisy_ops(ops), options.defer.index(mode), ops))
        if found:
            return min(found, key=lambda f: f[:3])[3]
    return None


def counts(ops: Sequence[MicroOp]) -> dict[str, int]:
    """The ICW count of a micro-op list and how many of them are `bus2` and `bus3`."""
    return {
        "icws": len(ops),
        "bus2": sum(1 for op in ops if op.kind == "bus2"),
        "bus3": sum(1 for op in ops if op.kind == "bus3"),
    }


def noisy_ops(ops: Sequence[MicroOp]) -> int:
    """How many of `ops` are `bus2` or `bus3`."""
    return sum(1 for op in ops if op.kind != "bus")


def noisier(ops: Sequence[MicroOp], than: Sequence[MicroOp], filter: Filter, noise: Noise) -> bool:
    """Whether `ops` leaves more noise than `than` on any of `filter`'s outputs (`sim.output_noise`)."""
    inputs = [r for _, r in filter.inputs]
    outputs = [k.register for k in filter.kernels]
    mine, theirs = output_noise(ops, inputs, outputs, noise), output_noise(than, inputs, outputs, noise)
    return any(a > b * (1 + 1e-9) for a, b in zip(mine, theirs, strict=True))


@dataclass
class BusProgram:
    """A verified bus-level program and what it replaced."""

    ops: list[MicroOp]
    synthesized: bool
    """False when the macros' own expansion was kept (shorter, or synthesis found nothing that verifies)."""
    plain: list[MicroOp]
    """The macros' own expansion, for comparison."""
    stopped: bool = False
    """Whether the synthesis ran out of its budget (`Options.work` or `deadline`): `ops` is then the shortest
    program found before, or the expansion."""

    @property
    def expansion_icws(self) -> int:
        return len(self.plain)


DONE: dict[str, BusProgram] = {}
"""Syntheses that ended within their budget, by their program, filter and options (but the deadline, which
does not change a result that ended): the default compile lowers the plan the search in ICWs has scored."""
DONE_SIZE = 64
"""Most syntheses `DONE` keeps (the oldest go first)."""


def synthesize(program: Program, filter: Filter, options: Options = Options()) -> BusProgram:
    """The shortest verified micro-op program for an allocated `program`: the beam search's shortest that
    is no noisier than the macros' expansion at any output (`Options.noise`), or that expansion when it is
    no longer or the search's does not verify (or the budget ran out before any run ended). An unallocated
    program is allocated first. A synthesis that ended within its budget is remembered (`DONE`)."""
    if not program.registers:
        program = allocate(program, filter.registers)
    noise = options.noise and (options.noise.sigma, options.noise.extra, options.noise.seed)  # not its rng
    key = repr((program, filter, replace(options, deadline=None, noise=None), noise))
    if key not in DONE:
        result = _synthesize(program, filter, options)
        if result.stopped:
            return result
        DONE[key] = result
        while len(DONE) > DONE_SIZE:
            del DONE[next(iter(DONE))]
    return DONE[key]


def _synthesize(program: Program, filter: Filter, options: Options) -> BusProgram:
    """`synthesize` on an allocated `program`, every time."""
    plain = expansion(program)
    within = options.max_bus2 is None or noisy_ops(plain) <= options.max_bus2
    noise = options.noise if within else None  # over the bus2 cap, the expansion is no choice

    def quiet(ops: list[MicroOp]) -> bool:
        return noise is None or not noisier(ops, plain, filter, noise)

    budget = Budget(options)
    ops = synthesize_ops(program, filter.registers, options, quiet, budget)
    if ops is not None and (len(ops) < len(plain) or not within):
        try:
            verify_bus(ops, filter, images=1, size=24)
            return BusProgram(ops, True, plain, budget.stopped)
        except VerificationError:
            pass
    if not within:
        raise ValueError(
            f"kernel @{filter.name}: no program found with at most {options.max_bus2} bus2/bus3 micro-ops "
            f"(the macros' expansion has {noisy_ops(plain)}); raise max-bus2"
        )
    return BusProgram(plain, False, plain, budget.stopped)
