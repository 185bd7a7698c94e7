"""Whole searches under node budgets whose programs are checked by the verifier: instruction sets,
traversals, costs, workers, determinism, options and their errors, and the rounds of a worker."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from search_cases import check, example, kernel_filter

from cain.backend.bus_synth import synthesize
from cain.diagnostics import CainError
from cain.search import SearchConfig, search
from cain.search.budget import Stopped
from cain.search.config import register_names
from cain.search.heuristic import worker
from cain.search.heuristic.worker import BUS_CANDIDATES, BUS_OPTIONS, to_score


@pytest.mark.parametrize("name", ["sobel", "gauss3x3"])
@pytest.mark.parametrize("iset", ["all", "basic"])
def test_search_finds_verified_programs(name, iset):
    f = example(name)
    r = search(f, SearchConfig(instruction_set=iset, node_budget=300, progress=False))
    check(r.program, f)
    assert r.plan is not None and not r.plan.registers
    # "optimal": the plan reached the lower bound before the budget; the probe's nodes (a tenth) on top
    assert r.stopped in ("nodes", "exhausted", "optimal") and 0 < r.nodes <= 300 + 30
    assert r.peak_memory > 0 and r.seconds > 0
    assert r.events and r.events[-1].macros == r.program.macros
    lengths = [e.macros for e in r.events]
    assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == len(lengths)


def test_gauss3x3_reaches_the_papers_length_within_a_small_budget():
    f = example("gauss3x3")
    r = search(f, SearchConfig(instruction_set="basic", node_budget=200, progress=False))
    check(r.program, f)
    assert r.program.macros <= 12


def test_search_is_deterministic_for_a_node_budget():
    f = example("sobel")
    cfg = SearchConfig(node_budget=150, seed=3, progress=False)
    a, b = search(f, cfg), search(f, cfg)
    assert a.program.instrs == b.program.instrs and a.program.registers == b.program.registers
    assert [(e.nodes, e.macros) for e in a.events] == [(e.nodes, e.macros) for e in b.events]


def test_parallel_search_is_deterministic_for_a_node_budget():
    f = example("sobel")
    cfg = SearchConfig(node_budget=120, seed=1, workers=2, progress=False)
    a, b = search(f, cfg), search(f, cfg)
    check(a.program, f)
    assert a.program.instrs == b.program.instrs
    # each worker's budget, and the probe's 12 nodes before them (`EXACT_PROBE`, a tenth of the budget)
    assert a.nodes == b.nodes == 2 * 120 + 12


def test_parallel_peak_memory_sums_the_workers():
    """Each worker process is resident at once: the peak counts every one of them, not the largest."""
    import resource

    f = example("sobel")
    r = search(f, SearchConfig(node_budget=60, workers=2, progress=False))
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    # each forked worker is at least a few MB resident, so the sum exceeds the parent's own peak
    assert r.peak_memory > parent + 2 * 2**20


@pytest.mark.parametrize("traversal", ["cgds", "best-first", "discrepancy"])
def test_a_bounded_frontier_still_finds_verified_plans(traversal):
    """Past `frontier_limit` held children, nodes put back keep only their next few: plans stay correct."""
    f = example("gauss3x3")
    small = SearchConfig(node_budget=400, frontier_limit=20, frontier_keep=2, traversal=traversal, progress=False)
    r = search(f, small)
    check(r.program, f)
    assert r.nodes == 400 or r.stopped == "exhausted"


@pytest.mark.parametrize(
    "traversal, matrix",
    [
        ("dfs", "[0 1 0; 1 1 1; 0 1 0]"),
        ("best-first", "[0 1 0; 1 1 1; 0 1 0]"),
        ("discrepancy", "[0 1 0; 1 1 1; 0 1 0]"),
        ("bfs", "[1 1 0]"),
    ],
)
def test_other_traversals_find_plans(traversal, matrix):
    f = kernel_filter(matrix, "plus")
    r = search(f, SearchConfig(node_budget=400, traversal=traversal, progress=False))
    check(r.program, f)


def test_the_discrepancy_order_serves_the_fewest_ranks_first(monkeypatch):
    """`discrepancy` expands nodes in the order of the sum of their path's ranks (a child's rank among its
    parent's candidates): never a node with more ranks before one with fewer, and not the order CGDS takes."""
    from cain.search.heuristic import worker

    served = {}
    pop = worker.Worker._pop

    def recording(self, t):
        node = pop(self, t)  # a child (idx 0), or a node back for its next child (idx: that child's rank)
        served.setdefault((self.cfg.traversal, id(self)), []).append((node.ranks + node.idx, node.cost))
        return node

    monkeypatch.setattr(worker.Worker, "_pop", recording)
    f = example("gauss3x3")
    for traversal in ("discrepancy", "cgds"):
        r = search(f, SearchConfig(node_budget=300, traversal=traversal, exact_reach=0, progress=False))
        check(r.program, f)
    orders = {traversal: order for (traversal, _), order in served.items()}  # the search's own worker last
    ranks = [k for k, _ in orders["discrepancy"]]
    assert ranks == sorted(ranks) and ranks[-1] > 0
    assert orders["discrepancy"] != orders["cgds"]


def test_icws_cost_scores_plans_at_bus_level():
    f = kernel_filter("1/2 [1 0 1]", "halves")
    r = search(f, SearchConfig(node_budget=300, cost="icws", progress=False))
    check(r.program, f)
    # the plans are found by macros, then the shortest are synthesised at bus level and the best kept
    assert all(e.bus_icws == 0 for e in r.events[:-1])
    assert len(synthesize(r.program, f, BUS_OPTIONS).ops) == r.events[-1].bus_icws < r.program.icws


def test_the_constructive_program_is_compared_with_a_plan_only_when_asked():
    """`compare_constructive=False` (`search{constructive=false}`): after a search that has a plan, the
    constructive program is not built, where a score that prefers it would keep it; after a search that has
    none, it is built all the same."""
    f = example("sobel")
    cfg = SearchConfig(node_budget=300, cost="icws", progress=False, exact_reach=0, score=lambda p: -p.macros)
    kept = search(f, cfg)
    assert kept.constructive
    plain = search(f, replace(cfg, compare_constructive=False))
    check(plain.program, f)
    assert not plain.constructive and plain.program.macros < kept.program.macros
    alone = search(f, replace(cfg, node_budget=1, kernel_by_kernel=0.0, compare_constructive=False))
    assert alone.constructive
    check(alone.program, f)


def test_a_score_ranks_the_plans_under_cost_icws():
    """`SearchConfig.score` replaces bus-level synthesis (the digital plane's lowering): it decides among the
    plans found, and a plan it cannot score (None) is never the result and bounds nothing."""
    f = example("sobel")
    scored: list[int] = []

    def longest(plan):
        scored.append(plan.macros)
        return -plan.macros

    cfg = SearchConfig(node_budget=300, cost="icws", progress=False, exact_reach=0, fallback=False)
    r = search(f, replace(cfg, score=longest))
    check(r.program, f)
    assert len(set(scored)) > 1 and r.plan.macros == max(scored) == -r.events[-1].bus_icws
    # the constructive program is compared by the score too (here: kept for being longer)
    with_fallback = search(f, replace(cfg, score=longest, fallback=True))
    assert with_fallback.constructive and with_fallback.plan.macros > r.plan.macros
    # every plan under 12 macros rejected (sobel's shortest here is 9): the search goes on past them to longer
    # plans (before, the first rejected plan bounded it, and a 9-macro plan was the result)
    at_least = search(f, replace(cfg, score=lambda plan: None if plan.macros < 12 else plan.macros))
    check(at_least.program, f)
    assert at_least.plan.macros >= 12 and at_least.events[-1].bus_icws == at_least.plan.macros
    assert search(f, replace(cfg, score=lambda plan: None)).program is None


def test_random_order_is_deterministic_for_a_seed():
    f = kernel_filter("[1 1 0]")
    cfg = SearchConfig(node_budget=100, heuristic="random", seed=5, progress=False)
    a, b = search(f, cfg), search(f, cfg)
    assert (a.program is None) == (b.program is None)
    if a.program is not None:
        check(a.program, f)
        assert a.program.instrs == b.program.instrs


def test_doubling_takes_two_instructions():
    """2x the input: no macro adds a register to itself, so a copy (or a negation) comes first."""
    f = kernel_filter("[0 2 0]")
    r = search(f, SearchConfig(node_budget=50, progress=False))
    check(r.program, f)
    assert r.program.macros == 2
    assert sorted(i.macro for i in r.program.instrs) in (["add", "mov"], ["neg", "sub"])


def test_a_subset_of_macros_is_honoured():
    f = example("sobel")
    r = search(f, SearchConfig(macros=("add", "sub", "movx", "mov", "neg"), node_budget=300, progress=False))
    check(r.program, f)
    assert {i.macro for i in r.program.instrs} <= {"add", "sub", "movx", "mov", "neg"}


def test_progress_never_writes_to_stdout(capsys):
    f = kernel_filter("[1 1 0]")
    search(f, SearchConfig(node_budget=20, progress=True))
    out, err = capsys.readouterr()
    assert out == "" and "search: best" in err


@pytest.mark.parametrize(
    "cfg, message",
    [
        (SearchConfig(traversal="sideways"), "unknown traversal"),
        (SearchConfig(cost="joules"), "unknown cost"),
        (SearchConfig(instruction_set="fancy"), "unknown instruction set"),
        (SearchConfig(workers=0), "workers"),
        (SearchConfig(node_budget=0), "node budget"),
        (SearchConfig(registers=("A", "C")), "register(s) B"),
    ],
)
def test_configuration_errors_are_clear(cfg, message):
    with pytest.raises(CainError, match=message.replace("(", r"\(").replace(")", r"\)")):
        search(kernel_filter("[1 1 0]"), cfg)


def test_a_smaller_register_file_is_honoured():
    f = example("sobel")
    r = search(f, SearchConfig(registers=4, node_budget=300, progress=False))
    check(r.program, f)
    assert set(r.program.registers.values()) <= {"A", "B", "C", "D"}


def test_cost_icws_scores_one_plan_of_each_length_then_the_shortest():
    """Earlier, longer plans are scored at bus level too (AnalogNet2's 29-macro plan lowers to fewer ICWs
    than its 21-macro ones), before more of the shortest; ties beyond `BUS_CANDIDATES` are not."""

    class Plan:
        def __init__(self, macros: int, tag: str):
            self.macros, self.tag = macros, tag

    lengths = [29, 25, *[21] * (BUS_CANDIDATES + 2), 22, 25]
    candidates = [(Plan(m, f"{m}-{i}"), None) for i, m in enumerate(lengths)]
    chosen = [done.tag for done, _ in to_score(candidates)]
    assert chosen == ["21-2", "22-12", "25-1", "29-0"] + [f"21-{i}" for i in range(3, 2 + BUS_CANDIDATES)]


@pytest.mark.parametrize("name", ["laplacian", pytest.param("analognet2", marks=pytest.mark.slow)])
def test_rounds_from_the_best_plans_path_rebuild_its_prefix_and_hand_over(name):
    """`restart_from_plan`: a round starts on the best plan's path with the plan's prefix (so a plan found
    from there is whole), and a round that exhausts its part of the space does not end the search."""
    f = example(name)
    cfg = SearchConfig(node_budget=1500, restart=40, restart_from_plan=True, progress=False)
    w = worker.Worker(f, cfg, f.registers)
    starts = []
    traverse = w._round

    def spy(progress, round_end, root=None):
        if root is not None:
            chain, n = [], root
            while n is not None:
                chain.append((n.bag, n.cost, n.pair))
                n = n.parent
            assert 1 < len(chain) < len(w.best_path) and chain[::-1] == w.best_path[: len(chain)]
            starts.append(root)
        return traverse(progress, round_end, root)

    w._round = spy
    stopped = w.run()
    assert starts
    assert stopped == "optimal" or (stopped == "nodes" and w.nodes >= 1500)
    check(w.best, f)


@pytest.mark.slow
def test_one_worker_hands_over_when_its_plan_is_within_reach_at_the_time():
    """`Worker.handoff`: at its time the worker stops (`handoff`) if its plan is that short, and goes on
    otherwise (the engine then gives the rest of the budget to the exact search, or not)."""
    f = example("gauss3x3")
    cfg = SearchConfig(time_budget=1.5, progress=False)
    for reach, hands_over in ((100, True), (1, False)):
        w = worker.Worker(f, cfg, register_names(f, cfg))
        start = time.perf_counter()
        w.handoff = (start + 0.3, reach)
        stopped = w.run()
        check(w.best, f)
        assert (stopped == Stopped.HANDOFF) == hands_over
        assert (time.perf_counter() - start < 1.0) == hands_over
