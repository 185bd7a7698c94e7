"""The Python API: `cain.compile` from files, text and arrays, the result's IR, counts and simulation,
errors as the command line prints them, conv layers from ONNX and linalg IR, and `cain.compile_many`."""

import dataclasses
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import cain
from benchmarks.stand_in import CXX, SIZE, compile_and_run
from cain import cli
from cain.backend.sim import correlate

EXAMPLES = Path(__file__).parents[2] / "examples"
BLUR = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]]) / 16
SOBEL = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])
INNER = (..., slice(4, -4), slice(4, -4))


def image(size: int = 40, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, (size, size)).astype(float)


@pytest.fixture(scope="module")
def gauss() -> cain.Compiled:
    return cain.compile(str(EXAMPLES / "gauss3x3.cain"), budget=300)


@pytest.fixture(scope="module")
def gauss_macros() -> cain.Compiled:
    return cain.compile(str(EXAMPLES / "gauss3x3.cain"), budget=300, level="macro")


def test_compile_a_file_gives_c_ir_counts_and_errors(gauss, gauss_macros):
    assert gauss.name == "gauss3x3" and gauss.depth == 4 and gauss.errors == {"blur": 0}
    assert list(gauss.ir) == ["goal", "scamp5", "allocated", "bus"]
    assert "goal.filter @gauss3x3" in gauss.ir["goal"] and "scamp5.bus" in gauss.ir["bus"]
    assert gauss.level == "bus" and gauss.macros == gauss.program.macros
    assert len(re.findall(r"= scamp5\.\w+ ", gauss.ir["allocated"])) == gauss.macros
    assert gauss.icws == len(gauss.micro_ops) == gauss.c.count(";") - 3  # using ...; begin; end
    assert [f"{op};" for op in gauss.micro_ops] == re.findall(r"^ +(bus\w*\(.*\);)", gauss.c, re.MULTILINE)
    assert f"icws = {gauss.icws}" in gauss.ir["bus"] and "void gauss3x3(void)" in gauss.c
    assert gauss.icws < gauss_macros.icws  # never longer than the macro program expanded
    assert gauss_macros.level == "macro" and gauss_macros.micro_ops is None
    assert gauss_macros.macros == gauss_macros.c.count(";") - 3 and "scamp5.bus" in gauss_macros.ir["bus"]
    with pytest.raises(cain.CainError, match=r"unknown level 'macros' \(choose from bus, macro\)"):
        cain.compile(str(EXAMPLES / "gauss3x3.cain"), budget=10, level="macros")


@pytest.mark.slow
def test_the_api_and_cain_opt_give_the_same_program(gauss, gauss_macros, tmp_path, capsys):
    """The IR the API keeps is what cain-opt emits the API's C from; at macro level the API runs
    `search,regalloc,emit`, and at bus level its program is the shorter of the two pipelines' with
    `bus-synth`, in the search in ICWs and in macros, each with the node budget."""
    for compiled, level in ((gauss, "bus"), (gauss_macros, "allocated")):
        saved = tmp_path / "gauss.mlir"
        saved.write_text(compiled.ir[level])
        assert cli.main([str(saved), "-p", "emit"]) == 0
        assert capsys.readouterr().out == compiled.c
    kernel = str(EXAMPLES / "gauss3x3.cain")
    assert cli.main([kernel, "-p", "search{budget=300 quiet=true},regalloc,emit"]) == 0
    assert capsys.readouterr().out == gauss_macros.c
    lengths = []
    for cost in ("icws", "macros"):
        pipeline = f"search{{budget=300 cost={cost} quiet=true}},regalloc,bus-synth,emit"
        assert cli.main([kernel, "-p", pipeline]) == 0
        lengths.append(int(re.search(r"(\d+) ICWs \(bus", capsys.readouterr().out)[1]))
    assert gauss.icws == min(lengths)
    assert re.search(r"chosen: the (ICW|macro) search's program, over the (macro|ICW) search's", gauss.c)


def test_simulate_computes_the_kernel_and_noise_perturbs_it(gauss):
    picture = image()
    out = gauss.simulate(picture)
    assert out.shape == (1, 40, 40)
    np.testing.assert_allclose(out[INNER], gauss.exact(picture)[INNER], atol=1e-9)
    noisy = gauss.simulate(picture, noise=1.0, seed=3)
    assert np.allclose(noisy, gauss.simulate(picture, noise=1.0, seed=3))
    difference = np.abs(noisy - out)[INNER]
    assert 0.1 < difference.mean() < 20


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_the_default_c_runs_the_kernel_against_the_sdk_stand_in(gauss, tmp_path):
    """The bus-level C printed by default, compiled against the SDK stand-in, computes the kernel."""
    pictures = np.stack([image(SIZE, 9)])
    (out,) = compile_and_run(gauss.c, "gauss3x3", ["A"], ["A"], pictures, tmp_path)
    expected = correlate(pictures, gauss.filter.kernels[0].goal, gauss.depth)
    np.testing.assert_allclose(out[INNER[1:]], expected[INNER[1:]], atol=1e-9)


CNN3 = """filter cnn3
input  A
output k0 -> A = 1/2 [0 0 0; 0 -1 0; 0 0 0]
output k1 -> B = 1/2 [1 -1 0; -1 -1 -1; 1 -1 -1]
output k2 -> C = 1/2 [0 1 0; 1 1 0; 1 -1 0]
"""


@pytest.mark.slow
def test_the_default_bus_program_is_never_longer_than_the_macro_programs_expansion():
    """On three 3x3 kernels: the printed bus-level program computes the kernels and is no longer than
    the macro level's program expanded (the same search, node budget), and the header names both."""
    bus = cain.compile(CNN3, budget=400)
    macros = cain.compile(CNN3, budget=400, level="macro")
    assert bus.icws <= macros.icws and bus.icws == len(bus.micro_ops)
    chosen = re.search(r"chosen: the (\w+) search's program, over the \w+ search's: (\d+) macros", bus.c)
    rival = macros.macros if chosen[1] == "ICW" else None
    assert chosen and (rival is None or int(chosen[2]) == rival)
    picture = image(seed=8)
    np.testing.assert_allclose(bus.simulate(picture)[INNER], bus.exact(picture)[INNER], atol=1e-9)
    only = cain.compile(CNN3, budget=400, cost="icws")
    assert "chosen:" not in only.c and only.level == "bus"


@pytest.mark.slow
def test_the_default_out_of_its_synthesis_budget_prints_the_verified_expansion(monkeypatch):
    """With a synthesis of one state (a node budget: no clock), each plan keeps the macros' own expansion,
    the shorter is printed, the header says the synthesis stopped, and the program computes the kernel."""
    monkeypatch.setattr(cain.api, "SYNTHESIS", dataclasses.replace(cain.api.SYNTHESIS, work=1))
    cut = cain.compile(str(EXAMPLES / "gauss3x3.cain"), budget=300)
    macros = cain.compile(str(EXAMPLES / "gauss3x3.cain"), budget=300, level="macro")
    assert cut.icws == macros.icws == len(cut.micro_ops) == cut.program.icws
    assert "bus-level synthesis stopped at its budget (time or work): the macros' own expansion" in cut.c
    picture = image(seed=3)
    np.testing.assert_allclose(cut.simulate(picture)[INNER], cut.exact(picture)[INNER], atol=1e-9)


@pytest.mark.slow
def test_compile_text_and_weight_tensors():
    text = "filter edge\noutput gx -> B = [-1 0 1; -2 0 2; -1 0 1]"
    from_text = cain.compile(text, budget=200)
    assert from_text.name == "edge" and [k.register for k in from_text.filter.kernels] == ["B"]
    tensor = np.stack([BLUR, SOBEL])[:, None]  # out x in x kh x kw
    layer = cain.compile(tensor, outputs=["B", "C"], inputs=["A"], name="layer", budget=300)
    assert [(k.name, k.register) for k in layer.filter.kernels] == [("out0", "B"), ("out1", "C")]
    assert layer.filter.inputs == (("in", "A"),)
    picture = image(seed=1)
    out = layer.simulate(picture)
    np.testing.assert_allclose(out[INNER], layer.exact(picture)[INNER], atol=1e-9)
    np.testing.assert_allclose(
        out[1][INNER[1:]], correlate(picture[None], layer.filter.kernels[1].goal, 4)[INNER[1:]]
    )
    listed = cain.compile([BLUR, SOBEL], kernel_names=["blur", "gx"], budget=300)
    assert listed.errors == {"blur": 0, "gx": 0}


@pytest.mark.slow
def test_approximated_weights_report_their_error_and_the_program_computes_the_approximation():
    weights = np.array([[0.1, 0.2, 0.1], [0.2, 0.3, 0.2], [0.1, 0.2, 0.1]])
    result = cain.compile(weights, max_depth=3, max_error=0.5, budget=200)
    (kernel,) = result.filter.kernels
    assert kernel.weights[0][0][0] == Fraction(1, 10)  # read as written, not as a binary float
    assert result.errors["out0"] == kernel.error <= Fraction(1, 2) and kernel.error > 0
    picture = image(seed=2)
    out, exact = result.simulate(picture), result.exact(picture)
    approx = correlate(picture[None], kernel.goal, result.depth)
    np.testing.assert_allclose(out[0][INNER[1:]], approx[INNER[1:]], atol=1e-9)
    assert np.max(np.abs(out - exact)[INNER]) <= float(kernel.error) * 128 + 1e-9


def test_user_mistakes_raise_cain_error_with_the_command_line_message(tmp_path, capsys):
    bad = tmp_path / "bad.cain"
    bad.write_text("output blur -> Q = [1 2 1]\n")
    with pytest.raises(cain.CainError) as caught:
        cain.compile(str(bad), budget=10)
    assert cli.main([str(bad)]) == 1
    assert str(caught.value) == capsys.readouterr().err.strip()
    assert str(caught.value).startswith(f"{bad}:1:")
    for source, options, message in [
        (np.ones((2, 3, 3, 3, 3)), {}, "weights of shape (2, 3, 3, 3, 3)"),
        (np.ones((7, 1, 3, 3)), {}, "7 output kernels need 7 registers"),
        (BLUR, {"outputs": ["Z"]}, "register 'Z' for an output kernel is not in the register file"),
        (BLUR, {"max_depth": 2}, "cannot be represented within max_error = 0"),
        (np.zeros((3, 3)), {}, "kernel 'out0' is empty"),
        (str(EXAMPLES / "gauss3x3.cain"), {"outputs": ["A"]}, "outputs: only for weights"),
        (str(tmp_path / "missing.cain"), {}, "no such file"),
    ]:
        with pytest.raises(
            cain.CainError, match="error: .*" + message.replace("(", r"\(").replace(")", r"\)")
        ):
            cain.compile(source, budget=10, **options)


@pytest.mark.slow
def test_compile_a_linalg_model(tmp_path):
    model = tmp_path / "model.mlir"
    model.write_text(
        (Path(__file__).parents[1] / "filecheck" / "convert-linalg-to-goal" / "nchw.mlir").read_text()
    )
    result = cain.compile(str(model), budget=300)
    assert result.name == "net_conv0" and len(result.filter.kernels) == 2
    picture = image(seed=4)
    np.testing.assert_allclose(result.simulate(picture)[INNER], result.exact(picture)[INNER], atol=1e-9)
    (narrow,) = cain.read_filters(str(model), registers="A,B,C", max_depth=2, max_error=0.75)
    assert narrow.registers == ("A", "B", "C") and narrow.depth == 2
    saved = tmp_path / "kernel.mlir"
    saved.write_text(result.ir["allocated"])  # scamp5 IR is read back as the filter it computes
    assert cain.read_filters(str(saved)) == [result.filter]


def onnx_model(weights: np.ndarray, group: int = 1, bias: np.ndarray | None = None, stride: int = 1):
    """A one-layer ONNX model: a 3x3 `Conv` with `pads` 1 (the output as large as the input)."""
    from onnx import TensorProto, helper, numpy_helper

    per_group = weights.shape[1]
    inputs = ["x", "w"] + (["b"] if bias is not None else [])
    init = [numpy_helper.from_array(weights.astype(np.float32), "w")]
    if bias is not None:
        init.append(numpy_helper.from_array(bias.astype(np.float32), "b"))
    node = helper.make_node(
        "Conv", inputs, ["y"], name="conv1", pads=[1, 1, 1, 1], group=group, strides=[stride, stride]
    )
    graph = helper.make_graph(
        [node],
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, per_group * group, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        init,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.slow
def test_onnx_conv_layer_computes_what_onnx_computes(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    weights = np.stack([np.stack([BLUR, SOBEL / 8]), np.stack([SOBEL.T / 4, BLUR])])  # 2 out x 2 in
    model = onnx_model(weights, bias=np.zeros(2))
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path))
    result = cain.compile(str(path), budget=300)
    assert result.name == "conv1" and len(result.filter.inputs) == 2
    pictures = np.stack([image(32, 5), image(32, 6)])
    (expected,) = ReferenceEvaluator(model).run(None, {"x": pictures[None].astype(np.float32)})
    np.testing.assert_allclose(result.simulate(pictures)[INNER], expected[0][INNER], atol=1e-3)

    depthwise = cain.read_filters(onnx_model(weights[:, :1], group=2))
    (filt,) = depthwise
    assert [len(k.weights) for k in filt.kernels] == [2, 2]
    assert filt.kernels[0].weights[1] == ((0,) * 3,) * 3 and filt.kernels[1].weights[0] == ((0,) * 3,) * 3
    split = cain.read_filters(onnx_model(weights), outputs_per_filter=1)
    assert [f.name for f in split] == ["conv1_0", "conv1_1"]
    with pytest.raises(cain.CainError, match="bias is not zero"):
        cain.read_filters(onnx_model(weights, bias=np.ones(2)))
    assert cain.read_filters(onnx_model(weights, bias=np.ones(2)), bias="ignore")
    with pytest.raises(cain.CainError, match="stride 2x2 is not supported"):
        cain.read_filters(onnx_model(weights, stride=2))


@pytest.mark.slow
def test_compile_many_reports_a_failing_filter_and_compiles_the_others(tmp_path):
    folder = tmp_path / "kernels"
    folder.mkdir()
    for name in ("sobel", "box3x3"):
        (folder / f"{name}.cain").write_text((EXAMPLES / f"{name}.cain").read_text())
    (folder / "broken.cain").write_text("output x -> A = [1 2\n")
    seen = []
    batch = cain.compile_many([folder, BLUR], jobs=2, budget=200, progress=False, on_done=seen.append)
    assert [i.name for i in batch] == ["box3x3", "broken", "sobel", "filter1"]
    assert len(seen) == 3 and [i.name for i in batch.failed] == ["broken"]
    assert batch.failed[0].error.startswith(f"{folder / 'broken.cain'}:1:21: error: syntax error")
    c_file, table = tmp_path / "all.c", tmp_path / "summary.csv"
    batch.write(c_file, table)
    text = c_file.read_text()
    assert text.count("#include <scamp5.hpp>") == 1
    assert all(f"void {n}(void)" in text for n in ("box3x3", "sobel", "filter1"))
    rows = table.read_text().splitlines()
    assert rows[0].startswith("filter,source,kernels,depth,macros,icws") and len(rows) == 5
    sobel = next(i for i in batch if i.name == "sobel").compiled
    assert f"sobel,{folder / 'sobel.cain'},2,0,{sobel.macros},{sobel.icws}" in table.read_text()
    assert "| broken |" in batch.table() and "syntax error" in batch.table()


@pytest.mark.slow
def test_compile_many_on_a_dask_cluster():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        batch = cain.compile_many(
            [EXAMPLES / "sobel.cain", EXAMPLES / "laplacian.cain", np.ones((7, 1, 3, 3))],
            executor=client.get_executor(),
            budget=150,
            progress=False,
        )
    assert [i.ok for i in batch] == [True, True, False]
    assert "7 output kernels" in batch.items[2].error
    picture = image(seed=7)
    for item in batch.items[:2]:
        done = item.compiled
        np.testing.assert_allclose(done.simulate(picture)[INNER], done.exact(picture)[INNER], atol=1e-9)


def test_picture_writes_a_png(gauss, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("skimage")
    from matplotlib.image import imread

    from cain.pictures import photo, picture

    grey = photo("camera")
    assert grey.shape == (1, 256, 256) and -128 <= grey.min() and grey.max() <= 127
    assert photo("astronaut", 3).shape == (3, 256, 256)
    path = picture(gauss, tmp_path / "gauss.png", noise=2.0)
    pixels = imread(path)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 4 * pixels.shape[0]
    with pytest.raises(cain.CainError, match="unknown sample image"):
        photo("nope")


def test_the_searches_share_a_time_budget_one_after_the_other_or_side_by_side():
    """One worker: each search 30% of the time; two or more on a time budget: side by side, 75% each with
    half the workers (at macro level, the search in macros in two orders, the whole time each); a node
    budget is each search's and never side by side (deterministic)."""
    one = cain.api.SearchOptions(time=10, workers=1)
    assert [(o.cost, o.time, o.workers) for o in one.costs("bus")] == [("icws", 3.0, 1), ("macros", 3.0, 1)]
    assert [(o.cost, o.time, o.workers) for o in one.costs("macro")] == [("macros", 10, 1)]
    two = cain.api.SearchOptions(time=10, workers=2)
    assert two.side_by_side
    assert [(o.cost, o.time, o.workers) for o in two.costs("bus")] == [("icws", 7.5, 1), ("macros", 7.5, 1)]
    assert [(o.cost, o.time, o.workers) for o in two.costs("macro")] == [("macros", 10, 1), ("macros", 10, 1)]
    # side by side, only the search in macros compares the constructive program with its plan
    assert [o.constructive for o in two.costs("bus")] == [False, True]
    assert [o.search_pass().constructive for o in two.costs("bus")] == [False, True]
    nodes = cain.api.SearchOptions(budget=300, workers=2)
    assert not nodes.side_by_side and [o.time for o in nodes.costs("bus")] == [None, None]
    assert all(o.constructive for o in (*one.costs("bus"), *nodes.costs("bus")))
    assert len(nodes.costs("macro")) == 1
    assert not cain.api.SearchOptions(time=10, workers=2, cost="icws").side_by_side
    assert not cain.api.SearchOptions(time=10, workers=2, cost="macros").side_by_side


def test_the_two_searches_take_different_traversals():
    """At bus level the search in macros takes the discrepancy order and the one in ICWs CGDS, either way
    they run; at macro level side by side, the search in macros takes both orders; one search alone (a
    `cost`, or macro level on one worker) keeps the traversal asked for."""
    for options in (cain.api.SearchOptions(time=10, workers=2), cain.api.SearchOptions(budget=300)):
        assert [(o.cost, o.traversal) for o in options.costs("bus")] == [
            ("icws", "cgds"),
            ("macros", "discrepancy"),
        ]
    assert [o.traversal for o in cain.api.SearchOptions(time=10).costs("macro")] == ["cgds"]
    assert [o.traversal for o in cain.api.SearchOptions(time=10, workers=2).costs("macro")] == list(cain.api.ORDERS)
    assert [o.traversal for o in cain.api.SearchOptions(time=10, cost="macros").costs("bus")] == ["cgds"]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 4])
def test_the_searches_side_by_side_print_a_verified_program_and_keep_the_rival(workers):
    """Two workers or more on a time budget: both searches in processes of their own (with four, each a
    portfolio of two); the printed bus-level program computes the kernels, and the other search's program
    is kept (verified) and named in the header."""
    done = cain.compile(CNN3, time=2, workers=workers)
    assert done.level == "bus" and done.icws == len(done.micro_ops) and len(done.rivals) == 1
    assert "chosen:" in done.c
    picture = image(seed=3)
    np.testing.assert_allclose(done.simulate(picture)[INNER], done.exact(picture)[INNER], atol=1e-9)
    cain.backend.verify.verify_for_filter(done.rivals[0], done.filter)


@pytest.mark.slow
def test_macro_level_side_by_side_prints_the_fewer_macros_of_both_orders():
    """At macro level on two workers: the search in macros in CGDS and in the discrepancy order, each in its
    own process; the printed program has the fewer macros, computes the kernels, and the other order's
    program is kept (verified) and named in the header."""
    done = cain.compile(CNN3, time=2, workers=2, level="macro")
    assert done.level == "macro" and done.micro_ops is None and len(done.rivals) == 1
    chosen = re.search(r"chosen: the ([\w-]+) search's program, over the ([\w-]+) search's: (\d+) macros", done.c)
    assert chosen and {chosen[1], chosen[2]} == {"CGDS", "discrepancy-order"}
    assert int(chosen[3]) == done.rivals[0].macros >= done.macros
    picture = image(seed=4)
    np.testing.assert_allclose(done.simulate(picture)[INNER], done.exact(picture)[INNER], atol=1e-9)
    cain.backend.verify.verify_for_filter(done.rivals[0], done.filter)


def _compile_in_a_pool_worker(source: str) -> int:
    return cain.compile(source, time=1).icws


@pytest.mark.slow
def test_compile_in_a_daemonic_pool_worker_runs_its_searches_in_process():
    """A `multiprocessing.Pool` worker may start no process: there the default is one worker, even on a
    time budget (elsewhere two, the searches side by side); on a node budget it is always one."""
    assert cain.api.default_workers(None) == cain.api.DEFAULT_WORKERS and cain.api.default_workers(200) == 1
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_compile_in_a_pool_worker, (CNN3,)) > 0


@pytest.mark.slow
def test_on_a_time_budget_a_second_synthesis_finds_what_the_quick_ones_work_limit_cut_off(monkeypatch):
    """With the quick synthesis held to one state (it keeps the expansion), the second, with bus-synth's own
    options in the time left, still prints a shorter verified program; on a node budget only the first runs."""
    monkeypatch.setattr(cain.api, "SYNTHESIS", dataclasses.replace(cain.api.SYNTHESIS, work=1))
    gauss = str(EXAMPLES / "gauss3x3.cain")
    timed = cain.compile(gauss, time=3, workers=1, cost="macros")  # one search: 40% of the time to lower it
    assert timed.icws == len(timed.micro_ops) < timed.program.icws
    picture = image(seed=5)
    np.testing.assert_allclose(timed.simulate(picture)[INNER], timed.exact(picture)[INNER], atol=1e-9)
    assert cain.compile(gauss, budget=300).icws == cain.compile(gauss, budget=300, level="macro").icws
