"""The search engine (`cain.search.engine`, with `cain.search.budget` and `cain.search.portfolio`): a node
budget stops it exactly, it says why it stopped in the words users read, a node budget and a seed make it
deterministic, and the program it returns computes the filter."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from search_cases import CNN6

from cain.backend.verify import verify_for_filter
from cain.frontend.kernel import parse_filter
from cain.search import SearchConfig, budget, search
from cain.search.allocate import allocated
from cain.search.budget import COLLECT_GROWTH, Budget, OutOfBudget, Stopped, long_lived_tables, settle
from cain.search.exact.deepening import ExactSearch

EXAMPLES = Path(__file__).parent.parent.parent / "examples"

ALONE = {
    "structure_nodes": 0,
    "kernel_by_kernel": 0.0,
    "exact_reach": 0,
    "fallback": False,
    "progress": False,
}
"""The heuristic traversal alone: no factoring, no kernel-by-kernel plan, no exact search, no constructive
program."""


def example(name: str):
    return parse_filter((EXAMPLES / f"{name}.cain").read_text(), f"{name}.cain")


def test_a_node_budget_stops_the_traversal_at_that_many_nodes():
    result = search(example("sobel"), SearchConfig(node_budget=150, **ALONE))
    assert result.stopped is Stopped.NODES
    assert result.nodes == 150


@pytest.mark.parametrize("workers", [1, 2])
def test_a_node_budget_and_a_seed_give_the_same_program(workers):
    cfg = SearchConfig(node_budget=200, seed=7, workers=workers, **ALONE)
    first, second = search(example("sobel"), cfg), search(example("sobel"), cfg)
    assert first.program is not None
    assert first.program.instrs == second.program.instrs
    if workers == 1:  # several workers' improvements interleave by time
        assert [(e.nodes, e.macros) for e in first.events] == [(e.nodes, e.macros) for e in second.events]
    assert first.nodes == second.nodes == 200 * workers


def test_the_program_returned_computes_the_filter():
    filt = example("sobel")
    result = search(filt, SearchConfig(node_budget=300, progress=False))
    assert result.program is not None and result.plan is not None
    report = verify_for_filter(result.program, filt)
    assert report.macros == result.program.macros
    assert not report.problems


def test_a_filter_no_program_of_the_model_fits_is_not_searched():
    cfg = SearchConfig(node_budget=50, progress=False, fallback=False)
    result = search(parse_filter(CNN6, "cnn6.cain"), cfg)
    assert result.stopped is Stopped.IMPOSSIBLE and result.nodes == 0 and result.program is None


def test_why_a_search_stopped_reads_as_the_word_users_know():
    assert {str(s) for s in Stopped} == {
        "time", "nodes", "memory", "optimal", "exhausted", "upper", "impossible", "handoff", "round", "error"
    }  # fmt: skip
    assert f"within the budget ({Stopped.TIME})" == "within the budget (time)"
    assert Stopped.NODES == "nodes"


def test_the_budget_counts_nodes_time_and_the_grace_after_the_deadline():
    assert not Budget().out_of_nodes(10**9) and not Budget().late(10**9) and not Budget().over_memory()
    nodes = Budget(nodes=5)
    assert not nodes.out_of_nodes(4) and nodes.out_of_nodes(5)
    with pytest.raises(OutOfBudget) as stop:
        nodes.check(5)
    assert stop.value.reason is Stopped.NODES
    timed = Budget(time=100.0, grace=0.1, start=0.0)
    assert timed.deadline == 100.0 and not timed.late(99.9) and timed.late(100.0)
    assert not timed.past_grace(109.9) and timed.past_grace(110.0)
    short = Budget(time=1.0, grace=0.1, start=0.0)
    assert not short.past_grace(1.9) and short.past_grace(2.0)  # a second at least
    assert Budget(memory=1).over_memory()


def test_a_time_budget_stops_the_search():
    big = parse_filter(
        "filter big\ninput A\noutput o -> B = [3 5 7 5 3; 5 9 13 9 5; 7 13 19 13 7; 5 9 13 9 5; 3 5 7 5 3]\n"
        "output p -> C = [1 -2 3 -2 1; 2 7 -5 7 2; 3 -5 11 -5 3; 2 7 -5 7 2; 1 -2 3 -2 1]\n",
        "big.cain",
    )
    result = search(big, SearchConfig(time_budget=0.5, **ALONE))
    assert result.stopped in (Stopped.TIME, Stopped.OPTIMAL)
    assert result.seconds < 0.5 + 1.0 + 3.0  # the grace (a second at least), and a loaded machine


def test_the_exact_search_counts_the_node_past_its_budget_and_stops():
    filt = example("sobel")
    names = filt.registers
    exact = ExactSearch(filt, "all", names, lambda p: allocated(p, names), Budget(nodes=20), max_horizon=0)
    found = exact.run()
    assert found.stopped is Stopped.NODES and found.nodes == 21 and found.program is None
    assert found.bound >= 1


def test_long_lived_tables_hands_everything_back():
    """Inside a search's context the collector runs rarely and `settle` freezes what is alive; afterwards
    nothing stays frozen and the thresholds are the caller's again (nested contexts restore once)."""
    before = gc.get_threshold()
    settle()
    assert gc.get_freeze_count() == 0  # outside a search, nothing is frozen
    with long_lived_tables():
        assert gc.get_threshold()[0] > before[0]
        with long_lived_tables():
            settle()
            assert gc.get_freeze_count() > 0
        assert gc.get_freeze_count() > 0  # the inner context leaves the outer one's state alone
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_searchs_cycles_are_collected_when_it_ends(monkeypatch):
    """A cycle the search froze and dropped is freed as the search's context closes, not at some later full
    collection (a campaign's process grew by gigabytes so, until its searches hit the memory limit)."""

    class Node:
        pass

    monkeypatch.setattr(budget, "_COLLECTED", [budget.resident_memory()])
    with long_lived_tables():
        cycle = Node()
        cycle.self = cycle
        cycle.table = bytearray(2 * COLLECT_GROWTH)  # as big as a search's tables: collected at the end
        alive = weakref.ref(cycle)
        settle()
        del cycle
        assert alive() is not None  # frozen: only a collection after the context frees it
    assert alive() is None
