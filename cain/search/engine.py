"""`search`: the reverse goal-bag search of a filter (paper 3.2-3.3), anytime, by one worker or a portfolio of
worker processes, with a progress line, and the constructive program when the search has no program or a
longer one."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace

from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.program import Program
from cain.search.allocate import allocated, verify
from cain.search.budget import Budget, Stopped, long_lived_tables, peak_memory
from cain.search.config import DEFAULT_TIME, PlanEvent, SearchConfig, SearchResult, register_names
from cain.search.constructive import over_input
from cain.search.constructive.program import shortest_constructive, shortest_fitting
from cain.search.exact import sat as exact_sat
from cain.search.exact import window
from cain.search.exact.bound import filter_bound
from cain.search.exact.bus import ExactBusSearch, upper_ops
from cain.search.exact.deepening import ExactSearch
from cain.search.exact.full import full_bag_refuted
from cain.search.goals import atoms
from cain.search.goals.space import Space
from cain.search.heuristic import structure
from cain.search.heuristic.worker import Worker
from cain.search.portfolio import search_parallel
from cain.search.progress import Progress, progress_enabled


def search(filt: Filter, cfg: SearchConfig | None = None) -> SearchResult:
    """Search for the shortest verified program computing `filt`'s kernels from its inputs."""
    cfg = cfg or SearchConfig()
    names = register_names(filt, cfg)
    _check_size(filt, cfg)
    start = time.perf_counter()
    bound = filter_bound(filt, cfg.instruction_set)
    final = [atoms.from_goal(g) for g in filt.final_goals()]
    with long_lived_tables():
        if full_bag_refuted(final, len(filt.inputs), len(names)):
            # no program of the goal model fits: only the constructive program could, so do not search
            result = SearchResult(program=None, stopped=Stopped.IMPOSSIBLE)
        elif cfg.exact:
            result = _search_exact(filt, cfg, names, start, bound)
        else:
            result = _search_heuristic(filt, cfg, names, start, bound)
        after = time.perf_counter()
        result.seconds = after - start
        if cfg.fallback and (result.program is None or cfg.compare_constructive):
            _offer_constructive(result, filt, cfg, names)
            if result.constructive and cfg.cost == "macros" and _timing(cfg)[0]:
                # its windows, in the time the search left (all of it when no plan of the goal model fits)
                result = _shorten(filt, cfg, names, start, result)
    if result.program is not None:
        verify(result.program, filt)
    result.finish_seconds = time.perf_counter() - after
    result.lower_bound = max(result.lower_bound, bound)
    result.model_bound = max(result.model_bound, result.lower_bound)
    result.optimal = result.program is not None and result.program.macros <= result.model_bound
    return result


def _check_size(filt: Filter, cfg: SearchConfig) -> None:
    """Refuse, with what to change, a filter whose goals are too large to search: more than `max_atoms`
    atoms, unless the kernel factors (`cain.search.heuristic.structure`) and what is left of it once the
    factors' chain is taken out, which the search starts from, is small (the 9x9 binomial: the input
    itself)."""
    total = sum(k.goal.total for k in filt.kernels)
    if total <= cfg.max_atoms:
        return
    if len(filt.kernels) == 1 and cfg.structure_nodes:
        space = Space(cfg.instruction_set, filt.depth, 1, [atoms.from_goal(g) for g in filt.initial_goals()])
        found = structure.factor_with_centre(
            atoms.from_goal(filt.kernels[0].goal), space.shift_offsets, filt.depth
        )
        if found is not None and found[0] and (len(found[1]) == 1 or atoms.total(found[1]) <= cfg.max_atoms):
            return  # the chain leaves a small goal, or the input itself at one position
    biggest = max(filt.kernels, key=lambda k: k.goal.total)
    raise CainError(
        f"search: filter '{filt.name}' is too large to search: its kernels have {total:,} atoms at depth "
        f"{filt.depth} ('{biggest.name}' {biggest.goal.total:,}), more than {cfg.max_atoms:,}; lower the "
        f"depth (--max-depth, or allow --max-error) to shrink the counts, split the kernel, or raise "
        f"search{{max-atoms=N}}"
    )


EXACT_PREPASS = 2000
"""Nodes of the heuristic search before the exact one (and at most a tenth of a time budget): its plan
bounds the lengths to refute."""


EXACT_PROBE = 300
"""Nodes of the heuristic search (and at most a twentieth of a time budget or a tenth of a node budget,
on top of it) whose plan decides whether a filter is small enough for the exact search
(`SearchConfig.exact_reach`)."""


FINISH_SHARE = 0.25
"""Of a time budget, how long the constructive programs may be built after a search that has a plan."""


HEURISTIC_SHARE = 1 / 8
"""Of what the probe leaves of the budget, the heuristic's part when the exact search follows: plans
within the exact search's reach are found early (on the suite's, within the first second), its plan is
the exact search's upper bound, and the exact search's deeper lengths take seconds each."""


WINDOW_SHARE = 1 / 10
"""Of what the probe leaves of a time budget alone, when the exact search does not run, the part in which
stretches of the heuristic's plan are replaced by shorter ones (`cain.search.exact.window`). With a node
budget the heuristic has all of it and no window is tried: the exact searches' work per node varies by
orders of magnitude, so any share of a node budget either cut them short or doubled the search's time."""


def _timing(cfg: SearchConfig) -> tuple[bool, float]:
    """Whether the search runs on time (a time budget, or no budget at all), and its seconds if so."""
    return cfg.time_budget is not None or cfg.node_budget is None, cfg.time_budget or DEFAULT_TIME


def _search_heuristic(
    filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float, bound: int
) -> SearchResult:
    """The heuristic search, by one worker or a portfolio; in macros, a short probe first, and when its
    plan is within the exact search's reach (`SearchConfig.exact_reach`), the heuristic with an eighth of
    what is left of the budget (`HEURISTIC_SHARE`), then the exact search (`_prove`) with the rest; else
    the heuristic, then on a time budget its plan's windows shortened (`_shorten`, `WINDOW_SHARE`). One
    worker on a time budget hands over to the exact search at the eighth all the same when its plan is
    within reach by then (the probe's plan can be longer than the heuristic's first second's)."""
    run = _search_one if cfg.workers == 1 else search_parallel
    if cfg.cost != "macros" or cfg.exact_reach <= 0:
        return run(filt, cfg, names, start, bound if cfg.cost == "macros" else 0)
    timed, seconds = _timing(cfg)
    nodes = EXACT_PROBE if cfg.node_budget is None else min(EXACT_PROBE, cfg.node_budget // 10)
    probe = _search_one(
        filt,
        replace(cfg, node_budget=nodes, time_budget=seconds / 20 if timed else None),
        names,
        start,
        bound,
    )
    if probe.stopped == Stopped.OPTIMAL:
        return probe  # its plan meets the lower bound
    small = probe.program is not None and probe.program.macros <= cfg.exact_reach
    windows = not small and cfg.node_budget is None
    share = HEURISTIC_SHARE if small else 1.0
    # a node budget is the heuristic's and the exact search's, the probe's nodes (a tenth at most) on top:
    # the heuristic's course depends on its node count, and cutting it by the probe's changes its plans
    left = cfg.node_budget
    rest = replace(
        cfg,
        node_budget=None if left is None else max(1, int(left * share)),
        time_budget=(seconds - (time.perf_counter() - start)) * (1 - WINDOW_SHARE if windows else share)
        if timed
        else None,
    )
    if windows and cfg.workers == 1:
        # a plan the probe missed may come within reach early: then the exact search takes over, as above
        at = time.perf_counter() + (seconds - (time.perf_counter() - start)) * HEURISTIC_SHARE
        result = _search_one(filt, rest, names, start, bound, handoff=(at, cfg.exact_reach))
        small = result.stopped == Stopped.HANDOFF
    else:
        result = run(filt, rest, names, start, bound)
    result.nodes += probe.nodes
    if probe.program is not None and (result.program is None or probe.program.macros < result.program.macros):
        result.program, result.plan, result.events = probe.program, probe.plan, probe.events
    if not small:
        return _shorten(filt, cfg, names, start, result) if windows else result
    left = None if left is None else max(1, left - rest.node_budget)
    return _prove(filt, replace(cfg, node_budget=left), names, start, bound, result, deepening_first=True)


def _shorten(
    filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float, result: SearchResult
) -> SearchResult:
    """`result` with stretches of its plan replaced by shorter ones (`cain.search.exact.window`) until the end
    of the time budget."""
    if result.plan is None or result.program is None:
        return result
    _, seconds = _timing(cfg)
    budget = Budget(time=max(0.0, start + seconds - time.perf_counter()), memory=cfg.max_memory)
    found = window.shorten(
        filt, result.plan, result.program.macros, cfg.instruction_set, names, budget, cfg.only
    )
    if found is not None:
        result.program, result.plan = found
        now = time.perf_counter() - start
        result.events.append(PlanEvent(result.nodes, now, found[0].macros, found[0].icws))
    return result


def _search_exact(
    filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float, bound: int
) -> SearchResult:
    """A short heuristic search for a plan, then the exact search (`_prove`)."""
    timed, seconds = _timing(cfg)
    prepass = replace(cfg, node_budget=EXACT_PREPASS, time_budget=seconds / 10 if timed else None)
    return _prove(filt, cfg, names, start, bound, _search_one(filt, prepass, names, start, bound))


def _prove(
    filt: Filter,
    cfg: SearchConfig,
    names: tuple[str, ...],
    start: float,
    bound: int,
    result: SearchResult,
    deepening_first: bool = False,
) -> SearchResult:
    """The exact search (`cain.search.exact.deepening`) from the lower bound up to the length of `result`'s
    plan, with CP-SAT: a shorter program it finds is optimal, and when it refutes every shorter length the
    plan is. CP-SAT's first questions come before the deepening, or with `deepening_first` on a time budget
    after it (`DEEPENING_FIRST`: the default search's small filters, where finding the program quickly
    matters more than proving it shortest among every program). With `cost=icws`, the exact search over
    micro-ops (`cain.search.exact.bus`) below the length of the plan's bus-level synthesis, likewise."""
    timed, seconds = _timing(cfg)
    budget = Budget(time=seconds if timed else None, nodes=cfg.node_budget, start=start)
    if cfg.cost == "icws":
        if result.program is None:
            found_plan = _constructive_program(filt, cfg, names)
            if found_plan is not None:
                result.program, result.plan = found_plan
                result.constructive = True
        upper = upper_ops(result.program, filt, names) if result.program is not None else None
        by_bus = ExactBusSearch(filt, names, budget)
        done = by_bus.run(upper=len(upper) if upper is not None else None)
        result.bus_ops = done.ops if done.ops is not None else upper
        result.icw_bound, result.nodes, result.stopped = done.bound, result.nodes + done.nodes, done.stopped
        return result
    cp_sat = _CpSat(filt, cfg, names, start, result) if cfg.cp_sat and exact_sat.available() else None
    asking = cp_sat is not None and cfg.macros is None
    deepening = replace(budget, memory=cfg.max_memory)
    first = asking and timed and deepening_first
    if first:  # CP-SAT's share of the time past `DEEPENING_FIRST` kept for after the deepening
        left = start + seconds - time.perf_counter()
        deepening = replace(deepening, time=seconds - CP_SAT_SHARE * max(0.0, left - DEEPENING_FIRST))
    elif asking:
        bound = result.lower_bound = cp_sat.before(bound, timed, seconds)
    exact = ExactSearch(
        filt, cfg.instruction_set, names, lambda plan: allocated(plan, names), deepening, only=cfg.only
    )
    found = exact.run(start=bound, upper=result.program.macros if result.program is not None else None)
    result.nodes += found.nodes
    if found.program is not None:
        result.program, result.plan = found.program, found.plan
        result.events.append(
            PlanEvent(result.nodes, time.perf_counter() - start, found.program.macros, found.program.icws)
        )
    result.model_bound = found.bound
    result.stopped = found.stopped
    if first:
        bound = result.lower_bound = cp_sat.before(bound, timed, seconds)
    if first or (asking and found.stopped in (Stopped.OPTIMAL, Stopped.EXHAUSTED)):
        work = None if cfg.node_budget is None else max(0, cfg.node_budget - found.nodes) / 1000
        result.lower_bound = cp_sat.after(bound, budget.deadline, work)
    return result


DEEPENING_FIRST = 10.0
"""With `_prove`'s `deepening_first` on a time budget, the seconds of the exact search the goal model's
deepening has before CP-SAT takes `CP_SAT_SHARE` of the rest: on small filters the deepening's lengths take
seconds (its forward table 2 to 3 s on this machine), CP-SAT's answers near the optimum minutes."""

CP_SAT_SHARE = 1 / 2
"""Of the exact search's budget, the part CP-SAT (`cain.search.exact.sat`) may use for its first questions
(before the goal model's search, or on a time budget after it: of what it leaves); with a node budget of N,
that share of N / 1000 units of the solver's deterministic time. What is left after both, CP-SAT spends on
the lowest length not yet refuted."""


class _CpSat:
    """CP-SAT's questions, "is there a program of n macros?", within the exact search: a shorter program it
    finds (allocated; verified with the search's result) becomes `result`'s; its refutations hold for every
    program."""

    def __init__(self, filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float, result):
        self.filt, self.cfg, self.names, self.start, self.result = filt, cfg, names, start, result
        self.workers = 1 if cfg.node_budget is not None else max(2, cfg.workers)
        self.work = 0.0
        """The solver's deterministic time spent so far."""
        self.unknown: dict[int, float] = {}
        """Lengths left unknown, with the seconds or work they had: not asked again with less."""

    def ask(self, n: int, seconds: float, work: float | None) -> str:
        given = work if work is not None else seconds
        if seconds <= 0 or given <= 0 or self.unknown.get(n, 0.0) >= given:
            return "unknown"
        got = exact_sat.solve(
            self.filt, self.cfg.instruction_set, n, seconds, work, self.workers, self.cfg.seed
        )
        self.work += got.work
        if got.status == "unknown":
            self.unknown[n] = given
        if got.status != "found":
            return got.status
        program = allocated(got.plan, self.names)
        if program is None or program.macros != n:
            return "unknown"  # it needs more registers than the filter has
        self.result.program, self.result.plan = program, got.plan
        now = time.perf_counter() - self.start
        self.result.events.append(PlanEvent(self.result.nodes, now, n, program.icws))
        return "found"

    def before(self, bound: int, timed: bool, seconds: float) -> int:
        """Within `CP_SAT_SHARE` of the budget: lengths from the bound up, each with an eighth of the share
        (refutations well below the optimum are quick), then shorter programs than the plan's, one macro
        at a time, each with half of what is left; both short of the length one below the plan's, whose
        answer decides optimality and is left to `after`, which has more time. Returns the bound raised
        by refutations."""
        whole = (seconds - (time.perf_counter() - self.start)) * CP_SAT_SHARE if timed else float("inf")
        end = time.perf_counter() + whole
        work = self.cfg.node_budget / 1000 * CP_SAT_SHARE if self.cfg.node_budget is not None else None

        def attempt(n: int, eighth: bool) -> str:
            left = end - time.perf_counter()
            rest = None if work is None else work - self.work
            if eighth:
                return self.ask(n, min(left, whole / 8), None if rest is None else min(rest, work / 8))
            return self.ask(n, left / 2, None if rest is None else rest / 2)

        def best() -> int:
            return self.result.program.macros if self.result.program is not None else 1 << 30

        while bound < best() - 1 and attempt(bound, eighth=True) == "refuted":
            bound += 1
        while bound < best() - 1:
            status = attempt(best() - 1, eighth=False)
            if status == "refuted":
                return best()  # a program of fewer macros pads out to one of `best - 1`: none exists
            if status != "found":
                break
        return bound

    def after(self, bound: int, deadline: float | None, work: float | None) -> int:
        """Lengths from the bound up with everything the goal model's search left of the budget."""
        while self.result.program is None or bound < self.result.program.macros:
            left = deadline - time.perf_counter() if deadline is not None else float("inf")
            before = self.work
            if self.ask(bound, left, work) != "refuted":
                break
            work = None if work is None else work - (self.work - before)
            bound += 1
        return bound


def _constructive_program(
    filt: Filter, cfg: SearchConfig, names: tuple[str, ...], stop: Callable[[], bool] | None = None
) -> tuple[Program, Program] | None:
    """The shortest constructive program that allocates (`shortest_constructive`), else, with one register too
    few for it, the last kernel formed over an input (`over_input`); with its SSA form. `search` verifies
    the one it keeps."""
    done = lambda p: allocated(p, names)
    found = shortest_constructive(filt, cfg.instruction_set, names, done, stop=stop)
    if found is None and over_input.applies(filt, len(names)):
        found = shortest_fitting(
            over_input.programs(filt, cfg.instruction_set, len(names), stop), names, done
        )
    return found


def _offer_constructive(
    result: SearchResult, filt: Filter, cfg: SearchConfig, names: tuple[str, ...]
) -> None:
    """Make the constructive program `result`'s when the search has none or a longer one; with none at all,
    note how many registers the constructive one needs. Its time is `finish_seconds`, not the search's.
    Under a time budget, when the search has a plan, only the candidates built within a quarter of the budget
    are tried (a big filter has thousands); with no plan, every one, to find a program if any fits."""
    stop = None
    timed, seconds = _timing(cfg)
    if result.program is not None and timed:
        late = time.perf_counter() + FINISH_SHARE * seconds
        stop = lambda: time.perf_counter() >= late
    found = _constructive_program(filt, cfg, names, stop)
    if found is not None:
        program, plan = found

        def cost(p: Program, ssa: Program | None) -> tuple[float, int]:
            if cfg.cost == "icws" and cfg.score is not None and ssa is not None:
                icws = cfg.score(ssa)
                return (math.inf if icws is None else icws, p.macros)
            return (p.icws, p.macros) if cfg.cost == "icws" else (p.macros, p.icws)

        if result.program is None or cost(program, plan) < cost(result.program, result.plan):
            result.program, result.plan, result.constructive = program, plan, True
    elif result.program is None:
        for more in range(1, 9):
            wider = names + tuple(f"R{len(names) + i}" for i in range(more))
            check = lambda p, w=wider: allocated(p, w)
            if shortest_constructive(filt, cfg.instruction_set, wider, check) is not None:
                result.registers_needed = len(wider)
                break


def _search_one(
    filt: Filter,
    cfg: SearchConfig,
    names: tuple[str, ...],
    start: float,
    bound: int = 0,
    handoff: tuple[float, int] | None = None,
) -> SearchResult:
    worker = Worker(filt, cfg, names)
    worker.floor = bound
    worker.handoff = handoff
    bar = Progress(progress_enabled(cfg), bound)

    def progress(w: Worker, now: float) -> None:
        best = w.best
        last = w.events[-1] if w.events else None
        bus, bus2 = (last.bus_icws, last.bus2) if last else (0, 0)
        bar.line(best.macros if best else 0, best.icws if best else 0, w.nodes, now - w.start, bus, bus2)

    stopped = worker.run(progress if bar.enabled else None)
    bar.close()
    return SearchResult(
        program=worker.best,
        events=worker.events,
        nodes=worker.nodes,
        seconds=time.perf_counter() - start,
        peak_memory=peak_memory(),
        stopped=stopped,
        plan=worker.best_plan,
        kernel_by_kernel=worker.by_kernel,
    )
