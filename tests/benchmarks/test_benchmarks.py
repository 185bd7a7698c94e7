"""The benchmark harness: settings, the paper's random filters, result writing, verification of every
counted program, and each experiment end to end on tiny node budgets."""

from __future__ import annotations

import argparse
import json
import random
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from benchmarks import approximation, bus, common, existence, heuristic, scaling, simultaneous, table1
from cain.model.goal import Goal
from cain.model.program import Instr, Program

# -- settings -------------------------------------------------------------------------------------------------


def test_budget_parsing():
    assert common.parse_budget("20000") == common.Budget(nodes=20000)
    assert common.parse_budget("60s") == common.Budget(seconds=60.0)
    assert common.parse_budget(" 1.5s") == common.Budget(seconds=1.5)
    assert common.parse_budget("20000").config() == {"node_budget": 20000, "time_budget": None}
    assert common.parse_budget("60s").config() == {"node_budget": None, "time_budget": 60.0}
    assert str(common.parse_budget("60s")) == "60 s"
    for bad in ("", "0", "-5", "60m", "abc", "0s", "1e3"):
        with pytest.raises(argparse.ArgumentTypeError, match="invalid budget"):
            common.parse_budget(bad)


def test_parser_defaults_and_errors(capsys):
    parser = common.make_parser("demo", "demo", samples=3, budget="500", workers=2)
    args = parser.parse_args([])
    assert (args.samples, args.budget, args.workers, args.seed) == (3, common.Budget(nodes=500), 2, 0)
    assert args.out == common.RESULTS_DIR / "demo"
    args = parser.parse_args(["--samples", "7", "--budget", "2s", "--workers", "1", "--seed", "9", "--out", "x"])
    assert (args.samples, args.budget, args.workers, args.seed, args.out) == (7, common.Budget(seconds=2.0), 1, 9,
                                                                             Path("x"))
    settings = common.settings_of(args)
    assert settings["budget"] == {"nodes": None, "seconds": 2.0, "text": "2 s"}
    json.dumps(settings)
    for bad in (["--samples", "0"], ["--budget", "ten"], ["--workers", "x"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
    assert "invalid budget 'ten'" in capsys.readouterr().err


def test_experiments_reject_impossible_kernel_counts():
    with pytest.raises(SystemExit):
        scaling.main(["--max-kernels", "7"])
    with pytest.raises(SystemExit):
        simultaneous.main(["--max-kernels", "5", "--registers", "4"])


def test_machine_record():
    machine = common.machine_info()
    assert machine["cores"] >= 1 and machine["cpu"]
    assert machine["python"].count(".") == 2
    assert machine["xdsl"] == "0.74.0"
    assert machine["cain"]["commit"] is None or len(machine["cain"]["commit"]) == 40
    assert "cores" in common.machine_line(machine)
    json.dumps(machine)


# -- random filters -------------------------------------------------------------------------------------------


def test_random_filter_follows_equation_10():
    f = common.random_filter(random.Random(3), 3, name="r")
    assert f.depth == 3 and f.inputs == (("input", "A"),)
    assert [k.register for k in f.kernels] == ["A", "B", "C"]
    for k in f.kernels:
        assert k.error == 0
        (matrix,) = k.weights
        assert len(matrix) == 3 and all(len(row) == 3 for row in matrix)
        assert all(w.denominator in (1, 2, 4, 8) and 0 <= w <= 1 for row in matrix for w in row)
        # the goal is the weights times 2^3, exactly, row 0 to the north
        expected = {(c - 1, 1 - r, 0): int(w * 8) for r, row in enumerate(matrix) for c, w in enumerate(row) if w}
        assert k.goal == Goal(expected)
    assert common.numerators_of(f) == [[[int(w * 8) for w in row] for row in k.weights[0]] for k in f.kernels]


def test_random_filters_are_seeded_and_uniform():
    a = common.random_filter(random.Random(1), 2)
    b = common.random_filter(random.Random(1), 2)
    c = common.random_filter(random.Random(2), 2)
    assert a == b and a != c
    rng = random.Random(0)
    values = [u for _ in range(400) for row in common.random_weights(rng) for u in row]
    assert set(values) == set(range(9))
    assert abs(sum(values) / len(values) - 4) < 0.2


def test_register_files():
    assert common.register_names(6) == ("A", "B", "C", "D", "E", "F")
    eighteen = common.register_names(18)
    assert len(set(eighteen)) == 18 and not any(r.startswith("X") or r == "NEWS" for r in eighteen)
    assert len(set(common.register_names(40))) == 40
    f = common.filter_from_numerators("f", [[[1, 0, 0], [0, 0, 0], [0, 0, 0]]] * 2, eighteen)
    assert f.registers == eighteen and f.kernels[1].register == "B"
    with pytest.raises(ValueError, match="registers"):
        common.filter_from_numerators("f", [[[1] * 3] * 3] * 3, ("A", "B"))


# -- results ---------------------------------------------------------------------------------------------------


def _run(events, status="verified"):
    best = min((e[1] for e in events), default=None)
    return common.Run("r", status, macros=best, icws=best, nodes=1000, seconds=2.0,
                      events=[{"nodes": n, "seconds": n / 500, "macros": m, "icws": m} for n, m in events])


def test_best_after_and_median_curve():
    a = _run([(10, 15), (200, 12), (900, 11)])
    b = _run([(50, 14), (400, 10)])
    missing = _run([], status="no plan")
    broken = _run([(5, 3)], status="failed")
    assert [a.best_after(n) for n in (0, 10, 199, 200, 1000)] == [None, 15, 15, 12, 11]
    assert broken.best_after(1000) is None  # failures are never data points
    assert (a.first_plan_seconds, a.best_plan_seconds, a.nodes_per_second) == (0.02, 1.8, 500.0)
    runs = [a, b, missing, broken]
    grid = heuristic.node_grid(runs, 1000)
    assert grid == [0, 10, 50, 200, 400, 900, 1000]
    points = heuristic.curve(runs, grid)
    assert points[0] == (0, None, 0)
    assert points[1] == (10, 15.0, 1)
    assert points[2] == (50, 14.5, 2)
    assert points[-1] == (1000, 10.5, 2)
    assert common.median([]) is None and common.median([3, 1, 2]) == 2.0


def test_markdown_table_and_failures():
    table = common.markdown_table(["a", "bb"], [[1, None], [2.25, "x"]])
    lines = table.strip().split("\n")
    assert lines[0] == "| a   | bb |" and lines[1] == "|-----|----|"
    assert lines[2] == "| 1   | -  |" and lines[3] == "| 2.2 | x  |"
    ok = _run([(1, 5)])
    assert "No failures" in common.failures_markdown([ok])
    bad = common.Run("k0", "failed", error="verification failed: boom")
    text = common.failures_markdown([ok, bad])
    assert "1 failed run" in text and "k0: verification failed: boom" in text


def test_write_outputs(tmp_path, capsys):
    args = common.make_parser("demo", "demo", samples=1, budget="10", workers=1).parse_args(["--out", str(tmp_path)])

    def draw(plt):
        figure, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        return figure

    paths = common.write_outputs(args, "demo", "Demo", argv=["--samples", "1"], machine=common.machine_info(),
                                 data={"rows": [1, 2]}, body="| t |\n", draw=draw)
    record = common.read_results(paths["json"].parent)
    assert record["rows"] == [1, 2] and record["experiment"] == "demo"
    assert record["command"] == "python -m benchmarks.demo --samples 1"
    assert record["settings"]["budget"]["nodes"] == 10 and record["machine"]["cores"] >= 1
    summary = paths["summary"].read_text()
    assert summary.startswith("# Demo") and "| t |" in summary and summary in capsys.readouterr().out
    if "plot" in paths:
        assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "plot.png" in summary


def test_missing_matplotlib_skips_the_plot(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    args = common.make_parser("demo", "demo", samples=1, budget="10", workers=1).parse_args(["--out", str(tmp_path)])
    paths = common.write_outputs(args, "demo", "Demo", argv=[], machine=common.machine_info(), data={}, body="",
                                 draw=lambda plt: pytest.fail("must not draw"))
    assert "plot" not in paths and not (tmp_path / "plot.png").exists()
    assert "matplotlib is not installed" in capsys.readouterr().err


# -- verification of counted programs ---------------------------------------------------------------------------


def _box_filter():
    """1/8 [[0,0,0],[0,4,4],[0,0,0]]: the centre and its east neighbour, each times 1/2."""
    return common.filter_from_numerators("box", [[[0, 0, 0], [0, 4, 4], [0, 0, 0]]])


def _box_program(direction: str) -> Program:
    # value 0 = 8 * centre; halve once: 4 * centre; add the neighbour read from the east
    return Program(name="box", inputs=[(0, "A")], outputs=[(3, "A")],
                   instrs=[Instr("div", (1,), (0,)), Instr("movx", (2,), (1,), (direction,)),
                           Instr("add", (3,), (1, 2))])


def test_a_program_that_computes_the_kernel_is_counted():
    pytest.importorskip("cain.backend.verify")
    f = _box_filter()
    good = _box_program("east")
    assert good.output_goals(f.initial_goals()) == f.final_goals()
    run = common.check_program(common.Run("box", "no plan"), good, f)
    assert run.status == "verified" and run.ok and run.macros == 3 and run.error is None
    # and at bus level: the halving is one bus2 instead of div's five ICWs (two of them bus2)
    assert run.bus_icws < good.icws and (run.bus2, run.macro_bus2) == (1, 2)


def test_a_wrong_program_is_a_failure_not_a_data_point():
    pytest.importorskip("cain.backend.verify")
    f = _box_filter()
    wrong = _box_program("west")
    assert wrong.output_goals(f.initial_goals()) != f.final_goals()
    run = common.check_program(common.Run("box", "no plan"), wrong, f)
    assert run.status == "failed" and not run.ok and run.error.startswith("verification failed")
    assert run.best_after(10**9) is None
    assert "1 failed run" in common.failures_markdown([run])


# -- each experiment end to end, real search on tiny budgets -------------------------------------------------------


def test_run_search_gives_a_verified_plan():
    f = common.filter_from_numerators("one", [[[0, 0, 0], [0, 8, 8], [0, 0, 0]]])
    run = common.run_search(f, budget=common.Budget(nodes=300), seed=0)
    assert run.status == "verified", run.error
    assert run.macros == len(run.program) and run.macros >= 2
    assert run.events and run.events[-1]["macros"] == run.macros
    assert run.nodes >= 1 and run.stopped in ("nodes", "exhausted", "optimal")


@pytest.mark.slow
def test_heuristic_experiment(tmp_path):
    assert heuristic.main(["--samples", "2", "--budget", "80", "--out", str(tmp_path), "--quiet"]) == 0
    record = common.read_results(tmp_path)
    assert set(record["runs"]) == {"scamp5", "random"}
    assert len(record["filters"]) == 2 and all(len(rs) == 2 for rs in record["runs"].values())
    for runs in record["runs"].values():
        for run in runs:
            assert run["status"] in ("verified", "no plan"), run["error"]
            assert run["nodes"] <= 80 + 8  # the search's probe, a tenth of the budget, on top
    assert "median best" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_approximation_experiment(tmp_path):
    assert approximation.main(["--samples", "1", "--budget", "30", "--out", str(tmp_path), "--quiet"]) == 0
    record = common.read_results(tmp_path)
    assert len(record["filters"]) == 1
    for f in record["filters"]:
        assert f["error"] <= float(f["source"].split("max_error = ")[1])
        sparse, near = f["sparse"], f["nearest"]
        assert sparse["atoms"] <= near["atoms"] and sparse["positions"] <= near["positions"]
        for label in ("nearest", "sparse"):
            assert f[label]["status"] in ("verified", "no plan"), f[label]["error"]
    assert "sparse: macros" in (tmp_path / "summary.md").read_text()


@pytest.mark.long
def test_scaling_experiment(tmp_path):
    assert scaling.main(["--samples", "1", "--max-kernels", "2", "--budget", "60", "--out", str(tmp_path),
                         "--quiet", "--no-plot"]) == 0
    record = common.read_results(tmp_path)
    assert sorted(record["runs"]) == ["1", "2"]
    for runs in record["runs"].values():
        assert all(r["status"] != "failed" for r in runs)
    assert not (tmp_path / "plot.png").exists()


@pytest.mark.long
def test_simultaneous_experiment(tmp_path):
    assert simultaneous.main(["--samples", "1", "--max-kernels", "2", "--budget", "40", "--out", str(tmp_path),
                              "--quiet", "--no-plot"]) == 0
    points = common.read_results(tmp_path)["points"]
    assert [p["kernels"] for p in points] == [1, 2]
    two = points[1]
    assert len(two["individual"]) == 2
    if two["individual_sum"] is not None:
        assert two["individual_sum"] == sum(r["macros"] for r in two["individual"])


@pytest.mark.slow
def test_table1_row(tmp_path):
    pytest.importorskip("cain.frontend.kernel")
    if not (table1.EXAMPLES / "gauss3x3.cain").exists():
        pytest.skip("examples/gauss3x3.cain not written yet")
    assert table1.main(["--filters", "gauss3x3", "--sets", "all", "--budget", "500", "--workers", "1",
                        "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    (row,) = common.read_results(tmp_path)["rows"]
    assert row["best"]["status"] == "verified", row["best"]["error"]
    assert (row["paper"], row["java"], row["best"]["macros"]) == (10, 10, len(row["best"]["program"]))
    assert "| gauss3x3" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_table1_through_the_default_compile(tmp_path):
    """`--compile`: the row through `cain.compile` in a fresh process, in the row's instruction set, its
    program verified here and its bus ICWs the printed program's."""
    assert table1.main(["--compile", "--filters", "gauss3x3", "--sets", "basic", "--budget", "200",
                        "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    (row,) = common.read_results(tmp_path)["rows"]
    best = row["best"]
    assert best["status"] == "verified", best["error"]
    assert best["macros"] == 12 and 0 < best["bus_icws"] < best["icws"]
    assert "With --compile each row is the default compile" in (tmp_path / "summary.md").read_text()
    with pytest.raises(SystemExit):
        table1.main(["--compile", "--cost", "icws"])


@pytest.mark.slow
def test_bus_experiment(tmp_path):
    files = [str(table1.EXAMPLES / "gauss3x3.cain"), str(table1.EXAMPLES / "laplacian.cain")]
    assert bus.main(["--filters", *files, "--budget", "400", "--images", "1", "--out", str(tmp_path), "--quiet"]) == 0
    record = common.read_results(tmp_path)
    assert [r["filter"] for r in record["rows"]] == ["gauss3x3", "laplacian"]
    for row in record["rows"]:
        assert row["run"]["status"] == "verified"
        assert row["bus_icws"] < row["macro_icws"] and row["bus_bus2"] <= row["macro_bus2"]
        assert 0 < row["error_bus"] <= row["error_macro"]
    assert record["totals"]["bus"] == sum(r["bus_icws"] for r in record["rows"])
    assert "| total" in (tmp_path / "summary.md").read_text()


def test_fraction_weights_round_trip():
    f = common.filter_from_numerators("f", [[[8, 4, 2], [1, 0, 0], [0, 0, 3]]])
    assert f.kernels[0].weights[0][0] == (Fraction(1), Fraction(1, 2), Fraction(1, 4))


# -- the generalisation suite ------------------------------------------------------------------------------------


def test_each_version_is_verified_against_its_own_rounding():
    from benchmarks import suite

    (entry,) = [f for f in suite.build_suite() if f.name == "gauss5x5_sigma1"]
    filt = entry.load()
    near = approximation.nearest(filt)
    assert near.kernels[0].goal != filt.kernels[0].goal  # sparse rounding differs from the nearest here

    def data(f, errors=None):
        return {"depth": f.depth, "goals": [[[*a, c] for a, c in k.goal.items] for k in f.kernels],
                "errors": errors or [str(k.error) for k in f.kernels]}

    bound = suite.max_error_of(entry.source)
    assert bound == Fraction(5, 100)
    assert suite.own_rounding(filt, data(near), bound).kernels == near.kernels
    with pytest.raises(ValueError, match="from its weights"):
        suite.own_rounding(filt, data(near, ["0"]), bound)
    with pytest.raises(ValueError, match="max_error"):
        suite.own_rounding(filt, data(filt), Fraction(1, 100))


def test_suite_is_made_by_rule_and_split_in_two():
    from benchmarks import suite

    filters = suite.build_suite()
    assert len(filters) >= 40 and len({f.name for f in filters}) == len(filters)
    assert suite.build_suite() == filters  # the random families come from a fixed seed
    families = {f.family for f in filters}
    assert {"gaussian", "cnn layer", "multi-channel", "random eq. 10", "approximate"} <= families
    halves = suite.split(filters)
    tuning, validation = ({f.name for f in halves[h]} for h in suite.HALVES)
    assert not tuning & validation and tuning | validation == {f.name for f in filters}
    assert abs(len(tuning) - len(validation)) <= 1
    for family in families:  # both halves get every family of two filters or more
        members = {f.name for f in filters if f.family == family}
        assert len(members) < 2 or (members & tuning and members & validation)
    assert suite.binomial(5) == [1, 4, 6, 4, 1] and suite.norm([[5, 5, 5], [-3, 0, -3], [-3, -3, -3]]) == 16
    assert suite.rotate45(suite.rotate45(suite.ROBINSON_N)) == [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
    by_name = {f.name: f.load() for f in filters}
    assert by_name["gauss7x7"].depth == 12 and sum(c for _, c in by_name["gauss7x7"].kernels[0].goal.items) == 4096
    assert by_name["box3x3_ninth"].kernels[0].error > 0  # approximated within max_error
    assert len(by_name["cnn_int6"].kernels) == 6 and len(by_name["mc3_blur"].inputs) == 3


@pytest.mark.long
def test_suite_runs_side_by_side_with_a_baseline(tmp_path):
    from benchmarks import suite

    assert suite.main(["--filters", "binomial1x3", "sobel_pair", "--budget", "150", "--workers", "1",
                       "--baseline", "HEAD", "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    record = common.read_results(tmp_path)
    assert record["versions"][0] == "current" and record["versions"][1].startswith("HEAD")
    assert [r["filter"] for r in record["rows"]] == ["binomial1x3", "sobel_pair"]
    for row in record["rows"]:
        for run in row["runs"].values():
            assert run["status"] == "verified", run["error"]
            assert run["nodes"] <= 150 + 15 and run["macros"] == len(run["program"])  # and the probe's
            assert 0 < run["bus_icws"] <= run["icws"] and len(run["bus_program"]) == run["bus_icws"]
    summary = (tmp_path / "summary.md").read_text()
    assert "| binomial1x3" in summary and "both compile" in summary
    current = sum(row["runs"]["current"]["bus_icws"] for row in record["rows"])
    baseline = sum(row["runs"][record["versions"][1]]["icws"] for row in record["rows"])
    assert f"current at bus level (bus-synth) {current} against" in summary
    assert f"macro programs {baseline} " in summary
    synthesised = sum(row["runs"][record["versions"][1]]["bus_icws"] for row in record["rows"])
    assert f"programs through bus-synth {synthesised} " in summary


@pytest.mark.long
def test_compile_time_runs_side_by_side_with_a_baseline(tmp_path, capsys):
    from benchmarks import compile_time

    files = [str(ROOT / "examples" / "box3x3.cain"), str(ROOT / "examples" / "sobel.cain")]
    assert compile_time.main([*files, "--budget", "20", "--baseline", "HEAD", "--out", str(tmp_path), "--quiet"]) == 0
    record = common.read_results(tmp_path)
    assert record["versions"][0] == "current" and record["versions"][1].startswith("HEAD")
    assert [Path(f["file"]).name for f in record["files"]] == ["box3x3.cain", "sobel.cain"]
    for entry in record["files"]:
        assert set(entry["runs"]) == set(record["versions"])
        assert all(run["status"] == 0 and run["seconds"] > 0 for run in entry["runs"].values())
    assert "| box3x3.cain" in capsys.readouterr().out
    assert compile_time.main([files[0], "--driver", "cain", "--budget", "20", "--out", str(tmp_path), "--quiet"]) == 0
    (entry,) = common.read_results(tmp_path)["files"]
    assert entry["runs"]["current"]["status"] == 0 and entry["runs"]["current"]["icws"] > 0
    assert "`cain FILE --budget 20`" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        compile_time.main([str(tmp_path / "nothing.cain"), "--out", str(tmp_path)])
    assert "no such file" in capsys.readouterr().err


def test_compile_time_passes_search_options(tmp_path, capsys):
    """`--search` reaches cain-opt's search pass (a misspelt option would fail the compile), and is refused with
    the `cain` driver, which has no search pass options."""
    from benchmarks import compile_time

    box = tmp_path / "box2x2.cain"
    box.write_text("filter box2x2\ninput A\noutput b -> B = [1 1; 1 1]\n")
    out = tmp_path / "out"
    argv = [str(box), "--budget", "300", "--search", "exact=true", "--out", str(out), "--quiet"]
    assert compile_time.main(argv) == 0
    assert "search{budget=300 quiet=true exact=true}" in common.read_results(out)["command"]
    (entry,) = common.read_results(out)["files"]
    assert entry["runs"]["current"]["status"] == 0
    with pytest.raises(SystemExit):
        compile_time.main([str(box), "--driver", "cain", "--search", "exact=true", "--out", str(out)])
    assert "use it with --driver cain-opt" in capsys.readouterr().err


# -- existence of a program where Cain finds none ---------------------------------------------------------------

LAYER = """filter tiny
input c0 -> A, c1 -> B
output k0 -> C = {{ c0: [1 0 0], c1: [0 0 0] }}
output k1 -> D = {{ c0: [0 0 0], c1: [{k1}] }}
output k2 -> E = {{ c0: [0 1 0], c1: [1 0 0] }}
output k3 -> A = {{ c0: [1 0 0], c1: [0 0 -1] }}
option registers = A B C D E
"""


def test_existence_script_holds_each_kernels_channel_polynomials():
    from cain.frontend.kernel import parse_filter

    script = existence.singular_input(parse_filter(LAYER.format(k1="0 1 0"), "tiny"))
    # kernel by kernel, channel by channel; `u` is x^-1 (the west neighbour)
    assert "(1)*u^1, 0, 0, (1)*1, (1)*1, (1)*u^1, (1)*u^1, (-1)*x^1;" in script
    assert "matrix K[4][2]" in script


def test_existence_needs_singular(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(existence.shutil, "which", lambda name: None)
    assert existence.main(["--out", str(tmp_path)]) == 1
    assert "needs Singular" in capsys.readouterr().err


@pytest.mark.skipif(existence.shutil.which("Singular") is None, reason="Singular is not installed")
def test_existence_checks_both_conditions(tmp_path):
    exists = tmp_path / "exists.cain"
    exists.write_text(LAYER.format(k1="0 1 0"))
    # k0 and k1 of channel 0 only, k2 and k3 too where x = 1: all four parallel on a surface
    parallel = tmp_path / "parallel.cain"
    parallel.write_text(
        LAYER.format(k1="0 0 0")
        .replace("c0: [0 0 0], c1: [0 0 0]", "c0: [0 0 1], c1: [0 0 0]")
        .replace("c1: [1 0 0] }", "c1: [0 -1 1] }")
        .replace("c1: [0 0 -1] }", "c1: [0 -1 1] }")
    )
    rows = {r["case"]: r for r in (existence.check(p, 60) for p in (exists, parallel))}
    assert rows["exists.cain"]["outcome"] == "a program exists"
    assert rows["parallel.cain"]["entries generate"]
    assert rows["parallel.cain"]["parallel locus dim"] > 0
    assert rows["parallel.cain"]["outcome"] == "not shown"


@pytest.mark.slow
def test_suite_runs_the_default_compile():
    """`--compile`: each filter through `cain.compile` in its own process; the fewest macros of its two
    searches verified here, its printed bus-level program's counts recorded."""
    from benchmarks import suite

    (entry,) = [f for f in suite.build_suite() if f.name == "binomial1x3"]
    run = suite.compile_in_process(suite.Tree("current", suite.ROOT), entry, entry.load(),
                                   budget=common.parse_budget("150"), workers=None, seed=0)
    assert run.status == "verified", run.error
    assert run.macros == len(run.program) and 0 < run.bus_icws <= run.icws
    assert run.events[0]["seconds"] == run.seconds > 0
    macro = suite.compile_in_process(suite.Tree("current", suite.ROOT), entry, entry.load(),
                                     budget=common.parse_budget("150"), workers=None, seed=0, level="macro")
    assert macro.status == "verified", macro.error
    assert macro.macros == len(macro.program) and macro.bus_icws == macro.icws  # the expansion, verified
    with pytest.raises(SystemExit):
        suite.main(["--level", "macro", "--filters", "binomial1x3"])  # the compile's level: needs --compile


def _toy_case(case: tuple[int]) -> tuple[str, str, int | None]:
    (i,) = case
    outcome = ("passed", "no fit", "wrong")[i % 3]
    return outcome, f"filter f{i}\n", 10 + i if outcome == "passed" else None


def test_fuzz_cases_count_outcomes_keep_failures_and_record_each_case(tmp_path):
    kept = tmp_path / "kept"
    outcomes, counts, each = common.fuzz_cases(_toy_case, [(i,) for i in range(5)], 1, kept, 3)
    assert outcomes == {"passed": 2, "no fit": 2, "wrong": 1}
    assert counts == [[10], [13]]
    assert each == ["passed", "no fit", "wrong", "passed", "no fit"]
    assert [p.name for p in kept.iterdir()] == ["fuzz3_2.cain"]
    assert (kept / "fuzz3_2.cain").read_text() == "filter f2\n"
