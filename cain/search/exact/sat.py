"""Shortest programs of every kind, cancelling ones included, found or refuted by CP-SAT (OR-Tools).

The goal model (`cain.search.exact.deepening`) leaves out programs whose instructions cancel atoms; this
encoding does not. A program of `n` macros is `n` SSA values, each one macro of the instruction set applied to
earlier values (any operands, any offset its directions allow), with every kernel among them. Each value
is an integer per position and channel: its weight times `2^n`, fine enough for any `n` halvings.

Two relaxations keep the encoding small, and both only add solutions, so INFEASIBLE proves that no program
of `n` macros computes the filter at all: registers are left out (a solution is allocated afterwards),
and a value is tracked only at the positions from which it can still reach the kernels' window, so the
outputs are checked there alone. A solution is therefore run exactly (`Program.output_goals`); when it
computes something else outside the window, the window grows by those positions and the solver runs
again. Three rules remove only duplicate solutions: independent neighbouring steps come in one order,
symmetric operands in one order, and every value is used (a program with a dead value has a shorter one).
Zeroing macros (`res`) are left out: a zero operand can always be dropped for a shorter program.
A symmetry of the square that maps every kernel onto itself maps programs onto programs, so each step is
asked only in the least of its images under the symmetries that fix the steps before it (`_symmetry`).
"""

from __future__ import annotations

import importlib.util
import itertools
import time
from dataclasses import dataclass

from cain.model.filter import Filter
from cain.model.isa import instruction_set
from cain.model.program import Instr, Program
from cain.search.exact.symmetry import SYMMETRIES
from cain.search.goals.space import division_macro, form_of

Position = tuple[int, int, int]
"""(x, y, channel)"""


def available() -> bool:
    """Whether OR-Tools is installed (the `exact` extra, `pip install 'cain[exact]'`). It is imported only
    when used: loading it takes half a second, which every `cain-opt` run would pay."""
    return importlib.util.find_spec("ortools") is not None


def _cp_model():
    from ortools.sat.python import cp_model

    return cp_model


@dataclass(frozen=True)
class Op:
    """One macro at one offset: `scale * sum(sign * term)`, a term moved by `offset` where shifted."""

    macro: str
    directions: tuple[str, ...]
    signs: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    """Per term: how far it moves the atoms of its operand."""
    halves: bool
    distinct: tuple[tuple[int, int], ...]
    """Operand pairs the bus rule puts in different registers: different values (or a copy first)."""
    symmetric: bool
    """Swapping the operands gives the same value."""


def ops_of(instruction_set_name: str) -> list[Op]:
    """Every macro of the set at every offset, one division (they all halve) and no zeroing macro."""
    macros = instruction_set(instruction_set_name)
    division = division_macro(macros)
    ops = []
    for m in macros.values():
        if m.scale == 0 or (m.scale != 1 and m is not division):
            continue
        form = form_of(m)
        pairs = set(m.distinct_roles)
        distinct = tuple(
            (i, j)
            for i, j in itertools.combinations(range(len(m.operands)), 2)
            if (min(m.operands[i], m.operands[j]), max(m.operands[i], m.operands[j])) in pairs
        )
        for dirs, off in form.offsets:
            ops.append(
                Op(
                    macro=m.name,
                    directions=dirs,
                    signs=form.signs,
                    offsets=tuple(off if s else (0, 0) for s in form.shifted),
                    halves=m.scale != 1,
                    distinct=distinct,
                    symmetric=form.symmetric and len(form.signs) > 1,
                )
            )
    return ops


def symmetries(filt: Filter) -> list[tuple[int, int, int, int]]:
    """The symmetries of the square (`SYMMETRIES`) that map every kernel onto itself."""

    def image(s, items):
        a, b, c, d = s
        return sorted(((a * x + b * y, c * x + d * y, z), n) for (x, y, z), n in items)

    return [
        s for s in SYMMETRIES if all(image(s, k.goal.items) == sorted(k.goal.items) for k in filt.kernels)
    ]


def op_images(ops: list[Op], group: list[tuple[int, int, int, int]]) -> list[list[int]]:
    """Per symmetry of `group` other than the identity, the index of each op's image; none at all when some
    image is not an op (the symmetries would not map programs onto programs)."""
    index = {(op.macro, op.signs, op.offsets, op.halves): j for j, op in enumerate(ops)}
    images = []
    for a, b, c, d in group:
        image = [
            index.get(
                (op.macro, op.signs, tuple((a * x + b * y, c * x + d * y) for x, y in op.offsets), op.halves)
            )
            for op in ops
        ]
        if None in image:
            return []
        if image != list(range(len(ops))):
            images.append(image)
    return images


@dataclass
class SatResult:
    plan: Program | None
    """A program of `length` macros on SSA values (run exactly, not yet allocated), or None."""
    bound: int
    """No program of fewer macros computes the filter (proven by refutation)."""
    status: str
    """`found`, `refuted` (no program of `length`), `unknown` (the budget ended first)."""
    length: int
    work: float = 0.0
    """The solver's deterministic time spent."""


class _Encoding:
    """The CP-SAT model of the question: is there a program of `n` macros?"""

    def __init__(
        self, filt: Filter, ops: list[Op], n: int, window: set[Position], whole: bool, images: list[list[int]]
    ):
        self.filt, self.ops, self.n = filt, ops, n
        channels = len(filt.inputs)
        self.c = channels
        reach = max(abs(x) + abs(y) for op in ops for x, y in op.offsets)
        self.scale = 2 ** (filt.depth if whole else max(n, filt.depth))
        """Every value is held times this (a count at the filter's depth times `scale / 2^depth`)."""
        self.model = m = _cp_model().CpModel()

        def near(q: Position, budget: int) -> bool:
            return any(w[2] == q[2] and abs(w[0] - q[0]) + abs(w[1] - q[1]) <= budget for w in window)

        self.pos: list[dict[Position, object]] = [{(0, 0, z): self.scale} for z in range(channels)]
        self.limits = [self.scale]
        for s in range(1, n + 1):
            limit = self.limits[-1] * max(len(op.signs) for op in ops)
            self.limits.append(limit)
            r = reach * s
            tracked = {}
            for z in range(channels):
                for x in range(-r, r + 1):
                    for y in range(-(r - abs(x)), r - abs(x) + 1):
                        if near((x, y, z), reach * (n - s)):
                            tracked[(x, y, z)] = m.NewIntVar(-limit, limit, "")
            self.pos.append(tracked)
        self.steps = []
        for s in range(1, n + 1):
            self.steps.append(self._step(channels + s - 1, s))
        self._symmetry(images)
        self._order()
        self._outputs(window)

    def value(self, a: int, q: Position):
        """Value `a` at `q`: its variable, or 0 where no program of its length puts anything."""
        return self.pos[a].get(q, 0)

    def _step(self, v: int, s: int):
        """Variables and constraints of value `v` (step `s`): which op, which operands."""
        m, ops = self.model, self.ops
        chosen = [m.NewBoolVar("") for _ in ops]
        m.AddExactlyOne(chosen)
        arity = max(len(op.signs) for op in ops)
        sel = [[m.NewBoolVar("") for _ in range(v)] for _ in range(arity)]
        for row in sel:
            m.AddExactlyOne(row)
        operand = [sum(a * b for a, b in enumerate(row)) for row in sel]
        for j, op in enumerate(ops):
            for i in range(len(op.signs), arity):  # unused slots read value 0
                m.AddImplication(chosen[j], sel[i][0])
            for i, k in op.distinct:
                m.Add(operand[i] != operand[k]).OnlyEnforceIf(chosen[j])
            if op.symmetric:
                for i in range(len(op.signs) - 1):
                    m.Add(operand[i] <= operand[i + 1]).OnlyEnforceIf(chosen[j])
        tracked = self.pos[v]
        terms = []
        for i in range(arity):
            bound = self.limits[s - 1]
            term = {q: m.NewIntVar(-bound, bound, "") for q in tracked}
            for off in sorted({op.offsets[i] for op in ops if i < len(op.signs)}):
                users = [chosen[j] for j, op in enumerate(ops) if i < len(op.signs) and op.offsets[i] == off]
                at = m.NewBoolVar("")
                m.AddBoolOr(users).OnlyEnforceIf(at)
                for u in users:
                    m.AddImplication(u, at)
                for a in range(v):
                    both = m.NewBoolVar("")
                    m.AddBoolAnd([at, sel[i][a]]).OnlyEnforceIf(both)
                    m.AddBoolOr([at.Not(), sel[i][a].Not()]).OnlyEnforceIf(both.Not())
                    for q in tracked:
                        m.Add(term[q] == self.value(a, (q[0] - off[0], q[1] - off[1], q[2]))).OnlyEnforceIf(
                            both
                        )
            terms.append(term)
        kinds: dict[tuple, list] = {}
        for j, op in enumerate(ops):
            kinds.setdefault((op.signs, op.halves), []).append(chosen[j])
        for (signs, halves), users in kinds.items():
            kind = m.NewBoolVar("")
            m.AddBoolOr(users).OnlyEnforceIf(kind)
            for u in users:
                m.AddImplication(u, kind)
            for q, out in tracked.items():
                total = sum(sign * terms[i][q] for i, sign in enumerate(signs))
                m.Add((2 if halves else 1) * out == total).OnlyEnforceIf(kind)
        key = sum(j * b for j, b in enumerate(chosen))
        for i in range(arity):
            key = key * (self.c + self.n) + operand[i]
        return chosen, sel, key

    def _symmetry(self, images: list[list[int]]) -> None:
        """Each step's op is the least of its images under every symmetry that maps each step before it onto
        itself. Sound: of a program's images, which compute the same kernels, take the one whose steps' keys,
        in the order `_order` allows first (the least ready step first), are least; for a symmetry that fixes
        its first steps, its next step's image is a step ready as early, so its key is no smaller."""
        m = self.model
        for image in images:
            fixed = m.NewConstant(1)  # the symmetry maps every step so far onto itself
            for chosen, _, _ in self.steps:
                for j, k in enumerate(image):
                    if k < j:
                        m.AddImplication(fixed, chosen[j].Not())
                still = m.NewBoolVar("")
                m.Add(sum(chosen[j] for j, k in enumerate(image) if k == j) == 1).OnlyEnforceIf(still)
                m.AddImplication(still, fixed)
                m.AddBoolOr([fixed.Not(), still]).OnlyEnforceIf(
                    [chosen[j].Not() for j, k in enumerate(image) if k != j]
                )
                fixed = still

    def _order(self) -> None:
        """Independent neighbouring steps in increasing key order; every value read later or an output."""
        m = self.model
        for s in range(1, self.n):
            _, _, key = self.steps[s - 1]
            _, sel, key2 = self.steps[s]
            v = self.c + s - 1
            reads = [row[v] for row in sel]
            m.Add(key < key2).OnlyEnforceIf([r.Not() for r in reads])
        self.out = [[self.model.NewBoolVar("") for _ in range(self.n)] for _ in self.filt.kernels]
        for row in self.out:
            m.AddExactlyOne(row)
        for s in range(1, self.n + 1):
            v = self.c + s - 1
            later = [sel[i][v] for _, sel, _ in self.steps[s:] for i in range(len(sel))]
            m.AddBoolOr(later + [row[s - 1] for row in self.out])

    def _outputs(self, window: set[Position]) -> None:
        m = self.model
        for k, kernel in enumerate(self.filt.kernels):
            counts = dict(kernel.goal.items)
            for s in range(1, self.n + 1):
                v = self.c + s - 1
                for q in window:
                    want = counts.get(q, 0) * self.scale // 2**self.filt.depth
                    got = self.value(v, q)
                    if isinstance(got, int):
                        if got != want:
                            m.AddBoolOr([self.out[k][s - 1].Not()])
                    else:
                        m.Add(got == want).OnlyEnforceIf(self.out[k][s - 1])

    def plan(self, solver) -> Program:
        """The solution as a program on SSA values."""
        inputs = [(z, reg) for z, (_, reg) in enumerate(self.filt.inputs)]
        instrs = []
        for s, (chosen, sel, _) in enumerate(self.steps, start=1):
            op = self.ops[next(j for j, b in enumerate(chosen) if solver.Value(b))]
            operands = tuple(
                next(a for a, b in enumerate(sel[i]) if solver.Value(b)) for i in range(len(op.signs))
            )
            instrs.append(Instr(op.macro, (self.c + s - 1,), operands, op.directions))
        outputs = [
            (self.c + next(s for s, b in enumerate(row) if solver.Value(b)), kernel.register)
            for row, kernel in zip(self.out, self.filt.kernels, strict=True)
        ]
        return Program(self.filt.name, inputs, instrs, outputs)


MAX_LENGTH = 12
"""Longest program asked about: the model grows with the square of the length in positions and again in
steps and operands (a 17-macro question has tens of millions of constraints), and CP-SAT answers within
minutes only up to about 6 macros."""

WINDOW_MARGIN = 1
"""Positions around the kernels' bounding box where the outputs are checked from the start: a program
that is right inside the box is most often wrong just outside it, and each such solution costs a solve."""


def _window(filt: Filter, margin: int = WINDOW_MARGIN) -> set[Position]:
    """The kernels' bounding box grown by `margin`, per channel: where the outputs are checked first."""
    atoms = [q for k in filt.kernels for q, _ in k.goal.items]
    xs, ys = [q[0] for q in atoms], [q[1] for q in atoms]
    return {
        (x, y, z)
        for x in range(min(xs) - margin, max(xs) + margin + 1)
        for y in range(min(ys) - margin, max(ys) + margin + 1)
        for z in range(len(filt.inputs))
    }


def _wrong(plan: Program, filt: Filter) -> set[Position] | None:
    """Where the plan's outputs differ from the kernels (empty: it computes them), None when a halving
    leaves a fraction of an atom at the filter's depth (Cain's goals cannot hold it)."""
    try:
        got = plan.output_goals(filt.initial_goals())
    except ValueError:
        return None
    bad: set[Position] = set()
    for goal, kernel in zip(got, filt.final_goals(), strict=True):
        mine, want = dict(goal.items), dict(kernel.items)
        bad |= {q for q in set(mine) | set(want) if mine.get(q, 0) != want.get(q, 0)}
    return bad


def solve(
    filt: Filter,
    instruction_set_name: str,
    n: int,
    seconds: float,
    work: float | None = None,
    workers: int = 1,
    seed: int = 0,
    symmetry: bool = True,
) -> SatResult:
    """Whether a program of `n` macros computes `filt`: a verified plan, a refutation, or unknown.

    `work` bounds the solver's deterministic time (the same answer on every run with one worker);
    `symmetry=False` asks every step in every orientation, not only the least (`_Encoding._symmetry`)."""
    inputs = set(filt.initial_goals())
    if n < 1 or any(k.goal in inputs for k in filt.kernels):
        return SatResult(None, n, "unknown", n)  # every kernel is made by a macro here: not a plain input
    if n > MAX_LENGTH:
        return SatResult(None, n, "unknown", n)  # the model alone would outgrow the budget
    ops = ops_of(instruction_set_name)
    images = op_images(ops, symmetries(filt)) if symmetry else []
    window, whole = _window(filt), False
    deadline = time.perf_counter() + seconds
    spent = 0.0
    while True:
        left = deadline - time.perf_counter()
        if left <= 0 or (work is not None and work - spent <= 0):
            return SatResult(None, n, "unknown", n, spent)
        enc = _Encoding(filt, ops, n, window, whole, images)
        cp_model = _cp_model()
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = left
        if work is not None:
            solver.parameters.max_deterministic_time = work - spent
        solver.parameters.num_workers = workers
        solver.parameters.random_seed = seed
        status = solver.Solve(enc.model)
        spent += solver.deterministic_time
        if status == cp_model.INFEASIBLE and whole:
            return SatResult(None, n, "unknown", n, spent)  # only programs Cain's goals follow are refuted
        if status == cp_model.INFEASIBLE:
            return SatResult(None, n + 1, "refuted", n, spent)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return SatResult(None, n, "unknown", n, spent)
        plan = enc.plan(solver)
        bad = _wrong(plan, filt)
        if bad is None:
            whole = True  # keep every value whole at the filter's depth
        elif not bad:
            return SatResult(plan, n, "found", n, spent)
        else:
            window |= bad
