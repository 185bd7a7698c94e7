"""A portfolio of diversified search workers, one process each: started, watched with the progress line,
and their reports merged into one result."""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass, field

from cain.model.filter import Filter
from cain.model.program import Program
from cain.search.budget import Stopped, peak_memory
from cain.search.config import PlanEvent, SearchConfig, SearchResult
from cain.search.heuristic.worker import Worker
from cain.search.progress import Progress, progress_enabled


@dataclass
class WorkerReport:
    """What one worker process sends back: its best program (allocated, and as SSA) and how it went."""

    program: Program | None = None
    plan: Program | None = None
    by_kernel: bool = False
    """The plan was found kernel by kernel."""
    events: list[PlanEvent] = field(default_factory=list)
    nodes: int = 0
    stopped: Stopped = Stopped.ERROR
    peak_memory: int = 0
    error: str | None = None
    """Why the worker failed (None: it did not)."""


def search_parallel(
    filt: Filter, cfg: SearchConfig, names: tuple[str, ...], start: float, bound: int = 0
) -> SearchResult:
    """A portfolio of diversified workers, one process each. With a time budget (and no node budget)
    they share the best plan length, so each prunes by the best any has found; with a node budget
    they run independently, which keeps the result deterministic."""
    ctx = multiprocessing.get_context("fork")
    shared = {
        "best": ctx.Value("q", 1 << 30),
        "macros": ctx.Value("q", 0),
        "icws": ctx.Value("q", 0),
        "bus": ctx.Value("q", 0),
        "bus2": ctx.Value("q", 0),
        "nodes": ctx.Array("q", cfg.workers, lock=False),
        "share": cfg.node_budget is None,
        "floor": bound,
    }
    procs, conns = [], []
    for i in range(cfg.workers):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_worker_main, args=(filt, cfg, names, i, shared, child), daemon=True)
        p.start()
        child.close()
        procs.append(p)
        conns.append(parent)
    reports = _collect(procs, conns, shared, Progress(progress_enabled(cfg), bound), start)
    for p in procs:
        p.join()
    errors = [r.error for r in reports if r.error is not None]
    if errors:
        raise RuntimeError(f"search worker failed: {errors[0]}")
    return _merged(reports, cfg, start)


def _worker_main(filt, cfg, names, index, shared, conn) -> None:
    """One worker process: search, then send its `WorkerReport` to the parent."""
    try:
        worker = Worker(filt, cfg, names, index, shared)
        worker.floor = shared["floor"]
        counts = shared["nodes"]

        def progress(w: Worker, now: float) -> None:
            counts[index] = w.nodes

        stopped = worker.run(progress)
        counts[index] = worker.nodes
        report = WorkerReport(
            worker.best,
            worker.best_plan,
            worker.by_kernel,
            worker.events,
            worker.nodes,
            stopped,
            peak_memory(),
        )
        conn.send(report)
    except Exception as e:  # noqa: BLE001 (reported to the parent rather than lost with the process)
        conn.send(WorkerReport(error=repr(e)))
    finally:
        conn.close()


def _collect(procs, conns, shared, bar: Progress, start: float) -> list[WorkerReport]:
    """Every worker's report, as each arrives (a worker that dies reports an error), with the progress
    line drawn from the shared counters meanwhile."""
    reports: list[WorkerReport | None] = [None] * len(procs)
    pending = set(range(len(procs)))
    while pending:
        for i in list(pending):
            if conns[i].poll(0.05):
                try:
                    reports[i] = conns[i].recv()
                except EOFError:
                    reports[i] = WorkerReport(error="worker exited")
                pending.discard(i)
            elif not procs[i].is_alive() and not conns[i].poll(0):
                reports[i] = WorkerReport(error=f"worker exited with status {procs[i].exitcode}")
                pending.discard(i)
        if bar.enabled:
            m = shared["macros"].value
            elapsed = time.perf_counter() - start
            bus, bus2 = shared["bus"].value, shared["bus2"].value
            bar.line(m, shared["icws"].value, sum(shared["nodes"]), elapsed, bus, bus2)
    bar.close()
    return reports


def _score(event: PlanEvent, cfg: SearchConfig) -> tuple[int, int]:
    """What makes a plan better: fewer macros, or under `cost=icws` fewer ICWs at bus level once scored."""
    if cfg.cost == "icws":
        return (event.bus_icws or 1 << 30, event.macros)
    return (event.macros, 0)


def _merged(reports: list[WorkerReport], cfg: SearchConfig, start: float) -> SearchResult:
    """The workers' reports as one result: the best program (ties to the lowest worker), every improvement
    in time order, the nodes and memory of all, and why the portfolio stopped."""
    best: WorkerReport | None = None
    best_key = None
    for i, r in enumerate(reports):
        if r.program is not None:
            bus = r.events[-1].bus_icws if r.events else 0
            key = (bus if cfg.cost == "icws" else r.program.macros, r.program.macros, r.program.icws, i)
            if best_key is None or key < best_key:
                best, best_key = r, key
    events = sorted(((e.seconds, i, e) for i, r in enumerate(reports) for e in r.events), key=lambda t: t[:2])
    merged: list[PlanEvent] = []
    total_nodes = 0
    for _, _, e in events:
        if not merged or _score(e, cfg) < _score(merged[-1], cfg):
            # nodes explored by all workers by then, estimated from the finding worker's own count
            total_nodes = max(total_nodes, e.nodes * cfg.workers)
            merged.append(PlanEvent(total_nodes, e.seconds, e.macros, e.icws, e.bus_icws, e.bus2))
    stops = [r.stopped for r in reports]
    return SearchResult(
        program=best.program if best else None,
        events=merged,
        nodes=sum(r.nodes for r in reports),
        seconds=time.perf_counter() - start,
        # the search's memory: every worker's own peak plus the parent's (all alive at once)
        peak_memory=peak_memory() + sum(r.peak_memory for r in reports),
        stopped=next(
            (s for s in (Stopped.OPTIMAL, Stopped.TIME, Stopped.NODES) if s in stops), Stopped.EXHAUSTED
        ),
        plan=best.plan if best else None,
        kernel_by_kernel=best.by_kernel if best else False,
    )
