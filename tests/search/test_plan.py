"""The direct solver: the last steps of a plan, a division chain and moves from the input, or none."""

from __future__ import annotations

from search_cases import check, goal, kernel_filter

from cain.frontend.kernel import parse_filter
from cain.model.isa import MACROS
from cain.search import SearchConfig, search
from cain.search.goals import atoms
from cain.search.goals.plan import direct_solution
from cain.search.goals.space import Space


def test_direct_solver_builds_a_division_chain_and_moves():
    f = kernel_filter("1/4 [0 1 0; 2 0 0; 0 0 0]")
    space = Space("all", depth=2, registers=6, inputs=[atoms.from_goal(g) for g in f.initial_goals()])
    quarter_north = atoms.from_goal(goal([0, 1, 0], [0, 0, 0], [0, 0, 0]))
    half_west = atoms.from_goal(goal([0, 0, 0], [2, 0, 0], [0, 0, 0]))
    bag = space.bag([quarter_north, half_west])
    steps = direct_solution(space, bag)
    assert steps is not None
    assert [s[0] for s in steps].count("div") == 2
    # each step computes its upper from its lowers, and undoing them all leaves the input alone
    current = list(bag)
    for macro, dirs, upper, lowers in steps:
        operands = tuple(atoms.to_goal(space.goal_of[lo]) for lo in lowers)
        assert MACROS[macro].apply(operands, dirs) == atoms.to_goal(space.goal_of[upper])
        current.remove(upper)
        current.extend(lo for lo in lowers if lo not in current)
    assert current == list(space.inputs)


def test_one_kernel_in_two_registers_is_copied_after_it_is_made():
    f = parse_filter("filter twice\ninput A\noutput p -> B = [0 0 1]\noutput q -> C = [0 0 1]\n", "twice.cain")
    r = search(f, SearchConfig(node_budget=50, progress=False, kernel_by_kernel=0.0))
    check(r.program, f)
    assert sorted(i.macro for i in r.program.instrs) == ["mov", "movx"]


def test_direct_solver_refuses_a_goal_two_steps_away():
    f = kernel_filter("[1 1 0]")
    space = Space("all", depth=0, registers=6, inputs=[atoms.from_goal(g) for g in f.initial_goals()])
    assert direct_solution(space, space.bag([atoms.from_goal(goal([1, 1, 0]))])) is None
