"""The search engine: pair generation and heuristic on the paper's AnalogNet2 example (equation 9),
the direct solver, and whole searches under node budgets whose programs are checked by the verifier."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cain.backend.bus_synth import synthesize
from cain.backend.verify import verify_program
from cain.diagnostics import CainError
from cain.frontend.kernel import parse_filter
from cain.model.goal import Goal
from cain.model.isa import MACROS
from cain.search import SearchConfig, search
from cain.search.allocate import allocated, allocated_and_verified
from cain.search.constructive.program import constructive, constructive_plan, shortest_constructive
from cain.search.goals import atoms
from cain.search.goals.plan import direct_solution
from cain.search.goals.space import Space
from cain.search.heuristic import worker
from cain.search.heuristic.kernel_by_kernel import kernel_by_kernel, kernel_order
from cain.search.heuristic.worker import BUS_CANDIDATES, BUS_OPTIONS, to_score

EXAMPLES = Path(__file__).parent.parent / "examples"


def example(name: str):
    return parse_filter((EXAMPLES / f"{name}.cain").read_text(), f"{name}.cain")


def kernel_filter(matrix: str, name: str = "t"):
    return parse_filter(f"filter {name}\ninput A\noutput o -> B = {matrix}\n", f"{name}.cain")


def goal(*rows) -> Goal:
    return Goal.from_matrices([rows])


# -- the paper's AnalogNet2 example -------------------------------------------------------------

K1 = goal([0, 0, 0], [-3, 1, 0], [-3, 0, 2])
K2 = goal([-4, -1, 1], [-1, 2, 0], [1, 1, 0])
K3 = goal([-1, 2, 0], [-1, 1, -3], [0, -3, 0])
L1 = goal([-1, 2, 0], [-1, 1, 0], [0, 0, 0])
L2 = goal([0, 0, 0], [0, 0, -3], [0, 0, 0])
L3 = goal([0, 0, 0], [0, 0, 0], [0, -3, 0])


def analognet2_space() -> Space:
    return Space("all", depth=2, registers=6, inputs=[atoms.from_goal(Goal.identity(4))])


def formula(goals: list[Goal], depth: int) -> float:
    """The heuristic as documented, computed independently on `cain.model.goal.Goal`s."""

    def inside(small: Goal, big: Goal) -> bool:
        b = big.as_dict()
        return small.total < big.total and all(
            (c > 0 and b.get(a, 0) >= c) or (c < 0 and b.get(a, 0) <= c) for a, c in small
        )

    h = 0.0
    patterns = set()
    for i, g in enumerate(goals):
        dist = sum(abs(c) * (abs(x) + abs(y) + z + (c < 0)) for (x, y, z), c in g)
        relief = any(j != i and other != g and inside(g, other) for j, other in enumerate(goals))
        h += g.total + dist * (0.5 if relief else 1)
        if len(g) >= 2:
            (x0, y0, _), _ = g.items[0]
            key = g.shifted((-x0, -y0))
            if key not in patterns:
                patterns.add(key)
                h += g.total**2
    h += 2**depth / min(abs(c) for g in goals for _, c in g)
    return h


def test_equation_9_pair_is_generated_with_its_child_bag():
    space = analognet2_space()
    bag = space.bag(atoms.from_goal(k) for k in (K1, K2, K3))
    k3 = space.intern(atoms.from_goal(K3))
    lowers = {space.intern(atoms.from_goal(g)) for g in (L1, L2, L3)}
    found = [
        (h, pair, child)
        for h, pair, child in space.pairs(bag)
        if pair[0] == "add3" and pair[2] == k3 and set(pair[3]) == lowers
    ]
    assert found, "the paper's first step (equation 9) is not among the generated pairs"
    h, _, child = found[0]
    assert len(child) == 5
    assert sorted(space.goal_of[g] for g in child) == sorted(atoms.from_goal(g) for g in (K1, K2, L1, L2, L3))
    assert h == space.cost(child)


def test_heuristic_follows_its_formula_on_equation_9():
    space = analognet2_space()
    child_goals = [K1, K2, L1, L2, L3]
    child = space.bag(atoms.from_goal(g) for g in child_goals)
    assert space.cost(child) == pytest.approx(formula(child_goals, 2))
    # L2 and L3 are one pattern (a single position: no repetition term); L1 is new
    root = [K1, K2, K3]
    assert space.cost(space.bag(atoms.from_goal(g) for g in root)) == pytest.approx(formula(root, 2))


def test_heuristic_prefers_a_repeated_pattern():
    """Splitting a goal into two translated copies of one half beats an uneven split."""
    space = Space("all", depth=2, registers=6, inputs=[atoms.from_goal(Goal.identity(4))])
    even = space.bag(atoms.from_goal(g) for g in (goal([1, 1, 0]), goal([0, 1, 1])))
    uneven = space.bag(atoms.from_goal(g) for g in (goal([1, 0, 0]), goal([0, 2, 1])))
    assert space.cost(even) < space.cost(uneven)


def test_pairs_that_eliminate_a_goal_come_first():
    """A goal one instruction away from goals already in the bag (here a moved copy of another goal) is
    removed before any pair that splits a goal, although the heuristic alone prefers splitting the big
    Gaussian (hundreds of pairs would come first)."""
    space = Space("all", depth=6, registers=6, inputs=[atoms.from_goal(Goal.identity(64))])
    gauss = goal([4, 8, 4], [8, 16, 8], [4, 8, 4])
    w = goal([0, 1, 2, 1], [1, 3, 3, 1], [2, 3, 1, 0], [1, 1, 0, 0])
    bag = space.bag(atoms.from_goal(x) for x in (gauss, w, w.shifted((1, 1))))
    pairs = space.pairs(bag)
    eliminating = [i for i, (_, _, child) in enumerate(pairs) if len(child) < len(bag)]
    assert eliminating == [0, 1]  # either copy of w made from the other by one mov2x
    assert {pairs[i][1][0] for i in eliminating} == {"mov2x"}
    assert min(space.cost(child) for _, _, child in pairs) < space.cost(pairs[0][2])


def test_pairs_that_split_a_goal_into_copies_of_another_come_next():
    """The 5x5 Gaussian's inner part W is two moved quarters of the 3x3 Gaussian G: splitting W into them
    (each made from G by two divisions and a move) is tried before any split into new goals, and the
    quarter is then taken nearer G (a division or a move towards it) before anything else."""
    space = Space("all", depth=6, registers=6, inputs=[atoms.from_goal(Goal.identity(64))])
    g = goal([4, 8, 4], [8, 16, 8], [4, 8, 4])
    quarter = goal([1, 2, 1], [2, 4, 2], [1, 2, 1])
    w = quarter.shifted((0, 1)) + quarter.shifted((1, 0))
    bag = space.bag(atoms.from_goal(x) for x in (g, w))
    top = space.pairs(bag)[0]
    assert top[1][2] == space.intern(atoms.from_goal(w))
    lowers = [atoms.to_goal(space.goal_of[lo]) for lo in top[1][3]]
    assert all(lo.total == 16 and any(lo == quarter.shifted((x, y)) for x in range(-3, 4) for y in range(-3, 4))
               for lo in lowers)
    copy = next(lo for lo in top[1][3] if lo not in bag)
    step = space.pairs(space.bag([atoms.from_goal(g), space.goal_of[copy]]))[0]
    assert step[1][2] == copy and step[1][0] in ("div", "movx", "mov2x")


def test_pairs_respect_the_register_count():
    space = Space("all", depth=2, registers=3, inputs=[atoms.from_goal(Goal.identity(4))])
    bag = space.bag(atoms.from_goal(k) for k in (K1, K2, K3))
    for _, (macro, _, _, _), child in space.pairs(bag):
        assert len(child) <= 3
        assert macro != "div" or len(child) <= 1  # div needs a scratch register and its own result


def test_basic_pairs_use_only_basic_macros():
    space = Space("basic", depth=2, registers=6, inputs=[atoms.from_goal(Goal.identity(4))])
    bag = space.bag(atoms.from_goal(k) for k in (K1, K2, K3))
    used = {pair[0] for _, pair, _ in space.pairs(bag)}
    assert used and used <= {"add", "sub", "neg", "movx", "mov", "divq", "res"}


# -- the direct solver ------------------------------------------------------------------------


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


# -- whole searches ---------------------------------------------------------------------------


def check(program, f) -> None:
    """The program is allocated and computes the filter: checked by the back end's verifier."""
    assert program is not None
    assert program.registers, "search results are register-allocated"
    verify_program(program, f.initial_goals(), f.final_goals(), f.depth)
    assert program.output_goals(f.initial_goals()) == f.final_goals()


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


@pytest.mark.parametrize("traversal", ["cgds", "best-first"])
def test_a_bounded_frontier_still_finds_verified_plans(traversal):
    """Past `frontier_limit` held children, nodes put back keep only their next few: plans stay correct."""
    f = example("gauss3x3")
    small = SearchConfig(node_budget=400, frontier_limit=20, frontier_keep=2, traversal=traversal, progress=False)
    r = search(f, small)
    check(r.program, f)
    assert r.nodes == 400 or r.stopped == "exhausted"


@pytest.mark.parametrize(
    "traversal, matrix", [("dfs", "[0 1 0; 1 1 1; 0 1 0]"), ("best-first", "[0 1 0; 1 1 1; 0 1 0]"), ("bfs", "[1 1 0]")]
)
def test_other_traversals_find_plans(traversal, matrix):
    f = kernel_filter(matrix, "plus")
    r = search(f, SearchConfig(node_budget=400, traversal=traversal, progress=False))
    check(r.program, f)


def test_icws_cost_scores_plans_at_bus_level():
    f = kernel_filter("1/2 [1 0 1]", "halves")
    r = search(f, SearchConfig(node_budget=300, cost="icws", progress=False))
    check(r.program, f)
    # the plans are found by macros, then the shortest are synthesised at bus level and the best kept
    assert all(e.bus_icws == 0 for e in r.events[:-1])
    assert len(synthesize(r.program, f, BUS_OPTIONS).ops) == r.events[-1].bus_icws < r.program.icws


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


# -- kernel by kernel: the first plan of a filter of several kernels ------------------------------

THREE_KERNELS = """filter three
input A
output k0 -> A = 1/8 [3 4 2; 3 2 0; 4 7 1]
output k1 -> B = 1/8 [1 2 2; 0 1 8; 6 8 4]
output k2 -> C = 1/8 [8 3 3; 6 4 7; 7 5 1]
"""

AGAIN_KERNELS = """filter again
input A
output k0 -> A = 1/8 [0 6 5; 0 6 1; 3 3 7]
output k1 -> B = 1/8 [4 5 1; 4 4 1; 8 0 0]
output k2 -> C = 1/8 [6 8 6; 7 5 3; 1 6 3]
"""


def test_the_first_plan_of_several_kernels_is_compiled_kernel_by_kernel():
    f = parse_filter(THREE_KERNELS, "three.cain")
    alone = search(f, SearchConfig(node_budget=1000, kernel_by_kernel=0.0, fallback=False))
    assert alone.program is None  # the simultaneous search alone finds nothing in 1000 nodes
    r = search(f, SearchConfig(node_budget=1000, fallback=False))
    check(r.program, f)  # allocated on the six registers and verified as one program
    assert r.plan is not None and r.plan.output_goals(f.initial_goals()) == f.final_goals()
    assert r.kernel_by_kernel and not alone.kernel_by_kernel
    assert r.nodes <= 1000 + 100 and r.events[0].nodes <= 100  # a tenth of the budget (and the probe's)


def test_the_kernels_are_compiled_one_at_a_time_again_while_that_plan_is_the_best(monkeypatch):
    """At a fifth of the budget the simultaneous search has nothing shorter than the kernel-by-kernel plan,
    so the kernels are compiled one at a time again with half of the budget: a shorter plan, found after
    the mark, within the budget."""
    f = parse_filter(AGAIN_KERNELS, "again.cain")
    r = search(f, SearchConfig(node_budget=1000, fallback=False))
    check(r.program, f)
    monkeypatch.setattr(worker, "AGAIN_SHARE", 0.0)
    once = search(f, SearchConfig(node_budget=1000, fallback=False))
    assert r.kernel_by_kernel and once.kernel_by_kernel
    assert r.program.macros < once.program.macros
    assert r.events[-1].nodes >= 200 and r.nodes <= 1000 + 100


FOUR_KERNELS = """filter layer
input A
output k0 -> A = 1/4 [1 -2 0; 3 1 -1; 0 2 -4]
output k1 -> B = 1/4 [-1 0 4; 2 -3 1; 1 1 0]
output k2 -> C = 1/4 [0 3 -2; -1 2 2; 4 0 -1]
output k3 -> D = 1/4 [2 -1 -1; 0 4 3; -3 1 2]
"""


def test_kernels_left_too_few_registers_for_the_search_are_constructed():
    """Four kernels in six registers: the last ones have too few registers for the search alone, so the
    constructive program computes them (halving the input in place, as nothing after needs it), after
    the searched ones; without the fallback, the whole is no longer than the constructive program of every
    kernel."""
    f = parse_filter(FOUR_KERNELS, "layer.cain")
    r = search(f, SearchConfig(node_budget=2000, fallback=False))
    check(r.program, f)
    assert r.kernel_by_kernel
    constructive = search(f, SearchConfig(node_budget=1, kernel_by_kernel=0.0))
    assert constructive.constructive
    assert r.program.macros <= constructive.program.macros


def test_kernels_that_overwrite_an_input_are_compiled_last():
    f = parse_filter(THREE_KERNELS, "three.cain")
    assert kernel_order(f) == [1, 2, 0]
    two = parse_filter("filter two\ninput red -> A\ninput green -> B\n"
                       "output r -> A = { red: [1 0 1] }\noutput g -> B = { green: [1 1 0] }\n", "two.cain")
    assert kernel_order(two) is None  # each destroys an input the other needs


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


def test_kernel_by_kernel_keeps_the_shortest_split():
    """With no plan from the search, each kernel is built alone by the constructive program, or the rest
    together from some kernel on: the shortest split wins, never longer than all of them together, and it
    allocates on the six registers and computes the filter."""
    f = parse_filter(FOUR_KERNELS, "layer.cain")

    plan = kernel_by_kernel(f, f.registers, lambda sub: None, lambda sub, bases: constructive_plan(sub, "all", bases))
    assert plan.output_goals(f.initial_goals()) == f.final_goals()
    assert plan.macros <= constructive_plan(f, "all").macros
    check(allocated_and_verified(plan, f, f.registers), f)


def test_two_kernels_in_three_registers_add_their_common_part_once():
    """Two kernels and their input in three registers leave none to divide or double: both add halved
    copies of the input once per count. Added once into an accumulator both go on from, the counts they
    share cost half, and the program allocates on the three registers and computes the filter."""
    f = parse_filter(
        "filter pair\ninput A\noutput k0 -> A = 1/4 [1 2 0; 4 3 1; 3 2 3]\n"
        "output k1 -> B = 1/4 [1 1 3; 0 3 2; 3 3 3]\noption registers = A B C\n",
        "pair.cain",
    )
    alone = constructive(f, "all", [1, 0], 0, 2, sharing=False)
    shared = constructive(f, "all", [1, 0], 0, 2, sharing=True)
    assert shared.macros < alone.macros
    done = shortest_constructive(f, "all", f.registers, lambda p: allocated_and_verified(p, f, f.registers))
    assert done is not None and done[1].macros <= shared.macros
    check(done[0], f)


def test_a_kernel_starts_from_one_built_before_it():
    """A kernel that is one built before it, moved, with a count less, adds that kernel once and builds only
    the difference; allocated with the earlier kernel kept in its register, it computes both."""
    f = parse_filter(
        "filter two\ninput A\noutput k0 -> B = 1/4 [3 1 2; 1 3 1; 2 1 3]\n"
        "output k1 -> C = 1/4 [0 3 1 2; 0 1 3 1; 0 2 1 2]\noption registers = A B C D\n",
        "two.cain",
    )
    sub = replace(f, kernels=(f.kernels[1],), registers=("A", "C", "D"))
    bases = (("B", f.kernels[0].goal),)
    alone = constructive(sub, "all", [0], 0, 0, bases=bases)
    shared = constructive(sub, "all", [0], 0, 0, sharing=True, bases=bases)
    assert shared.macros < alone.macros
    names = (*sub.registers, "B")
    done = shortest_constructive(sub, "all", names, lambda p: allocated(p, names), bases)
    assert done is not None and done[1].macros <= shared.macros
    verify_program(done[0], [*sub.initial_goals(), bases[0][1]], [*sub.final_goals(), bases[0][1]], f.depth)


def test_a_kernel_doubles_what_is_left_after_one_built_before_it():
    """From the input halved in place, a kernel that is one built before it, moved, plus large counts at two
    positions adds that kernel once and builds the difference by doubling: shorter than either alone, and
    it computes the kernel with the earlier one kept."""
    f = parse_filter(
        "filter two\ninput A\noutput k0 -> B = 1/8 [7 5 6; 5 7 3; 6 5 7]\n"
        "output k1 -> C = 1/8 [15 7 5 6; 0 5 7 3; 13 6 5 7]\noption registers = A B C D\n",
        "two.cain",
    )
    sub = replace(f, kernels=(f.kernels[1],), registers=("A", "C", "D"))
    bases = (("B", f.kernels[0].goal),)
    names = (*sub.registers, "B")

    def build(doubling: bool, sharing: bool):
        return constructive(sub, "all", [0], 0, 3, doubling=doubling, sharing=sharing, bases=bases)

    both = build(doubling=True, sharing=True)
    assert both.macros < min(build(True, False).macros, build(False, True).macros)
    done = allocated(both, names)
    verify_program(done, [*sub.initial_goals(), bases[0][1]], [*sub.final_goals(), bases[0][1]], f.depth)


def test_a_count_is_added_over_two_copies_of_the_halved_input():
    """Two kernels of large counts and their input in three registers: halved in place three times, the
    input leaves its quarter beside its eighth, and the first kernel adds each count as `2a + r` over
    both (seven is three adds, not seven); the quarter's register then holds the second kernel. Shorter
    than adding the eighth once per unit, it allocates on the three registers and computes both."""
    f = parse_filter(
        "filter pair\ninput A\noutput k0 -> A = 1/8 [7 1 6; 5 8 3; 2 7 4]\n"
        "output k1 -> B = 1/8 [3 7 5; 8 2 6; 4 6 7]\noption registers = A B C\n",
        "pair.cain",
    )
    once = constructive(f, "all", [1, 0], 0, 3)
    wide = constructive(f, "all", [1, 0], 0, 3, copies=(1,), staircase=True)
    assert wide.macros < once.macros
    check(allocated_and_verified(wide, f, f.registers), f)
    done = shortest_constructive(f, "all", f.registers, lambda p: allocated_and_verified(p, f, f.registers))
    assert done is not None and done[1].macros <= wide.macros
    check(done[0], f)


@pytest.mark.parametrize("name", ["laplacian", "analognet2"])
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
