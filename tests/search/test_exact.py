"""The exact search and the lower bounds: proven optima of small filters, checked against an independent
brute force over programs, every bound at most the optimum, and the bound in results and the C header."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from benchmarks import optimal
from cain import cli
from cain.backend.emit_c import length_bound
from cain.backend.verify import verify_for_filter
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS, instruction_set
from cain.search import SearchConfig, search
from cain.search.allocate import allocated_and_verified
from cain.search.budget import Budget
from cain.search.exact import sat as exact_sat
from cain.search.exact.bound import filter_bound
from cain.search.exact.deepening import ExactSearch
from cain.search.exact.symmetry import SYMMETRIES
from cain.search.goals.space import form_of

EXACT_NODES = 20_000


def exact(filt: Filter, iset: str, nodes: int = EXACT_NODES, horizon: int = 3):
    names = filt.registers
    return ExactSearch(
        filt, iset, names, lambda p: allocated_and_verified(p, filt, names), Budget(nodes=nodes), max_horizon=horizon
    ).run()


def program_values(iset: str, length: int, cancel: bool) -> dict[Goal, int]:
    """Every goal some program of at most `length` macros of `iset` computes from one input at depth 0,
    with the fewest macros: an independent brute force over programs (values never die: no register limit
    binds at these lengths; one value read twice only where the bus rule lets two operands share a
    register, as `sub(y, a, a)`). Without `cancel`, no instruction's terms may cancel (the goal model)."""
    macros = instruction_set(iset)
    start = (Goal.identity(1),)
    best: dict[Goal, int] = {start[0]: 0}
    level = {start}
    for step in range(1, length + 1):
        nxt = set()
        for values in level:
            for m in macros.values():
                distinct = form_of(m).distinct
                for ops in itertools.product(range(len(values)), repeat=len(m.operands)):
                    if any(ops[i] == ops[j] for i, j in distinct):
                        continue  # the bus rule puts these operands in two registers: a copy first
                    goals = tuple(values[i] for i in ops)
                    for dirs in itertools.product(sorted(DIRECTIONS), repeat=m.directions):
                        if not cancel and len(m.terms) > 1:
                            signs: dict = {}
                            shift = (sum(DIRECTIONS[d][0] for d in dirs), sum(DIRECTIONS[d][1] for d in dirs))
                            clash = False
                            for t in m.terms:
                                g = goals[t.operand].shifted(shift) if t.shifted else goals[t.operand]
                                for atom, c in g:
                                    s = (c > 0) == (t.sign > 0)
                                    clash |= signs.setdefault(atom, s) != s
                            if clash:
                                continue
                        try:
                            result = m.apply(goals, dirs)
                        except ValueError:
                            continue
                        if not result:
                            continue
                        best.setdefault(result, step)
                        nxt.add(tuple(sorted((*values, result))))
        level = nxt
    return best


TINY = (
    [[1, 1]],
    [[1, -1]],
    [[1], [-1]],
    [[1, 0, 1]],
    [[-1, 0, 0]],
    [[1, 1], [1, 0]],
    [[2, 1]],
    [[1, -1, 1]],
    [[2, 2]],
)
"""Kernels small enough for the brute force (depth 0, one input in A, the output in B)."""


@pytest.fixture(scope="module")
def brute():
    return {cancel: program_values("basic", 3, cancel) for cancel in (True, False)}


@pytest.mark.parametrize("matrix", TINY)
def test_exact_matches_brute_force(matrix, brute):
    goal = Goal.from_matrices([matrix])
    filt = Filter.of_goals("tiny", [goal], 0, inputs=("A",), outputs=("B",))
    result = exact(filt, "basic")
    assert result.optimal and result.program is not None
    verify_for_filter(result.program, filt)
    model, general = brute[False].get(goal), brute[True].get(goal)
    if model is not None:
        assert result.bound == model  # the shortest goal-model program, found by two different methods
    else:
        assert result.bound > 3
    assert filter_bound(filt, "basic") <= (general if general is not None else 4) <= result.bound


SHARED = ([[1, -1]], [[1, 0, -1]], [[1], [0], [-1]], [[1, -1], [1, -1]], [[2, 1]])
"""Kernels whose shortest `all` programs read one value twice in one macro (`subx(y, a, a, east)`)."""


@pytest.mark.parametrize("matrix", SHARED)
def test_exact_reads_one_register_twice_where_the_bus_allows(matrix):
    """The goal model lets a macro read one register twice where the bus rule does (`sub`, `subx`,
    `sub2x`: the operands are read by different micro-ops), so `A - east(A)` takes one macro, not a copy
    and a subtraction; the exact search proves the brute force's optimum and its program runs."""
    goal = Goal.from_matrices([matrix])
    filt = Filter.of_goals("tiny", [goal], 0, inputs=("A",), outputs=("B",))
    result = exact(filt, "all")
    assert result.optimal and result.program is not None
    verify_for_filter(result.program, filt)
    assert result.bound == program_values("all", 2, False).get(goal, 3)


@pytest.mark.parametrize(
    "matrix", [[[1, 1, 1]], [[1, 2, 1]], [[1, 1], [1, 1]], [[1, -1], [-1, 1]], [[0, 1], [1, 1]]]
)
def test_forward_table_pruning_keeps_the_optimum(matrix):
    """Children with goals outside the forward table, and operands found by pattern, are pruned only as
    the table's bound allows: the search without a table, with a one-instruction table (pruning at every
    length above it) and with the default one prove the same optimum, in both instruction sets."""
    goal = Goal.from_matrices([matrix])
    filt = Filter.of_goals("tiny", [goal], 0, inputs=("A",), outputs=("B",))
    for iset in ("all", "basic"):
        results = [exact(filt, iset, horizon=h) for h in (0, 1, 3)]
        assert all(r.optimal for r in results)
        assert len({r.bound for r in results}) == 1, (iset, [r.bound for r in results])


def test_mass_bound():
    """[2 2] from a count-1 input: its total 4 needs two additions (each at most doubles the largest
    total), its width one move: three in the basic set, where additions never move (four are needed:
    an addition reads two registers, so doubling takes a copy first)."""
    filt = Filter.of_goals("twice", [Goal.from_matrices([[[2, 2]]])], 0, outputs=("B",))
    assert filter_bound(filt, "basic") == 3
    assert exact(filt, "basic").bound == 4


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "iset"),
    [
        pytest.param(n, s, marks=[pytest.mark.long] * (n != "roberts" and s == "all"))
        for n in optimal.SMALL
        for s in ("basic", "all")
    ],
)
def test_small_filters_are_proven_and_bounded(name, iset):
    filt = optimal.load(name, iset)
    result = exact(filt, iset)
    assert result.optimal and result.program.macros == result.bound
    verify_for_filter(result.program, filt)
    assert filter_bound(filt, iset) <= result.bound
    # the heuristic search never beats a proven optimum, and reports a bound no greater than it
    r = search(filt, SearchConfig(instruction_set=iset, node_budget=500, progress=False))
    assert r.program.macros >= result.bound >= r.lower_bound


def test_basic_sobel_bound_is_tight_and_stops_the_search():
    """Four moves (its box is 2 + 2 wide), three additions (six positions): the heuristic search stops
    there, well before its budget."""
    filt = optimal.load("sobel_x", "basic")
    assert filter_bound(filt, "basic") == 7
    r = search(filt, SearchConfig(instruction_set="basic", node_budget=100_000, progress=False))
    assert r.stopped == "optimal" and r.optimal and r.program.macros == 7 and r.nodes < 100_000


def test_division_levels_count():
    """1/4 [1 2 1] needs two divisions (levels 2 and 1 of 2^2), then shifts and additions."""
    filt = Filter.of_goals("blur", [Goal.from_matrices([[[1, 2, 1]]])], 2, outputs=("B",))
    assert filter_bound(filt, "basic") >= 2 + 2 + 2
    assert filter_bound(filt, "basic") <= exact(filt, "basic").bound


def test_exact_result_in_header(tmp_path, capsys):
    src = tmp_path / "sobel_x.cain"
    src.write_text(f"filter sobel_x\ninput A\n{optimal.FILTERS['sobel_x']}\noption instructions = basic\n")
    assert cli.main([str(src), "-p", "search{exact=true budget=20000 quiet=true},regalloc,emit"]) == 0
    assert "7 macro instructions (optimal), 14 ICWs" in capsys.readouterr().out  # the general bound is 7
    gauss = str(ROOT / "examples" / "gauss3x3.cain")
    assert cli.main([gauss, "-p", "search{budget=200 quiet=true},regalloc,emit"]) == 0
    assert "macro instructions (lower bound 6), " in capsys.readouterr().out  # 4 divisions, 2 moves of 2


def test_header_bound_text():
    assert length_bound({"macros": 9}) == ""
    assert length_bound({"macros": 9, "lower_bound": 4, "model_bound": 4}) == " (lower bound 4)"
    assert (
        length_bound({"macros": 9, "lower_bound": 4, "model_bound": 7})
        == " (lower bound 4; 7 in the goal model)"
    )
    assert (
        length_bound({"macros": 7, "lower_bound": 4, "model_bound": 7, "optimal": 1})
        == " (optimal in the goal model)"
    )
    # regalloc on another register file may lengthen a proven program: no longer called optimal
    assert length_bound({"macros": 8, "lower_bound": 4, "model_bound": 7, "optimal": 1}).startswith(
        " (lower bound 4"
    )


needs_cp_sat = pytest.mark.skipif(
    not exact_sat.available(), reason="OR-Tools (the `exact` extra) not installed"
)


@needs_cp_sat
@pytest.mark.parametrize("matrix", TINY)
def test_cp_sat_agrees_with_the_brute_force_over_every_program(matrix, brute):
    """CP-SAT's encoding covers every program, cancelling ones included: it refutes exactly the lengths
    below the brute force's shortest program and finds a program of that length, which runs."""
    goal = Goal.from_matrices([matrix])
    filt = Filter.of_goals("tiny", [goal], 0, inputs=("A",), outputs=("B",))
    shortest = brute[True].get(goal, 4)
    for n in range(1, min(shortest, 3) + 1):
        got = exact_sat.solve(filt, "basic", n, seconds=60, work=20, workers=1)
        if n < shortest:
            assert got.status == "refuted" and got.bound == n + 1, (n, got.status)
        else:
            assert got.status == "found", (n, got.status)
            verify_for_filter(allocated_and_verified(got.plan, filt, filt.registers), filt)


@pytest.mark.slow
@pytest.mark.long
@needs_cp_sat
def test_cp_sat_bound_makes_the_exact_result_optimal_for_every_program():
    """Prewitt x in the `all` set: CP-SAT refutes 3 macros for every program (the general bound says 2), and
    the exact search's 4-macro program is then optimal among all programs, not only the goal model's."""
    filt = optimal.load("prewitt_x", "all")
    refuted = exact_sat.solve(filt, "all", 3, seconds=60, work=20, workers=1)
    assert refuted.status == "refuted" and refuted.bound == 4
    result = search(filt, SearchConfig(exact=True, node_budget=20_000, progress=False, fallback=False))
    assert result.program.macros == 4 and result.lower_bound == 4 and result.optimal
    verify_for_filter(result.program, filt)


@needs_cp_sat
def test_cp_sat_is_deterministic_with_one_worker():
    filt = Filter.of_goals("tiny", [Goal.from_matrices([[[1, 0, -1]]])], 0, inputs=("A",), outputs=("B",))
    plans = [exact_sat.solve(filt, "all", 2, seconds=60, work=20, workers=1, seed=3).plan for _ in range(2)]
    assert plans[0] is not None and plans[0].instrs == plans[1].instrs


def test_exact_search_honours_the_memory_limit():
    """Past `max_memory` the exact search empties its memos once, then stops (`memory`) with the bound it
    has proven, which stays sound."""
    filt = optimal.load("box3x3", "all")
    names = filt.registers
    result = ExactSearch(
        filt, "all", names, lambda p: allocated_and_verified(p, filt, names), Budget(nodes=EXACT_NODES, memory=1)
    ).run()
    assert result.stopped == "memory" and result.program is None
    assert filter_bound(filt, "all") <= result.bound <= 6


@pytest.mark.slow
@needs_cp_sat
def test_the_default_search_hands_a_small_filter_to_the_exact_search():
    """A plan within `exact_reach` macros goes on to the exact search, which proves the 4-macro Prewitt x
    optimal: the heuristic alone finds the same length on the same budget (its last step reads one
    register twice) but proves no more than a bound of 2."""
    filt = optimal.load("prewitt_x", "all")
    alone = search(filt, SearchConfig(node_budget=3000, exact_reach=0, progress=False))
    default = search(filt, SearchConfig(node_budget=3000, progress=False))
    verify_for_filter(default.program, filt)
    assert alone.program.macros == 4 and alone.lower_bound < 4 and not alone.optimal
    assert default.program.macros == 4 and default.lower_bound == 4 and default.optimal


def test_op_images_permute_the_ops():
    """The square's seven symmetries other than the identity each permute the `all` set's ops, and exactly one
    op of each orbit (the least) may be a first step, which no image undercuts."""
    ops = exact_sat.ops_of("all")
    images = exact_sat.op_images(ops, list(SYMMETRIES))
    assert len(images) == 7 and all(sorted(image) == list(range(len(ops))) for image in images)
    first = [j for j in range(len(ops)) if all(image[j] >= j for image in images)]
    orbits = {min([j] + [image[j] for image in images]) for j in range(len(ops))}
    assert first == sorted(orbits) and 1 < len(first) < len(ops)
    assert exact_sat.op_images(ops, [SYMMETRIES[0]]) == []


@pytest.mark.slow
@needs_cp_sat
@pytest.mark.parametrize("matrix", ([[1, 1, 1]], [[1, 1], [1, 1]]))
def test_cp_sat_symmetry_keeps_the_shortest_program(matrix):
    """Asking only the least first step of each orbit refutes the same lengths and finds a program of the
    same length as asking every first step, which runs."""
    filt = Filter.of_goals("tiny", [Goal.from_matrices([matrix])], 0, inputs=("A",), outputs=("B",))
    assert len(exact_sat.symmetries(filt)) > 1
    for n in range(1, 4):
        got = [exact_sat.solve(filt, "all", n, seconds=60, work=20, symmetry=s) for s in (True, False)]
        assert got[0].status == got[1].status != "unknown"
        if got[0].status == "found":
            verify_for_filter(allocated_and_verified(got[0].plan, filt, filt.registers), filt)
            break
    assert got[0].status == "found"


def test_a_node_budget_bounds_the_work_of_generating_children():
    """The 3x3 Laplacian's eight-fold centre has hundreds of splits per goal: a node budget of 3 stops the
    search by its work (`WORK_PER_NODE` budget checks a node), not only by the nodes it visits."""
    from cain.search.exact import deepening

    goal = Goal.from_matrices([[[1, 1, 1], [1, -8, 1], [1, 1, 1]]])  # 1/8 of it, at depth 3
    filt = Filter.of_goals("laplacian8", [goal], 3)
    names = filt.registers
    search_ = ExactSearch(filt, "all", names, lambda p: allocated_and_verified(p, filt, names), Budget(nodes=3))
    result = search_.run(start=9)
    assert result.stopped == "nodes" and result.program is None
    assert search_.nodes <= 3 and search_._checks <= 3 * deepening.WORK_PER_NODE
