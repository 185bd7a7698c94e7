"""The exact search in ICWs (`cain.search.exact_bus`): optima of tiny filters checked by hand and by an
independent brute force over single micro-ops, small filters proven at node budgets CI affords, every
bound at most a length actually achieved, the budget honoured, and the pipeline's bus-level kernel."""

from __future__ import annotations

import itertools

import pytest

from benchmarks import optimal
from cain import cli
from cain.backend.bus_synth import NEWS_FAMILY
from cain.backend.sim import GOAL_ALGEBRA, run_bus
from cain.backend.verify import verify_bus
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import BUS_KINDS, NEIGHBOUR_NEWS, NEWS, MicroOp, SimulationError, check_bus
from cain.search import SearchConfig, search
from cain.search.budget import Budget
from cain.search.exact.bus import ExactBusSearch, upper_ops

REGISTERS = ("A", "B", "C")
NODES = 20_000


def tiny(matrix, registers=REGISTERS) -> Filter:
    return Filter.of_goals("tiny", [Goal.from_matrices([matrix])], 0, outputs=("B",), registers=registers)


PAIRS = {
    "roberts": ([[[1, 0], [0, -1]], [[0, 1], [-1, 0]]], 0),
    "sum and difference": ([[[1, 1]], [[1, -1]]], 0),
    "centre and sides": ([[[0, 1, 0]], [[1, 0, 1]]], 0),
    "two slopes": ([[[1, 2]], [[2, 1]]], 0),
    "half and a neighbour's": ([[[-1]], [[1, 1]]], 1),  # bus2(B, NEWS, A); bus(C, XE, B), or XW
}
"""Tiny filters of two outputs, each with its own goal: (matrices, depth)."""


def outputs_filter(name: str, matrices, depth: int = 0) -> Filter:
    """A filter of one or two outputs (B, then C) on input A, with registers A to D."""
    goals = [Goal.from_matrices([m]) for m in matrices]
    return Filter.of_goals(
        name, goals, depth, outputs=("B", "C")[: len(goals)], registers=("A", "B", "C", "D")
    )


def pair(name: str) -> Filter:
    return outputs_filter(name, *PAIRS[name])


def one_op_programs(registers):
    """Every single micro-op on `registers` that the bus rules and the NEWS rules of the model allow,
    reading unset registers too (an independent enumeration: no pruning, no model of values)."""
    names = (*registers, NEWS, *NEIGHBOUR_NEWS.values())
    for kind, (n, most) in BUS_KINDS.items():
        for dests in itertools.combinations(names, n):
            rest = [r for r in names if r not in dests]
            for k in range(most + 1):
                for srcs in itertools.combinations(rest, k):
                    if set(dests) & NEWS_FAMILY and (
                        len(set(dests) & NEWS_FAMILY) > 1 or set(srcs) & NEWS_FAMILY
                    ):
                        continue
                    op = MicroOp(kind, dests, srcs)
                    check_bus(op)
                    yield op


def computes(ops, filt: Filter) -> bool:
    """Whether `ops` leave every output register holding its goal, every other register starting unset
    (a unique garbage atom each) and the input in A."""
    state = {r: Goal({(0, 0, 100 + i): 1}) for i, r in enumerate((*filt.registers, NEWS))}
    state["A"] = filt.initial_goals()[0]
    try:
        run_bus(ops, state, GOAL_ALGEBRA)
    except SimulationError:
        return False  # a division leaving a fraction: not a whole goal
    return all(state[k.register] == k.goal for k in filt.kernels)


HAND = {
    "negation": ([[1]], -1, 1),  # bus(B, A)
    "copy": ([[1]], 1, 2),  # every micro-op negates: twice
    "shift": ([[0, 0, 1]], 1, 2),  # NEWS := -A, then B := -XE
    "difference": ([[0, -1, 1]], 1, 2),  # NEWS := -A, then B := -(XE + A)
    "pair sum": ([[0, 1, 1]], 1, 2),  # NEWS := -A, then B := -(NEWS + XE)
}
"""Tiny kernels (sign applied) with their optimum, checked by hand: a micro-op writes the negated sum of
its sources, and a neighbour is read only through NEWS, which starts unset."""


@pytest.mark.parametrize("name", list(HAND))
def test_hand_checked_optima(name):
    matrix, sign, best = HAND[name]
    filt = tiny([[sign * c for c in row] for row in matrix])
    exact = ExactBusSearch(filt, budget=Budget(nodes=NODES))
    # the bound alone is the optimum here: a copy needs two micro-ops because every micro-op negates
    assert exact.bound(exact.start) == best
    result = exact.run()
    assert result.optimal and result.stopped == "optimal"
    assert len(result.ops) == result.bound == best
    verify_bus(result.ops, filt)
    # independently: no single micro-op computes a kernel whose optimum is 2, and one does when it is 1
    singles = [op for op in one_op_programs(REGISTERS) if computes([op], filt)]
    assert bool(singles) == (best == 1)


def synthesized(filt: Filter) -> int:
    """ICWs of bus-level synthesis on a short heuristic search's plan: a length actually achieved."""
    result = search(filt, SearchConfig(node_budget=200, progress=False))
    return len(upper_ops(result.program, filt, filt.registers))


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "roberts",
        pytest.param("prewitt_x", marks=pytest.mark.long),
        pytest.param("box3x3", marks=pytest.mark.long),
        "laplacian4",
    ],
)
def test_small_filters_are_proven_within_bus_synth(name):
    """Proven at a CI node budget, and the bound never above a length achieved: the program's own, and
    bus-level synthesis of the heuristic search's plan."""
    filt = optimal.load(name, "all")
    result = ExactBusSearch(filt, budget=Budget(nodes=NODES)).run()
    assert result.optimal
    verify_bus(result.ops, filt)
    assert len(result.ops) == result.bound <= synthesized(filt)


@pytest.mark.slow
def test_gaussian_bound_below_known_programs():
    """The 3x3 Gaussian: a hand-written bus-level program has 12 ICWs and bus-level synthesis finds 8; the
    bound stays below both, and the budget ends the search."""
    filt = optimal.load("gauss3x3", "all")
    result = ExactBusSearch(filt, budget=Budget(nodes=300)).run()
    assert result.stopped == "nodes" and result.nodes == 301
    assert 4 <= result.bound <= min(12, synthesized(filt))  # four halvings: 1/16 from the input


def test_node_budget_is_honoured():
    filt = optimal.load("gauss3x3", "all")
    result = ExactBusSearch(filt, budget=Budget(nodes=50)).run()
    assert result.stopped == "nodes" and result.ops is None and result.nodes == 51
    assert result.bound <= 8  # bus-level synthesis's program (docs/evaluation.md)


def test_symmetry_and_register_classes_keep_the_optimum():
    """Searching without the square's symmetries proves the same optimum."""
    filt = optimal.load("box3x3", "all")
    with_sym = ExactBusSearch(filt, budget=Budget(nodes=NODES)).run()
    without = ExactBusSearch(filt, budget=Budget(nodes=NODES), symmetry=False).run()
    assert with_sym.optimal and without.optimal and with_sym.bound == without.bound == 4


def test_pipeline_emits_the_proven_program(tmp_path, capsys):
    path = tmp_path / "p.cain"
    path.write_text(f"filter prewitt_x\ninput A\n{optimal.FILTERS['prewitt_x']}\n")
    pipeline = "search{exact=true cost=icws budget=5000 quiet=true},regalloc,emit"
    assert cli.main([str(path), "-p", pipeline]) == 0
    out = capsys.readouterr().out
    assert "4 ICWs (bus micro-operations) (optimal in the bus-level model)" in out
    assert out.count("        bus") == 4


def test_zero_outputs():
    """A zero kernel is a `bus` without sources; two of them one `bus2` without sources."""
    one = Filter.of_goals("z", [Goal(), Goal.from_matrices([[[-1]]])], 0, outputs=("B", "C"))
    both = Filter.of_goals("z", [Goal(), Goal()], 0, outputs=("B", "C"))
    for filt, best in ((one, 2), (both, 1)):
        result = ExactBusSearch(filt, budget=Budget(nodes=NODES)).run()
        assert result.optimal and len(result.ops) == best
        verify_bus(result.ops, filt)


@pytest.mark.parametrize(
    "filt",
    [*map(pair, PAIRS), outputs_filter("row", [[[1, 0, -1]]]), outputs_filter("column", [[[1], [1], [1]]])],
    ids=lambda f: f.name,
)
def test_last_step_pruning_keeps_the_optimum(filt):
    """The last micro-op found by covering the kernel, and the values it could not read pruned one step
    earlier, prove the same optimum as the generic steps all the way (one and two outputs)."""
    fast = ExactBusSearch(filt, budget=Budget(nodes=NODES)).run()
    slow = ExactBusSearch(filt, budget=Budget(nodes=NODES), last_step=False).run()
    assert fast.optimal and slow.optimal and fast.bound == slow.bound
    verify_bus(fast.ops, filt)
    verify_bus(slow.ops, filt)


@pytest.mark.slow
def test_benchmark_table(tmp_path, capsys):
    """`benchmarks.optimal --cost icws` prints the proven row (its program verified again there)."""
    argv = ["--cost", "icws", "--filters", "prewitt_x", "--budget", "5000", "--out", str(tmp_path), "--quiet"]
    assert optimal.main(argv) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| prewitt_x"))
    assert [cell.strip() for cell in row.split("|")[2:6]] == ["4", "4", "yes", "0"]


def states_met(search: ExactBusSearch, left: int, upper: int) -> list[tuple]:
    """(values, unread flags) of every state `left` micro-ops from the end that `search.run(upper=upper)`
    visits."""
    states = []
    visit = search._visit

    def spy(vals, unread, r, path):
        if r == left:
            states.append((vals, unread))
        return visit(vals, unread, r, path)

    search._visit = spy
    search.run(upper=upper)
    return states


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["sobel_x", *(pytest.param(n, marks=pytest.mark.long) for n in ("sharpen", "emboss")), *PAIRS]
)
def test_two_steps_never_prunes_a_state_two_micro_ops_finish(name):
    """`two_steps` is a relaxation: on every state two steps from the end that a search meets, when the
    generic steps find a micro-op after which the last one finishes the kernel (or, with two outputs, the
    second of them), it says True; and it prunes most of the states (else it would not be worth its
    time)."""
    filt = pair(name) if name in PAIRS else optimal.load(name, "all")
    search = ExactBusSearch(filt, budget=Budget(nodes=1500))
    search.two_steps = lambda vals: True  # the generic steps alone, so that every such state is met
    search._may_finish = lambda *args: True
    states = states_met(search, 2, upper=6)
    del search.two_steps, search._may_finish
    finished = [next(iter(search.steps(vals, unread, 1)), None) is not None for vals, unread in states]
    kept = [search.two_steps(vals) for vals, _ in states]
    assert any(finished) or name == "emboss"
    assert all(k for f, k in zip(finished, kept) if f)
    assert name in PAIRS or len(states) > 100 and kept.count(False) > len(states) / 2  # the tiny: a few


@pytest.mark.parametrize("name", ["sobel_x", "sharpen"])
def test_may_finish_keeps_every_child_two_steps_keeps(name):
    """`_may_finish` rules out a micro-op's result before its destinations are chosen only when no choice
    leaves a state `two_steps` keeps: on every state three steps from the end that a search meets, the
    children are the same with it and without it; and it rules out results (else it would not pay)."""
    search = ExactBusSearch(optimal.load(name, "all"), budget=Budget(nodes=1500))
    states = states_met(search, 3, upper=7)
    may_finish = search._may_finish
    ruled_out = []

    def count(*args):
        ruled_out.append(not may_finish(*args))
        return ruled_out[-1] is False

    search._may_finish = count
    children = [list(search.steps(vals, unread, 2)) for vals, unread in states]
    search._may_finish = lambda *args: True
    assert children == [list(search.steps(vals, unread, 2)) for vals, unread in states]
    assert len(states) > 20 and any(children) and ruled_out.count(True) > len(ruled_out) / 2


@pytest.mark.slow
@pytest.mark.long
def test_emboss_needs_seven_icws_and_has_them():
    """Emboss's proven optimum (docs/evaluation.md): every length below 7 refuted at a CI node budget (the
    search's own proof of 7 takes some 96000 nodes, about two minutes), and the 7-ICW program it found
    computes the kernel."""
    filt = optimal.load("emboss", "all")
    result = ExactBusSearch(filt, budget=Budget(nodes=12_000)).run(upper=7)
    assert result.stopped == "upper" and result.bound == 7
    ops = [
        MicroOp("bus", ("NEWS",), ("A",)),
        MicroOp("bus", ("B",), ("XE", "XS")),
        MicroOp("bus", ("F",), ("NEWS",)),
        MicroOp("bus", ("XE",), ("A", "F", "B")),
        MicroOp("bus", ("E",), ("A", "B", "XN")),
        MicroOp("bus", ("XN",), ("A", "F")),
        MicroOp("bus", ("B",), ("E", "XE")),
    ]
    verify_bus(ops, filt)


@pytest.mark.slow
@pytest.mark.long
def test_gaussian_is_proven_at_six_icws():
    """The 3x3 Gaussian (docs/evaluation.md): proven at 6 ICWs, four of them `bus2`s, against bus-level
    synthesis's 8 and the hand-written 12."""
    filt = optimal.load("gauss3x3", "all")
    result = ExactBusSearch(filt, budget=Budget(nodes=10_000)).run()
    assert result.optimal and len(result.ops) == result.bound == 6
    assert sum(op.kind == "bus2" for op in result.ops) == 4
    verify_bus(result.ops, filt)
