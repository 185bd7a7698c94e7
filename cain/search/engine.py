"""The reverse goal-bag search (paper 3.2-3.3): CGDS (or DFS, BFS, best-first) over goal-bags, from the
final goals back to the input, anytime, with every plan register-allocated and verified.
"""

from __future__ import annotations

import heapq
import multiprocessing
import resource
import sys
import time
from collections import deque
from dataclasses import dataclass, field, replace

from cain.backend.regalloc import allocate
from cain.backend.verify import verify_program
from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.isa import MACROS
from cain.model.program import Program
from cain.search import atoms
from cain.search.kernel_by_kernel import kernel_by_kernel
from cain.search.plan import direct_solution, to_program
from cain.search.space import Pair, Space

TRAVERSALS = ("cgds", "dfs", "bfs", "best-first")
COSTS = ("macros", "icws")
HEURISTICS = ("scamp5", "random")
DEFAULT_TIME = 10.0
PORTFOLIO_RESTART = 1000
"""Nodes before the first restart of the portfolio's odd-numbered workers: restarts find the shared
structure of the combined Gaussians far sooner, and cost a little on kernels without such structure, so
one worker of two restarts and the other does not."""


@dataclass(frozen=True)
class SearchConfig:
    """How to search: instruction set, register file, budgets, determinism and traversal."""

    instruction_set: str = "all"
    registers: int | tuple[str, ...] | None = None
    node_budget: int | None = None
    time_budget: float | None = None
    seed: int = 0
    workers: int = 1
    traversal: str = "cgds"
    cost: str = "macros"
    heuristic: str = "scamp5"
    progress: bool | None = None
    branch: int = 40
    """Children kept per node (the cheapest by the heuristic)."""
    exhaustive_atoms: int = 6
    """Goals with at most this many atoms are split every possible way; bigger ones by the cheaper
    atom-distance generator."""
    scaled_relations: int = 0
    """Also split goals along halved (1, 2, ... times) copies of the other goals of the bag."""
    scaled_patterns: bool = False
    """The heuristic counts goals equal up to translation and a power-of-two scale as one pattern."""
    macros: tuple[str, ...] | None = None
    """Use only these macros of the instruction set (None: all of them)."""
    restart: int = 0
    """Start the traversal again after this many nodes, each round 1.5 times longer and its order
    jittered by a new seed; the best plan bounds every round. 0: worker 0 never restarts, and the
    portfolio's odd-numbered workers restart every `PORTFOLIO_RESTART` nodes."""
    restart_jitter: float = 0.25
    """The relative jitter of the heuristic in rounds after the first."""
    cache_limit: int = 3_000_000
    """Most goal-bags remembered for culling; the cache is emptied when it grows past this."""
    frontier_limit: int = 600_000
    """Most candidate children the frontier's nodes hold (they are most of a search's memory); past it,
    a node put back on the frontier keeps only its next `frontier_keep` children."""
    frontier_keep: int = 3
    kernel_by_kernel: float = 0.1
    """For a filter of several kernels: when the simultaneous search ends without a plan, this share of its
    budget again goes to compiling the kernels one at a time (`cain.search.kernel_by_kernel`) for a plan to return.
    0: never."""


@dataclass(frozen=True)
class PlanEvent:
    """One improvement of the best plan: when it was found and how long it is."""

    nodes: int
    seconds: float
    macros: int
    icws: int


@dataclass
class SearchResult:
    """The best verified plan (register-allocated, and as SSA in `plan`) and how the search went."""

    program: Program | None
    events: list[PlanEvent] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    peak_memory: int = 0
    stopped: str = "exhausted"
    plan: Program | None = None
    """The best plan as the search built it: SSA values, no registers (what the search pass emits)."""
    kernel_by_kernel: bool = False
    """The plan was found kernel by kernel, the simultaneous search having found none."""


def _check(filt: Filter, cfg: SearchConfig) -> tuple[str, ...]:
    """The register names to allocate; a clear error for an invalid configuration."""
    if cfg.traversal not in TRAVERSALS:
        raise CainError(f"search: unknown traversal '{cfg.traversal}' (choose from {', '.join(TRAVERSALS)})")
    if cfg.cost not in COSTS:
        raise CainError(f"search: unknown cost '{cfg.cost}' (choose from {', '.join(COSTS)})")
    if cfg.heuristic not in HEURISTICS:
        raise CainError(f"search: unknown heuristic '{cfg.heuristic}' (choose from {', '.join(HEURISTICS)})")
    if cfg.instruction_set not in ("all", "basic"):
        raise CainError(f"search: unknown instruction set '{cfg.instruction_set}' (choose from all, basic)")
    if cfg.workers < 1:
        raise CainError(f"search: workers must be at least 1, not {cfg.workers}")
    if cfg.node_budget is not None and cfg.node_budget < 1:
        raise CainError(f"search: the node budget must be positive, not {cfg.node_budget}")
    if cfg.time_budget is not None and cfg.time_budget <= 0:
        raise CainError(f"search: the time budget must be positive, not {cfg.time_budget}")
    regs = cfg.registers
    if regs is None:
        names = tuple(filt.registers)
    elif isinstance(regs, int):
        if regs < 1:
            raise CainError(f"search: the register count must be positive, not {regs}")
        names = tuple(filt.registers[:regs]) + tuple(f"R{i}" for i in range(len(filt.registers), regs))
    else:
        names = tuple(regs)
    pinned = {r for _, r in filt.inputs} | {k.register for k in filt.kernels}
    missing = sorted(pinned - set(names))
    if missing:
        raise CainError(
            f"search: register(s) {', '.join(missing)} hold inputs or outputs but are not in the register file "
            f"{', '.join(names)}; add them or use more registers"
        )
    return names


def _finish(program: Program, filt: Filter, names: tuple[str, ...]) -> Program | None:
    """The plan register-allocated and verified, or None when allocation fails."""
    try:
        program = allocate(program, names)
    except CainError:
        return None
    verify_program(program, filt.initial_goals(), filt.final_goals(), filt.depth)
    return program


class _Node:
    __slots__ = ("bag", "cands", "cost", "idx", "lb", "pair", "parent")

    def __init__(self, bag, cost, parent, pair, lb):
        self.bag = bag
        self.cost = cost
        self.parent = parent
        self.pair = pair
        self.cands = None
        self.idx = 0
        self.lb = lb


class Worker:
    """One search process: its own goal space, frontier and cache."""

    def __init__(self, filt: Filter, cfg: SearchConfig, names: tuple[str, ...], index: int = 0, shared=None):
        self.filt = filt
        self.cfg = cfg
        self.names = names
        self.index = index
        self.shared = shared
        # a portfolio: worker 0 as configured, the others differ in the heuristic's patterns, the
        # exhaustive-split threshold and a seeded jitter of the heuristic's order
        variant = index % 4
        self.space = Space(
            cfg.instruction_set,
            filt.depth,
            len(names),
            [atoms.from_goal(g) for g in filt.initial_goals()],
            exhaustive_atoms=cfg.exhaustive_atoms + (0, -1, 1, 0)[variant],
            heuristic=cfg.heuristic,
            seed=cfg.seed * 1000 + index,
            jitter=(0.0, 0.2, 0.2, 0.0)[variant] if index else 0.0,
            scaled_relations=cfg.scaled_relations,
            scaled_patterns=cfg.scaled_patterns != (variant in (1, 3)),
            only=frozenset(cfg.macros) if cfg.macros is not None else None,
        )
        self.branch = cfg.branch + (0, -8, 8, 0)[variant]
        self.icws_cost = cfg.cost == "icws"
        self.root = self.space.bag(atoms.from_goal(g) for g in filt.final_goals())
        self.initial = self.space.bag(atoms.from_goal(g) for g in filt.initial_goals())
        self.best_cost = 1 << 30
        self.best: Program | None = None
        self.best_plan: Program | None = None
        self.events: list[PlanEvent] = []
        self.nodes = 0
        self.start = time.perf_counter()
        self.discarded = 0

    # -- plans ----------------------------------------------------------------------------------
    def _step_cost(self, macro: str) -> int:
        return MACROS[macro].icws if self.icws_cost else 1

    def _min_step(self) -> int:
        return min(m.icws for m in MACROS.values()) if self.icws_cost else 1

    def _plan(self, node: _Node, tail: list[Pair]) -> None:
        pairs: list[Pair] = []
        n = node
        while n.parent is not None:
            pairs.append(n.pair)
            n = n.parent
        pairs.reverse()
        pairs.extend(tail)
        program = to_program(self.space, self.filt, pairs)
        cost = program.icws if self.icws_cost else program.macros
        if cost >= self.best_cost:
            return
        done = _finish(program, self.filt, self.names)
        if done is None:
            self.discarded += 1
            return
        cost = done.icws if self.icws_cost else done.macros
        if cost >= self.best_cost:
            return
        self.best_cost = cost
        self.best = done
        self.best_plan = program
        self.events.append(PlanEvent(self.nodes, time.perf_counter() - self.start, done.macros, done.icws))
        if self.shared is not None:
            with self.shared["best"].get_lock():
                if cost < self.shared["best"].value:
                    self.shared["best"].value = cost
                    self.shared["macros"].value = done.macros
                    self.shared["icws"].value = done.icws

    def _naive_cap(self) -> int:
        """A cost no plan worth finding exceeds: roughly that of building every atom position of every
        goal on its own (the count from division-chain values, a move per two steps of distance, an add),
        so the search never dives into absurdly long plans before its first one."""
        steps = self.filt.depth + len(self.filt.kernels) + 1
        for g in self.root:
            for x, y, _, c in self.space.goal_of[g]:
                steps += abs(c).bit_count() + (abs(x) + abs(y) + 1) // 2 + 1
        return steps * (max(m.icws for m in MACROS.values()) if self.icws_cost else 1) + 1

    def _bound(self) -> int:
        if self.shared is not None and self.shared.get("share"):
            v = self.shared["best"].value
            if v < self.best_cost:
                return v
        return self.best_cost

    # -- the search -----------------------------------------------------------------------------
    def run(self, progress=None) -> str:
        """Search until the frontier is empty or a budget ends; returns why it stopped.

        With `restart`, the traversal starts again from the final goals after that many nodes (the next
        round half as long again, and so on), its children's order jittered by a new seed each round:
        the best plan so far bounds every round, and the memoised pair generation carries over."""
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
        self.deadline = self.start + time_budget if time_budget is not None else None
        self.bound = min(self.best_cost, self._naive_cap())
        self.next_check = 0
        restart = cfg.restart or (PORTFOLIO_RESTART if self.index % 2 else 0)
        if cfg.heuristic != "scamp5":
            restart = 0
        length = restart
        rounds = 0
        while True:
            round_end = self.nodes + int(length) if restart else None
            stopped = self._round(progress, round_end)
            if stopped != "round":
                break
            rounds += 1
            length *= 1.5
            space.jitter = max(space.jitter, cfg.restart_jitter)
            space.rng.seed(cfg.seed * 1_000_003 + self.index * 1009 + rounds)
        if progress is not None:
            progress(self, time.perf_counter())
        return stopped

    def _round(self, progress, round_end: int | None) -> str:
        """One traversal from the final goals until a budget, the round's end or exhaustion."""
        cfg = self.cfg
        space = self.space
        node_budget = cfg.node_budget
        deadline = self.deadline
        traversal = cfg.traversal
        cache: dict[tuple[int, ...], int] = {}
        initial = self.initial
        initial_set = set(initial)
        min_step = self._min_step()
        branch = self.branch
        root = _Node(self.root, 0, None, None, space.lower_bound(self.root))
        frontier = deque([root]) if traversal != "best-first" else [(0.0, 0, root)]
        counter = 1
        bound = self.bound
        tot = space.tot
        atom_cap = 2 * sum(tot[g] for g in self.root) + sum(tot[g] for g in self.initial)
        direct_size = len(initial) + 2 + len(self.filt.kernels)
        stopped = "exhausted"
        held = 0  # candidate children held by the frontier's nodes
        frontier_limit = cfg.frontier_limit
        keep = cfg.frontier_keep
        while frontier:
            if traversal == "best-first":
                _, _, node = heapq.heappop(frontier)
            elif traversal == "dfs":
                node = frontier.pop()
            else:
                node = frontier.popleft()
            if node.cost + node.lb * min_step >= bound:
                if node.cands:
                    held -= len(node.cands)
                    node.cands = ()  # its descendants keep it alive: drop what it alone holds
                continue
            if node.cands is None:
                if node_budget is not None and self.nodes >= node_budget:
                    stopped = "nodes"
                    break
                if round_end is not None and self.nodes >= round_end:
                    stopped = "round"
                    break
                if self.nodes >= self.next_check:
                    self.next_check = self.nodes + 64
                    now = time.perf_counter()
                    if deadline is not None and now >= deadline:
                        stopped = "time"
                        break
                    bound = min(bound, self._bound())
                    if progress is not None:
                        progress(self, now)
                    if node.cost + node.lb * min_step >= bound:
                        continue
                self.nodes += 1
                bag = node.bag
                seen = cache.get(bag)
                if seen is not None and seen <= node.cost:
                    continue
                if len(cache) >= cfg.cache_limit:
                    cache.clear()
                cache[bag] = node.cost
                if bag == initial or len(bag) < len(initial) and set(bag) <= initial_set:
                    self._plan(node, [])
                    bound = min(bound, self.best_cost)
                    continue
                if len(bag) <= direct_size:
                    tail = direct_solution(space, bag)
                    if tail is not None:
                        extra = sum(self._step_cost(p[0]) for p in tail)
                        if node.cost + extra < bound:
                            self._plan(node, tail)
                            bound = min(bound, self.best_cost)
                            continue
                node.cands = space.pairs(bag, branch)
                node.idx = 0
                held += len(node.cands)
            # yield the node's next child that is not culled
            cands = node.cands
            child = None
            while node.idx < len(cands):
                h, pair, cbag = cands[node.idx]
                node.idx += 1
                cost = node.cost + self._step_cost(pair[0])
                seen = cache.get(cbag)
                if seen is not None and seen <= cost:
                    continue
                lb = space.lower_bound(cbag)
                if cost + lb * min_step >= bound or sum([tot[g] for g in cbag]) > atom_cap:
                    continue
                child = _Node(cbag, cost, node, pair, lb)
                break
            if child is None or node.idx >= len(cands):
                held -= len(cands)
                node.cands = ()  # spent: its descendants keep it alive, not its children list
                if child is None:
                    continue
            elif held > frontier_limit and len(cands) - node.idx > keep:
                held -= len(cands) - keep
                node.cands = cands = cands[node.idx:node.idx + keep]
                node.idx = 0
            if traversal == "cgds":
                frontier.appendleft(child)
                frontier.append(node)
            elif traversal == "dfs":
                frontier.append(node)
                frontier.append(child)
            elif traversal == "bfs":
                frontier.append(child)
                frontier.appendleft(node)
            else:
                counter += 1
                heapq.heappush(frontier, (h, counter, child))
                if node.idx < len(cands):
                    counter += 1
                    heapq.heappush(frontier, (cands[node.idx][0], counter, node))
        self.bound = bound
        return stopped


def _own_peak_memory() -> int:
    """This process's peak resident memory in bytes (its high-water mark; for a forked worker this
    includes the pages it shares with the parent, so a sum over processes errs on the high side)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _Progress:
    """A live status line on stderr: best plan, nodes, nodes per second, elapsed time."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.last = 0.0

    def line(self, macros, icws, nodes, elapsed) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < 0.25:
            return
        self.last = now
        best = f"{macros} macros / {icws} ICWs" if macros else "no plan yet"
        rate = nodes / elapsed if elapsed > 0 else 0.0
        sys.stderr.write(f"\rsearch: best {best}, {nodes} nodes, {rate:,.0f} nodes/s, {elapsed:.1f} s   ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _progress_enabled(cfg: SearchConfig) -> bool:
    if cfg.progress is None:
        return sys.stderr.isatty()
    return bool(cfg.progress)


def search(filt: Filter, cfg: SearchConfig | None = None) -> SearchResult:
    """Search for the shortest verified program computing `filt`'s kernels from its inputs. A filter of
    several kernels for which the simultaneous search finds no plan is then compiled kernel by kernel."""
    cfg = cfg or SearchConfig()
    names = _check(filt, cfg)
    start = time.perf_counter()
    run = _search_one if cfg.workers == 1 else _search_parallel
    result = run(filt, cfg, names, start)
    if result.program is None and len(filt.kernels) > 1 and cfg.kernel_by_kernel > 0:
        _rescue(result, filt, cfg, names, start)
        result.seconds = time.perf_counter() - start
    return result


def _rescue(result: SearchResult, filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float) -> None:
    """Compile the kernels one at a time, each on an equal part of `kernel_by_kernel` times the budget;
    their concatenated plan, if it fits the registers and verifies, becomes `result`'s plan."""
    share = cfg.kernel_by_kernel / len(filt.kernels)
    timed = cfg.node_budget is None or cfg.time_budget is not None
    sub_cfg = replace(
        cfg,
        node_budget=max(1, int(cfg.node_budget * share)) if cfg.node_budget is not None else None,
        time_budget=(cfg.time_budget or DEFAULT_TIME) * share if timed else None,
        kernel_by_kernel=0.0,
        progress=False,
    )

    def search_one(sub: Filter) -> Program | None:
        r = search(sub, replace(sub_cfg, registers=sub.registers))
        result.nodes += r.nodes
        return r.plan

    found = kernel_by_kernel(filt, names, search_one, lambda p: _finish(p, filt, names))
    if found is not None:
        result.program, result.plan = found
        result.kernel_by_kernel = True
        result.events.append(PlanEvent(result.nodes, time.perf_counter() - start, found[0].macros, found[0].icws))


def _search_one(filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float) -> SearchResult:
    worker = Worker(filt, cfg, names)
    bar = _Progress(_progress_enabled(cfg))

    def progress(w: Worker, now: float) -> None:
        best = w.best
        bar.line(best.macros if best else 0, best.icws if best else 0, w.nodes, now - w.start)

    stopped = worker.run(progress if bar.enabled else None)
    bar.close()
    return SearchResult(
        program=worker.best,
        events=worker.events,
        nodes=worker.nodes,
        seconds=time.perf_counter() - start,
        peak_memory=_own_peak_memory(),
        stopped=stopped,
        plan=worker.best_plan,
    )


def _worker_main(filt, cfg, names, index, shared, conn) -> None:
    try:
        worker = Worker(filt, cfg, names, index, shared)
        counts = shared["nodes"]

        def progress(w: Worker, now: float) -> None:
            counts[index] = w.nodes

        stopped = worker.run(progress)
        counts[index] = worker.nodes
        conn.send(("ok", (worker.best, worker.best_plan), worker.events, worker.nodes, stopped, _own_peak_memory()))
    except Exception as e:  # noqa: BLE001 (reported to the parent rather than lost with the process)
        conn.send(("error", repr(e), None, 0, "error", 0))
    finally:
        conn.close()


def _search_parallel(filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float) -> SearchResult:
    """A portfolio of diversified workers, one process each. With a time budget (and no node budget)
    they share the best plan length, so each prunes by the best any has found; with a node budget
    they run independently, which keeps the result deterministic."""
    ctx = multiprocessing.get_context("fork")
    share = cfg.node_budget is None
    shared = {
        "best": ctx.Value("q", 1 << 30),
        "macros": ctx.Value("q", 0),
        "icws": ctx.Value("q", 0),
        "nodes": ctx.Array("q", cfg.workers, lock=False),
        "share": share,
    }
    procs = []
    conns = []
    for i in range(cfg.workers):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker_main, args=(filt, cfg, names, i, shared, child), daemon=True)
        p.start()
        child.close()
        procs.append(p)
        conns.append(parent)
    bar = _Progress(_progress_enabled(cfg))
    results = [None] * cfg.workers
    pending = set(range(cfg.workers))
    while pending:
        for i in list(pending):
            if conns[i].poll(0.05):
                try:
                    results[i] = conns[i].recv()
                except EOFError:
                    results[i] = ("error", "worker exited", None, 0, "error", 0)
                pending.discard(i)
            elif not procs[i].is_alive() and not conns[i].poll(0):
                results[i] = ("error", f"worker exited with status {procs[i].exitcode}", None, 0, "error", 0)
                pending.discard(i)
        if bar.enabled:
            m = shared["macros"].value
            bar.line(m, shared["icws"].value, sum(shared["nodes"]), time.perf_counter() - start)
    bar.close()
    for p in procs:
        p.join()
    errors = [r[1] for r in results if r[0] == "error"]
    if errors:
        raise RuntimeError(f"search worker failed: {errors[0]}")
    best = plan = None
    best_key = None
    events: list[tuple[float, int, PlanEvent]] = []
    nodes = 0
    stops = []
    # the search's memory: every worker's own peak plus the parent's (all alive at once)
    peak = _own_peak_memory()
    for i, (_, (program, ssa), evs, n, stopped, worker_peak) in enumerate(results):
        nodes += n
        peak += worker_peak
        stops.append(stopped)
        for e in evs:
            events.append((e.seconds, i, e))
        if program is not None:
            key = (program.icws if cfg.cost == "icws" else program.macros, program.macros, program.icws, i)
            if best_key is None or key < best_key:
                best, plan, best_key = program, ssa, key
    merged: list[PlanEvent] = []
    total_nodes = 0
    for _, _, e in sorted(events, key=lambda t: (t[0], t[1])):
        key = e.icws if cfg.cost == "icws" else e.macros
        if not merged or key < (merged[-1].icws if cfg.cost == "icws" else merged[-1].macros):
            # nodes explored by all workers by then, estimated from the finding worker's own count
            total_nodes = max(total_nodes, e.nodes * cfg.workers)
            merged.append(PlanEvent(total_nodes, e.seconds, e.macros, e.icws))
    stopped = "time" if "time" in stops else "nodes" if "nodes" in stops else "exhausted"
    return SearchResult(
        program=best,
        events=merged,
        nodes=nodes,
        seconds=time.perf_counter() - start,
        peak_memory=peak,
        stopped=stopped,
        plan=plan,
    )


__all__ = ["PlanEvent", "SearchConfig", "SearchResult", "Worker", "search"]
