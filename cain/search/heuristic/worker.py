"""One search process: the traversal of goal-bags from the kernels back to the inputs (CGDS, DFS, BFS or
best-first), its cache, its bound and its best verified plan."""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from dataclasses import dataclass, replace

from cain.backend.bus_synth import WORK, Options, synthesize
from cain.diagnostics import CainError
from cain.model.filter import Filter, Kernel
from cain.model.program import Program
from cain.search.allocate import allocated
from cain.search.budget import Budget, OutOfBudget, Stopped, settle
from cain.search.config import DEFAULT_TIME, PORTFOLIO_RESTART, PlanEvent, SearchConfig
from cain.search.constructive.program import Bases, constructive_plan
from cain.search.goals import atoms
from cain.search.goals.plan import direct_solution, fold_negations, to_program
from cain.search.goals.space import Pair, Space
from cain.search.heuristic import structure
from cain.search.heuristic.kernel_by_kernel import kernel_by_kernel

BUS_BEAM = 16
"""Beam width of the bus-level synthesis that scores each plan under `cost=icws` (the passes use more)."""
BUS_OPTIONS = Options(beam=BUS_BEAM, defer=("single", "none"), work=WORK)
"""How `cost=icws` scores a plan: a narrower beam than the passes', without the slowest deferral mode, on a
work budget (a plan too long for it scores as its expansion)."""
BUS_TIES = 24
"""Under `cost=icws`, plans as short in macros as the best are kept too, up to this many per worker."""
BUS_CANDIDATES = 8
"""Under `cost=icws`, the shortest plans (in macros) scored at bus level when the search ends; one plan of
every longer length found is scored after them."""
OFFER_SHARE = 0.25
"""With a `SearchConfig.score` on a time budget, the most of the time spent so far that scoring plans as they
are found may take (a plan the DREG file does not hold costs every lowering variant); past it, a plan bounds
the search unscored until its share comes back. On a node budget every plan is scored as found."""
BUS_SHARE = 0.15
"""Under `cost=icws` with a time budget, the part of it kept for scoring plans at bus level."""
AGAIN_MARK = 0.2
"""The part of the budget after which, if the kernel-by-kernel plan is still the best, the kernels are
compiled one at a time again, with `AGAIN_SHARE` of the budget: on filters of many heavy kernels the
simultaneous search seldom beats that plan, and each kernel's search alone improves with time."""
AGAIN_SHARE = 0.5
"""The part of the budget the kernels are compiled with again, at `AGAIN_MARK` (or what is left of it)."""
HEAPS = ("best-first", "discrepancy")
"""The traversals whose frontier is a heap: by the heuristic, or by the sum of the ranks on a node's path
(a child's rank among its parent's candidates), a limited-discrepancy order. CGDS puts a node back behind
all it has queued, so a child of rank r waits r rounds of a growing frontier, and a late rank near the root
costs most; in `discrepancy` a plan's turn comes with the sum of its steps' ranks, wherever they are."""
REPEATS_TIME = 1 / 20
"""The most time of the first search with each kernel's repeated sub-patterns offered first
(`Worker._repeats`), as a part of the time budget."""
GRACE = 0.1
"""How far past the deadline, as a part of the time budget (at least a second), the traversal may run to
reach its next 64-node mark."""


@dataclass(slots=True)
class _Traversal:
    """One round's state: its frontier (a deque, or a heap for `HEAPS`), the cheapest cost each goal-bag
    was reached at, the bound, the candidate children the frontier's nodes hold, and the heap's counter."""

    frontier: deque | list
    cache: dict[tuple[int, ...], int]
    bound: int
    held: int = 0
    counter: int = 1


class _Node:
    __slots__ = ("bag", "cands", "cost", "idx", "lb", "pair", "parent", "ranks")

    def __init__(self, bag, cost, parent, pair, lb):
        self.bag = bag
        self.cost = cost
        self.parent = parent
        self.pair = pair
        self.cands = None
        self.idx = 0
        self.lb = lb
        self.ranks = 0
        """The sum of the ranks on its path from the root, each node's among its parent's candidates in
        the heuristic's order, culled ones included (the `discrepancy` order)."""


def to_score(candidates: list[tuple[Program, Program]]) -> list[tuple[Program, Program]]:
    """The plans `cost=icws` scores at bus level, in order (a time budget may end the scoring early): the
    shortest (allocated length), the first of each longer length, then the next shortest up to
    `BUS_CANDIDATES` of the shortest length's ties and neighbours."""
    ranked = sorted(candidates, key=lambda c: c[0].macros)
    first: dict[int, tuple[Program, Program]] = {}
    for c in ranked:
        first.setdefault(c[0].macros, c)
    chosen = list(first.values())
    return chosen + [c for c in ranked[:BUS_CANDIDATES] if all(c is not d for d in chosen)]


def worker_space(filt: Filter, cfg: SearchConfig, registers: int, index: int = 0) -> Space:
    """The goal space of portfolio worker `index`: worker 0 as configured, the others differing in the
    heuristic's patterns, the exhaustive-split threshold and a seeded jitter of the heuristic's order."""
    variant = index % 4
    return Space(
        cfg.instruction_set,
        filt.depth,
        registers,
        [atoms.from_goal(g) for g in filt.initial_goals()],
        exhaustive_atoms=cfg.exhaustive_atoms + (0, -1, 1, 0)[variant],
        heuristic=cfg.heuristic,
        seed=cfg.seed * 1000 + index,
        jitter=(0.0, 0.2, 0.2, 0.0)[variant] if index else 0.0,
        scaled_relations=cfg.scaled_relations,
        scaled_patterns=cfg.scaled_patterns != (variant in (1, 3)),
        only=cfg.only,
        kernels=[atoms.from_goal(g) for g in filt.final_goals()] if cfg.kernel_repeats else (),
    )


class Worker:
    """One search process: its own goal space, frontier and cache."""

    def __init__(self, filt: Filter, cfg: SearchConfig, names: tuple[str, ...], index: int = 0, shared=None):
        self.filt = filt
        self.cfg = cfg
        self.names = names
        self.index = index
        self.shared = shared
        variant = index % 4
        self.space = worker_space(filt, cfg, len(names), index)
        self.branch = cfg.branch + (0, -8, 8, 0)[variant]
        self.icws_cost = cfg.cost == "icws"
        self.tie = 1 if self.icws_cost else 0
        """Under `cost=icws` plans as long as the best (in macros) are still sought: they may synthesise shorter."""
        self.root = self.space.bag(atoms.from_goal(g) for g in filt.final_goals())
        self.initial = self.space.bag(atoms.from_goal(g) for g in filt.initial_goals())
        tot = self.space.tot
        self.atom_cap = 2 * sum(tot[g] for g in self.root) + sum(tot[g] for g in self.initial)
        """Most atoms a goal-bag of the traversal may hold: past it a child is culled."""
        self.best_cost = 1 << 30
        """The fewest macros of any plan found: what bounds the traversal."""
        self.candidates: list[tuple[Program, Program]] = []
        """Under `cost=icws`: every plan found (allocated, and as SSA), to score at bus level at the end."""
        self.ties = 0
        self.offer_seconds = 0.0
        """Seconds spent scoring plans as they were found (`_scores_now`)."""
        self.hard_deadline: float | None = None
        """The end of the time budget; the traversal's (`budget`) comes earlier under `cost=icws`."""
        self.best: Program | None = None
        self.best_plan: Program | None = None
        self.events: list[PlanEvent] = []
        self.nodes = 0
        self.start = time.perf_counter()
        self.discarded = 0
        self.alone: Program | None = None
        """The best plan, if it was found kernel by kernel."""
        self.again: tuple[float, float] | None = None
        """When (nodes, seconds) to compile the kernels one at a time again (`AGAIN_MARK`)."""
        self.best_path: list[tuple] = []
        """The best plan's goal-bags from the final goals, with their costs and the pairs between them."""
        self.floor = 0
        """A lower bound on the cost: the search stops (`optimal`) once its best plan reaches it."""
        self.handoff: tuple[float, int] | None = None
        """(a time, macros): at that time, the search stops (`handoff`) if its best plan has at most that many
        macros, else goes on."""
        self.budget = Budget()
        """The traversal's budget, set by `run`."""
        self.seconds: float | None = None
        """The time budget in seconds (`DEFAULT_TIME` when neither budget is given), set by `run`."""
        self.progress = None
        self._ticks = 0
        self._shown = self.start
        self.space.tick = self._tick

    # -- budgets --------------------------------------------------------------------------------
    def _tick(self) -> None:
        """The budget check inside one node's pair generation (a big goal's can take long): every 16
        calls, stop on the deadline or the memory limit, and keep the progress line going."""
        self._ticks += 1
        if self._ticks & 15:
            return
        now = time.perf_counter()
        if self.budget.late(now):
            raise OutOfBudget(Stopped.TIME)
        if not self._ticks & 1023 and self._over_memory():
            raise OutOfBudget(Stopped.MEMORY)
        if self.progress is not None and now - self._shown >= 0.25:
            self._shown = now
            self.progress(self, now)

    def _late(self) -> bool:
        """Whether the time budget is spent (never under a node budget alone: the work stays the same)."""
        return self.budget.late(time.perf_counter())

    def _over_memory(self, cache: dict | None = None) -> bool:
        """Whether resident memory is past the limit even after emptying the caches."""
        if not self.budget.over_memory():
            return False
        if cache is not None:
            cache.clear()
        self.space.forget()
        return self.budget.over_memory()

    # -- plans ----------------------------------------------------------------------------------
    def _step_cost(self, macro: str) -> int:
        return 1

    def _min_step(self) -> int:
        return 1

    def _plan(self, node: _Node, tail: list[Pair]) -> None:
        pairs: list[Pair] = []
        n = node
        while n.parent is not None:
            pairs.append(n.pair)
            n = n.parent
        pairs.reverse()
        pairs.extend(tail)
        if self._offer(to_program(self.space, self.filt, pairs, shared=True)):
            path = []
            while node is not None:
                path.append((node.bag, node.cost, node.pair))
                node = node.parent
            self.best_path = path[::-1]

    def _beaten(self, macros: int) -> bool:
        """Whether a plan of `macros` is not worth keeping: longer than the best, or as long when ties are
        not kept (they are under `cost=icws`, up to `BUS_TIES`)."""
        tie = macros == self.best_cost and (not self.icws_cost or self.ties >= BUS_TIES)
        return macros > self.best_cost or tie

    def _scores_now(self) -> bool:
        """Whether a plan found now is scored before it may bound the search (`OFFER_SHARE`)."""
        if self.seconds is None:
            return True
        return self.offer_seconds <= OFFER_SHARE * (time.perf_counter() - self.start)

    def _offer(self, program: Program) -> bool:
        """Keep `program` (an SSA plan, its negations folded: `fold_negations`) as the best if it is shorter
        and fits the registers, and, with a `SearchConfig.score`, if that scores it (fits the DREG file): a
        plan that does not fit bounds nothing; under `cost=icws` plans as short as the best are kept too, as
        candidates for bus-level scoring. Whether it is now the best."""
        program = fold_negations(program, self.space.macros)
        if self._beaten(program.macros):  # the plan's own length: allocation only adds moves
            return False
        done = allocated(program, self.names)
        if done is None:
            self.discarded += 1
            return False
        if self._beaten(done.macros):
            return False
        if self.cfg.score is not None and self._scores_now():
            began = time.perf_counter()
            fits = self.cfg.score(program) is not None
            self.offer_seconds += time.perf_counter() - began
            if not fits:
                self.discarded += 1  # its target (the DREG file) cannot hold it: as if it did not allocate
                return False
        tie = done.macros == self.best_cost
        if self.icws_cost:
            self.candidates.append((done, program))
        if tie:
            self.ties += 1
            return False
        self.best_cost = done.macros
        self.best = done
        self.best_plan = program
        self.events.append(PlanEvent(self.nodes, time.perf_counter() - self.start, done.macros, done.icws))
        if self.shared is not None:
            with self.shared["best"].get_lock():
                if done.macros < self.shared["best"].value:
                    self.shared["best"].value = done.macros
                    self.shared["macros"].value = done.macros
                    self.shared["icws"].value = done.icws
        return True

    def _score(self) -> None:
        """Under `cost=icws`: the shortest plans found (in macros) synthesised at bus level (or scored by
        `SearchConfig.score`), then one plan of each longer length (the earlier bests: their plainer steps
        often fuse into fewer ICWs), the best in ICWs kept; within the time budget's last part (at least one
        plan is always scored, and a `score` of None leaves the plan out)."""
        best = None
        for tried, (done, program) in enumerate(to_score(self.candidates)):
            if tried and self.hard_deadline is not None and time.perf_counter() >= self.hard_deadline:
                break
            if self.cfg.score is not None:
                icws, noisy = self.cfg.score(program), 0
                if icws is None:
                    continue
            else:
                ops = synthesize(done, self.filt, replace(BUS_OPTIONS, deadline=self.hard_deadline)).ops
                icws, noisy = len(ops), sum(op.kind != "bus" for op in ops)
            if best is None or (icws, done.macros) < best[0]:
                best = ((icws, done.macros), done, program, noisy)
        if best is None:
            return
        (bus, _), self.best, self.best_plan, noisy = best
        now = time.perf_counter() - self.start
        self.events.append(PlanEvent(self.nodes, now, self.best.macros, self.best.icws, bus, noisy))
        if self.shared is not None:
            with self.shared["best"].get_lock():
                if not self.shared["bus"].value or bus < self.shared["bus"].value:
                    self.shared["bus"].value = bus
                    self.shared["bus2"].value = noisy
                    self.shared["macros"].value = self.best.macros
                    self.shared["icws"].value = self.best.icws

    def _structured(self) -> None:
        """A first plan from the kernel's factors (`cain.search.heuristic.structure`), when it is a
        convolution of small kernels: the remainder is searched on `structure_nodes` nodes (and at most a
        quarter of the
        time budget), then the chain follows."""
        if not self.cfg.structure_nodes or len(self.filt.kernels) != 1 or self.space.division is None:
            return
        space = self.space
        kernel = self.filt.kernels[0]
        found = structure.factor_with_centre(
            atoms.from_goal(kernel.goal), space.shift_offsets, self.filt.depth
        )
        if found is None or not found[1]:
            return
        steps, rest, centre = found
        channels = len(self.filt.inputs)
        parts = [Kernel.exact(kernel.name, kernel.register, atoms.to_goal(rest), self.filt.depth, channels)]
        if centre:
            (x, y, z, c), spare = centre[0], [r for r in self.names if r != kernel.register]
            if not spare:
                return  # no register to hold the centre atom beside the rest
            parts.append(
                Kernel.exact(
                    "centre", spare[-1], atoms.to_goal(((x, y, z, abs(c)),)), self.filt.depth, channels
                )
            )
        plan = self._sub_search(
            replace(self.filt, kernels=tuple(parts)),
            node_budget=self.cfg.structure_nodes,
            time_budget=self.cfg.time_budget / 4 if self.cfg.time_budget else None,
            structure_nodes=0,
            restart=0,
        )
        if plan is None:
            return
        sign = (1 if centre[0][3] > 0 else -1) if centre else 0
        program = structure.chain_program(plan, steps, structure.ChainForms.of(space), sign)
        if program is not None:
            self._offer(replace(program, name=self.filt.name))

    def _repeats(self) -> None:
        """A first plan from a short search that offers each kernel's repeated sub-patterns before other new
        goals (`SearchConfig.kernel_repeats`, Cain-Java's order), on `SearchConfig.repeats_nodes` nodes: it
        finds the rows and diagonals of edge kernels (Laplacians, compass sets) that the heuristic's order
        ranks late, and costs kernels whose repeats are chance; as a bound, the main search keeps what it
        finds and loses only the run's time. Under `cost=icws` it scores its own plans and offers the best.
        Not with a node budget under ten times its nodes, nor without `add3`."""
        cfg = self.cfg
        nodes = cfg.repeats_nodes
        if cfg.kernel_repeats or not nodes or not self.space.sums:
            return
        if cfg.node_budget is not None and cfg.node_budget < 10 * nodes:
            return
        plan = self._sub_search(
            self.filt,
            node_budget=nodes,
            time_budget=self.seconds * REPEATS_TIME if self.seconds is not None else None,
            kernel_repeats=True,
            kernel_by_kernel=0.0,
            structure_nodes=0,
            restart=0,
        )
        if plan is not None:
            self._offer(plan)

    def _sub_search(self, filt: Filter, **changes) -> Program | None:
        """The best plan of a search of `filt` by this worker's index and registers, configured as a part
        (`_part_config`) with `changes`, on this worker's clock; its nodes are counted as this worker's."""
        sub = Worker(filt, self._part_config(**changes), self.names, self.index)
        sub.start = self.start
        sub.run()
        self.nodes += sub.nodes
        return sub.best_plan

    def _part_config(self, **changes) -> SearchConfig:
        """The configuration of a search of part of the filter (what a factor leaves, one kernel): a `score`
        is of the whole filter's plans, so the part's plans are ranked in macros."""
        part = {"score": None, "cost": "macros"} if self.cfg.score is not None else {}
        return replace(self.cfg, **changes, **part)

    def _kernels_alone(self, share: float) -> None:
        """A plan for a filter of several kernels, compiled one kernel at a time
        (`cain.search.heuristic.kernel_by_kernel`; the constructive program for a kernel its search has none
        for), on `share` of the budget: first a bound for the simultaneous search from the start, then, if the
        simultaneous search has not beaten it by `AGAIN_MARK`, again with `AGAIN_SHARE`. Worker 0 only:
        the others search together from the first node."""
        if self.index or len(self.filt.kernels) < 2 or share <= 0:
            return
        cfg, n, seconds = self.cfg, len(self.filt.kernels), self.seconds
        sub_cfg = self._part_config(
            node_budget=max(1, int(cfg.node_budget * share / n)) if cfg.node_budget is not None else None,
            time_budget=seconds * share / n if seconds is not None else None,
            kernel_by_kernel=0.0,
            restart=0,
            workers=1,
        )

        def search_one(sub: Filter) -> Program | None:
            if self._late():
                return None
            worker = Worker(sub, replace(sub_cfg, registers=sub.registers), sub.registers)
            worker.run()
            self.nodes += worker.nodes
            return worker.best_plan

        def constructive_one(sub: Filter, bases: Bases) -> Program | None:
            return constructive_plan(sub, cfg.instruction_set, bases, self._late)

        plan = kernel_by_kernel(self.filt, self.names, search_one, constructive_one)
        if plan is not None and self._offer(plan):
            self.alone = self.best_plan

    def _again(self, now: float) -> bool:
        """At `AGAIN_MARK`: compile the kernels one at a time again, with `AGAIN_SHARE` of the budget (or
        what is left of it), if their plan is still the best of every worker. Whether it did."""
        if self.nodes < self.again[0] and now < self.again[1]:
            return False
        self.again = None
        if not self.by_kernel or self._bound() < self.best_cost + self.tie:
            return False
        cfg = self.cfg
        if cfg.node_budget is not None:
            left = (cfg.node_budget - self.nodes) / cfg.node_budget
        else:
            left = (self.budget.deadline - now) / self.seconds
        self._kernels_alone(min(AGAIN_SHARE, left))
        return True

    def _again_mark(self) -> tuple[float, float] | None:
        """When (nodes, seconds) the kernels are compiled one at a time again, with more of the budget: only
        if their first plan is the best, and the simultaneous search has not beaten it by then."""
        cfg, seconds = self.cfg, self.seconds
        if not self.by_kernel or cfg.kernel_by_kernel <= 0:
            return None
        return (
            AGAIN_MARK * cfg.node_budget if cfg.node_budget is not None else math.inf,
            self.start + AGAIN_MARK * seconds if seconds is not None else math.inf,
        )

    @property
    def by_kernel(self) -> bool:
        """Whether the best plan is the one compiled kernel by kernel."""
        return self.alone is not None and self.best_plan is self.alone

    def _naive_cap(self) -> int:
        """A cost no plan worth finding exceeds: roughly that of building every atom position of every
        goal on its own (the count from division-chain values, a move per two steps of distance, an add),
        so the search never dives into absurdly long plans before its first one."""
        steps = self.filt.depth + len(self.filt.kernels) + 1
        for g in self.root:
            for x, y, _, c in self.space.goal_of[g]:
                steps += abs(c).bit_count() + (abs(x) + abs(y) + 1) // 2 + 1
        return steps + 1

    def _bound(self) -> int:
        if self.shared is not None and self.shared.get("share"):
            v = self.shared["best"].value
            if v < self.best_cost:
                return v + self.tie
        return self.best_cost + self.tie

    # -- the search -----------------------------------------------------------------------------
    def run(self, progress=None) -> Stopped:
        """Search until the frontier is empty or a budget ends; returns why it stopped.

        With `restart`, the traversal starts again from the final goals after that many nodes (the next
        round half as long again, and so on), its children's order jittered by a new seed each round:
        the best plan so far bounds every round, and the memoised pair generation carries over. Every
        second round may start on the best plan's path instead (`_round_root`)."""
        cfg = self.cfg
        space = self.space
        if len(self.root) > len(self.names):
            raise CainError(
                f"search: the filter has {len(self.root)} kernels but only {len(self.names)} registers; "
                f"use more registers"
            )
        time_budget = cfg.time_budget
        if cfg.node_budget is None and time_budget is None:
            time_budget = DEFAULT_TIME
        self.seconds = time_budget
        self.hard_deadline = self.start + time_budget if time_budget is not None else None
        traversal = time_budget
        if time_budget is not None and self.icws_cost:  # leave time to score the plans at bus level
            traversal = (1 - BUS_SHARE) * time_budget
        self.budget = Budget(
            time=traversal,
            nodes=cfg.node_budget,
            memory=cfg.max_memory // cfg.workers if cfg.max_memory is not None else None,
            grace=GRACE * time_budget / traversal if time_budget is not None else 0.0,
            start=self.start,
        )
        self.progress = progress
        self._structured()
        self._repeats()
        self._kernels_alone(cfg.kernel_by_kernel)
        self.again = self._again_mark()
        self.bound = min(self.best_cost, self._naive_cap())
        self.next_check = 0
        self.next_memory_check = 0.0
        restart = cfg.restart or (PORTFOLIO_RESTART if self.index % 2 else 0)
        if cfg.heuristic != "scamp5":
            restart = 0
        length = restart
        rounds = 0
        while True:
            round_end = self.nodes + int(length) if restart else None
            root = self._round_root(rounds)
            stopped = self._round(progress, round_end, root)
            if stopped != Stopped.ROUND and not (root is not None and stopped == Stopped.EXHAUSTED):
                break  # a round from the plan's path exhausts only its own part of the space
            rounds += 1
            length *= 1.5
            space.jitter = max(space.jitter, cfg.restart_jitter)
            space.rng.seed(cfg.seed * 1_000_003 + self.index * 1009 + rounds)
        if self.icws_cost:
            self._score()
        if progress is not None:
            progress(self, time.perf_counter())
        return stopped

    def _round_root(self, rounds: int) -> _Node | None:
        """Where round `rounds` starts: None for the final goals, or under `restart_from_plan`, every second
        round after the first, a goal-bag on the best plan's path chosen at random (its prefix rebuilt, so
        that a plan found from it is whole)."""
        path = self.best_path
        if not self.cfg.restart_from_plan or rounds % 2 == 1 or not rounds or len(path) < 3:
            return None
        node = None
        for bag, cost, pair in path[: self.space.rng.randrange(1, len(path) - 1) + 1]:
            node = _Node(bag, cost, node, pair, self.space.lower_bound(bag))
        return node

    def _round(self, progress, round_end: int | None, root: _Node | None = None) -> Stopped:
        """One traversal from the final goals (or `root`) until a budget, the round's end or exhaustion."""
        root = root or _Node(self.root, 0, None, None, self.space.lower_bound(self.root))
        heap = self.cfg.traversal in HEAPS
        t = _Traversal([(0.0, 0, 0, root)] if heap else deque([root]), {}, self.bound)
        min_step = self._min_step()
        stopped = Stopped.EXHAUSTED
        while t.frontier:
            if t.bound <= self.floor:
                stopped = Stopped.OPTIMAL
                break
            node = self._pop(t)
            if node.cost + node.lb * min_step >= t.bound:
                if node.cands:
                    t.held -= len(node.cands)
                    node.cands = ()  # its descendants keep it alive: drop what it alone holds
                continue
            if node.cands is None:
                why = self._checkpoint(t, progress, round_end)
                if why is not None:
                    stopped = why
                    break
                if node.cost + node.lb * min_step >= t.bound:  # the bound fell at the checkpoint
                    continue
                try:
                    if not self._expand(t, node):
                        continue
                except OutOfBudget as stop:
                    stopped = stop.reason
                    break
            found = self._next_child(t, node)
            if found is not None:
                self._push(t, node, *found)
        self.bound = t.bound
        return stopped

    def _pop(self, t: _Traversal) -> _Node:
        """The frontier's next node in the traversal's order."""
        if self.cfg.traversal in HEAPS:
            return heapq.heappop(t.frontier)[3]
        if self.cfg.traversal == "dfs":
            return t.frontier.pop()
        return t.frontier.popleft()

    def _checkpoint(self, t: _Traversal, progress, round_end: int | None) -> Stopped | None:
        """Before a node is expanded: why to stop (the node or time budget, the round's end, memory), else
        None; every 64 nodes, the memory, the kernels compiled again (`_again`), the bound shared by the
        portfolio and the progress line."""
        budget = self.budget
        if budget.out_of_nodes(self.nodes):
            return Stopped.NODES
        if round_end is not None and self.nodes >= round_end:
            return Stopped.ROUND
        mark = self.nodes >= self.next_check
        if not mark and budget.time is None:
            return None
        # past the deadline: stop at the next 64-node mark, or at once when that is late (a node on a goal
        # of thousands of atoms takes a good part of a second)
        now = time.perf_counter()
        if budget.late(now) and (mark or budget.past_grace(now)):
            return Stopped.TIME
        if not mark:
            return None
        self.next_check = self.nodes + 64
        if self.handoff is not None and now >= self.handoff[0]:
            reach = self.handoff[1]
            self.handoff = None
            if self.best is not None and self.best.macros <= reach:
                return Stopped.HANDOFF
        if now >= self.next_memory_check:
            self.next_memory_check = now + 0.1
            settle()
            if self._over_memory(t.cache):
                return Stopped.MEMORY
        if self.again is not None and self._again(now):
            now = time.perf_counter()
            if budget.out_of_nodes(self.nodes):
                return Stopped.NODES
        t.bound = min(t.bound, self._bound())
        if progress is not None:
            progress(self, now)
        return None

    def _expand(self, t: _Traversal, node: _Node) -> bool:
        """Visit `node`: skip it if its goal-bag was reached as cheaply before, offer a plan if it is the
        inputs or solved directly (False: nothing more to do there), else give it its candidate children."""
        self.nodes += 1
        bag = node.bag
        seen = t.cache.get(bag)
        if seen is not None and seen <= node.cost:
            return False
        if len(t.cache) >= self.cfg.cache_limit:
            t.cache.clear()
        t.cache[bag] = node.cost
        initial = self.initial
        if bag == initial or len(bag) < len(initial) and set(bag) <= set(initial):
            self._plan(node, [])
            t.bound = min(t.bound, self.best_cost + self.tie)
            return False
        if len(bag) <= len(initial) + 2 + len(self.filt.kernels):
            tail = direct_solution(self.space, bag)
            if tail is not None and node.cost + sum(self._step_cost(p[0]) for p in tail) < t.bound:
                self._plan(node, tail)
                t.bound = min(t.bound, self.best_cost + self.tie)
                return False
        node.cands = self.space.pairs(bag, self.branch)
        node.idx = 0
        t.held += len(node.cands)
        return True

    def _next_child(self, t: _Traversal, node: _Node) -> tuple[_Node, float] | None:
        """`node`'s next child that is not culled (by the cache, the bound or the atom cap), with its
        heuristic cost; a spent node lets go of its candidates, and past `frontier_limit` keeps only its
        next `frontier_keep`."""
        cands = node.cands
        tot = self.space.tot
        min_step = self._min_step()
        child = None
        h = 0.0
        while node.idx < len(cands):
            h, pair, cbag = cands[node.idx]
            node.idx += 1
            cost = node.cost + self._step_cost(pair[0])
            seen = t.cache.get(cbag)
            if seen is not None and seen <= cost:
                continue
            lb = self.space.lower_bound(cbag)
            if cost + lb * min_step >= t.bound or sum([tot[g] for g in cbag]) > self.atom_cap:
                continue
            child = _Node(cbag, cost, node, pair, lb)
            break
        keep = self.cfg.frontier_keep
        if child is None or node.idx >= len(cands):
            t.held -= len(cands)
            node.cands = ()  # spent: its descendants keep it alive, not its children list
        elif t.held > self.cfg.frontier_limit and len(cands) - node.idx > keep:
            t.held -= len(cands) - keep
            node.cands = cands[node.idx : node.idx + keep]
            node.idx = 0
        return None if child is None else (child, h)

    def _push(self, t: _Traversal, node: _Node, child: _Node, h: float) -> None:
        """Put `child` and `node` (for its next children) back on the frontier, in the traversal's order."""
        traversal, frontier = self.cfg.traversal, t.frontier
        if traversal == "cgds":
            frontier.appendleft(child)
            frontier.append(node)
        elif traversal == "dfs":
            frontier.append(node)
            frontier.append(child)
        elif traversal == "bfs":
            frontier.append(child)
            frontier.appendleft(node)
        elif traversal == "discrepancy":  # fewest ranks first, then deepest, then oldest
            child.ranks = node.ranks + node.idx - 1
            t.counter += 1
            heapq.heappush(frontier, (child.ranks, -child.cost, t.counter, child))
            if node.idx < len(node.cands):
                t.counter += 1
                heapq.heappush(frontier, (node.ranks + node.idx, -node.cost, t.counter, node))
        else:
            t.counter += 1
            heapq.heappush(frontier, (h, 0, t.counter, child))
            if node.idx < len(node.cands):
                t.counter += 1
                heapq.heappush(frontier, (node.cands[node.idx][0], 0, t.counter, node))
