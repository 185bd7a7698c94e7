"""The digital mode's planner: its budgets (nodes, deterministic; or time, shared by its two searches), and
the choice of the program by ICWs once the plans are lowered."""

from __future__ import annotations

from cain.frontend.kernel import parse_filter
from cain.search import digital
from cain.search.config import DEFAULT_TIME

NEIGHBOURS = """
filter neighbours
option mode = digital
output N -> A = [1 1 1; 1 0 1; 1 1 1]
"""


def test_node_budgets_are_split_and_carry_no_time():
    plans, whole = digital.configs(600, None, 3, fixed=False)
    assert (plans.node_budget, whole.node_budget) == (600, 200)
    assert plans.time_budget is whole.time_budget is None
    assert "div4" in plans.macros and whole.macros is None
    assert {plans.cost, whole.cost} == {"icws"} and plans.seed == whole.seed == 3
    fixed, _ = digital.configs(600, None, 0, fixed=True)
    assert "div4" not in fixed.macros


def test_a_time_budget_is_shared_by_the_searches_with_time_left_to_lower_and_verify():
    plans, whole = digital.configs(None, DEFAULT_TIME, 0, fixed=False)
    assert plans.node_budget is whole.node_budget is None
    assert plans.time_budget == DEFAULT_TIME * digital.PLAN_SHARE
    assert whole.time_budget == DEFAULT_TIME * digital.SEARCH_SHARE < DEFAULT_TIME


def test_the_program_is_the_fewest_icws_of_every_plan_lowered_and_deterministic(monkeypatch):
    filt = parse_filter(NEIGHBOURS, "neighbours.cain")
    assert filt.encoding is not None
    seen: list[digital.Lowered] = []

    class Recording(digital.Lowered):
        def __init__(self, *args):
            super().__init__(*args)
            seen.append(self)

    monkeypatch.setattr(digital, "Lowered", Recording)
    program = digital.compile_digital(filt, filt.encoding, budget=200)
    lowered = [p for p in seen[0].programs.values() if p is not None]
    assert len(seen[0].programs) > 2 and program.icws == min(p.icws for p in lowered)
    again = digital.compile_digital(filt, filt.encoding, budget=200)
    assert again.words == program.words
