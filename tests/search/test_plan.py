"""The direct solver: the last steps of a plan, a division chain and moves from the input, or none; and
negations folded into their reader."""

from __future__ import annotations

from search_cases import check, goal, kernel_filter

from cain.frontend.kernel import parse_filter
from cain.model.isa import MACROS, instruction_set
from cain.model.program import Instr, Program
from cain.search import SearchConfig, search
from cain.search.allocate import allocated
from cain.search.goals import atoms
from cain.search.goals.plan import direct_solution, fold_negations
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
    f = parse_filter(
        "filter twice\ninput A\noutput p -> B = [0 0 1]\noutput q -> C = [0 0 1]\n", "twice.cain"
    )
    r = search(f, SearchConfig(node_budget=50, progress=False, kernel_by_kernel=0.0))
    check(r.program, f)
    assert sorted(i.macro for i in r.program.instrs) == ["mov", "movx"]


def test_direct_solver_refuses_a_goal_two_steps_away():
    f = kernel_filter("[1 1 0]")
    space = Space("all", depth=0, registers=6, inputs=[atoms.from_goal(g) for g in f.initial_goals()])
    assert direct_solution(space, space.bag([atoms.from_goal(goal([1, 1, 0]))])) is None


def test_a_negation_read_once_is_folded_into_its_reader():
    """A plan that negates an input to add it (`neg(t, r); add(u, t, b)`) is one `sub` shorter, and computes
    the same: the two luma/chroma kernels in 8 macros, from a 9-macro plan the search printed (its second
    kernel `(b - r) / 2 - g + k0`); a `sub` of a negation becomes an `add`, and a negation read twice or
    output stays."""
    f = parse_filter(
        "filter lc\ninput r -> A, g -> B, b -> C\noutput k0 -> D = 1/4 { r: [1], g: [2], b: [1] }\n"
        "output k1 -> E = 1/4 { r: [-1], g: [-2], b: [3] }\n",
        "lc",
    )
    steps = [
        ("add", (0, 2)),
        ("div", (3,)),
        ("add", (4, 1)),
        ("div", (5,)),
        ("neg", (0,)),
        ("add", (7, 2)),
        ("div", (8,)),
        ("sub", (9, 1)),
        ("add", (10, 6)),
    ]
    instrs = [Instr(m, (3 + i,), ops) for i, (m, ops) in enumerate(steps)]
    plan = Program("lc", [(0, "A"), (1, "B"), (2, "C")], instrs, [(6, "D"), (11, "E")])
    folded = fold_negations(plan, instruction_set("all"))
    assert [i.macro for i in folded.instrs].count("neg") == 0 and folded.macros == 8
    check(allocated(folded, ("A", "B", "C", "D", "E", "F")), f)
    # the subtrahend: b - (-r) is b + r
    sub = Program(
        "s", [(0, "A"), (1, "B")], [Instr("neg", (2,), (0,)), Instr("sub", (3,), (1, 2))], [(3, "B")]
    )
    assert [(i.macro, i.operands) for i in fold_negations(sub, instruction_set("all")).instrs] == [
        ("add", (1, 0))
    ]
    # read twice, or an output: kept
    twice = Program(
        "t",
        [(0, "A"), (1, "B")],
        [Instr("neg", (2,), (0,)), Instr("add", (3,), (2, 1))],
        [(3, "B"), (2, "C")],
    )
    assert fold_negations(twice, instruction_set("all")) is twice
