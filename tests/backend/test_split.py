"""A program longer than the kernel store runs as a sequence of SDK kernels (cain.backend.split): each
within the limit, cut between macros where NEWS holds nothing still needed, verified as the device runs
them, and the split C compiled against the SDK stand-in, whose ICW stack refuses a kernel that overflows."""

import subprocess

import numpy as np
import pytest
from cain.dialects.scamp5 import KernelOp
from cain.passes.bus_synth import BusSynthPass
from cain.passes.expand_bus import ExpandBusPass
from cain.passes.regalloc import RegallocPass
from handwritten import gauss3_basic, gauss3_filter
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from benchmarks.stand_in import CXX, SIZE, compile_and_run
from cain.backend.convert import kernel_from_program
from cain.backend.emit_c import CTarget, kernel_split
from cain.backend.regalloc import allocate
from cain.backend.sim import correlate, expansion, random_images, reach
from cain.backend.split import KERNEL_STORE, kernel_pieces, live_before, piece_micro_ops, split
from cain.backend.verify import VerificationError, verify_kernels
from cain.diagnostics import CainError
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import NEWS
from cain.model.program import Instr, Program


def gauss_module(level: str = "macro") -> ModuleOp:
    """The 3x3 Gaussian (12 macros, 26 ICWs), allocated, at macro level or after expand-bus / bus-synth."""
    module = ModuleOp([kernel_from_program(gauss3_basic(), gauss3_filter("A"))])
    RegallocPass().apply(Context(), module)
    if level == "bus":
        ExpandBusPass().apply(Context(), module)
    if level == "synth":
        BusSynthPass().apply(Context(), module)
    return module


def kernel_of(module: ModuleOp) -> KernelOp:
    (kernel,) = [op for op in module.ops if isinstance(op, KernelOp)]
    return kernel


def long_module(n: int) -> ModuleOp:
    """A chain of `n` moves (2n ICWs) from A to B: one value live at every cut."""
    p = Program("chain", [(0, "A")], [Instr("mov", (v + 1,), (v,)) for v in range(n)], [(n, "B")])
    f = Filter.of_goals("chain", [Goal.identity(1)], 0, ["A"], ["B"])
    return ModuleOp([kernel_from_program(allocate(p, f.registers), f)])


def test_a_program_that_fits_is_one_kernel_as_before():
    module = gauss_module()
    text = CTarget().text(module)
    assert text.count("scamp5_kernel_begin();") == 1 and "move_to_heap" not in text and "run as" not in text
    assert kernel_split(kernel_of(module)).kernels == 1


def test_a_program_past_the_store_is_split_within_it():
    n = KERNEL_STORE // 2 + 1  # 1026 ICWs
    module = long_module(n)
    text = CTarget().text(module)
    assert text.count("scamp5_kernel_begin();") == 2
    assert text.count("scamp5_kernel_api::move_to_heap(true);") == 2
    cut = kernel_split(kernel_of(module))
    assert cut.icws in ((514, 512), (512, 514), (513, 513)) or sum(cut.icws) == 2 * n
    assert max(cut.icws) <= KERNEL_STORE and sum(cut.icws) == 2 * n
    assert "run as 2 SDK kernels of at most 1024 ICWs" in text
    assert f"may hold at most {KERNEL_STORE - max(cut.icws)} ICWs" in text


@pytest.mark.parametrize("level", ["macro", "bus", "synth"])
@pytest.mark.parametrize("limit", [5, 8, 13])
def test_cuts_respect_the_limit_and_fall_between_macros_where_news_is_dead(level, limit):
    kernel = kernel_of(gauss_module(level))
    pieces = [piece_micro_ops(p) for p in kernel_pieces(kernel)]
    outputs = [k.register for k in kernel.filter.kernels]
    cut = split(pieces, outputs, limit)
    total = sum(map(len, pieces))
    assert sum(cut.icws) == total and max(cut.icws) <= limit
    assert cut.kernels >= -(-total // limit)
    live = live_before(pieces, outputs)
    for start in cut.starts[1:]:
        assert NEWS not in live[start]
    if level != "synth":  # a macro, or a macro's expansion, is one piece
        assert len(pieces) == 12
    verify_kernels(cut.parts(pieces), kernel.filter)  # runs as the device would: NEWS garbage at each start


def test_fewest_kernels_then_fewest_live_values():
    kernel = kernel_of(gauss_module())
    pieces = [piece_micro_ops(p) for p in kernel_pieces(kernel)]
    outputs = [k.register for k in kernel.filter.kernels]
    live = live_before(pieces, outputs)
    ends = np.cumsum([0, *map(len, pieces)])
    cut = split(pieces, outputs, ends[-1] - 1)
    assert cut.kernels == 2
    longest = max(cut.icws)  # within the limit, and within `SLACK` of the balanced length
    allowed = [j for j in range(1, len(pieces)) if ends[j] <= longest and ends[-1] - ends[j] <= longest]
    assert len(live[cut.starts[1]]) == min(len(live[j]) for j in allowed)


def test_a_cut_where_news_is_live_is_caught():
    kernel = kernel_of(gauss_module("bus"))
    ops = [op for p in kernel_pieces(kernel) for op in piece_micro_ops(p)]
    # inside a macro's expansion: after `bus(NEWS, x)` its value is still to be read
    inside = next(i for i in range(1, len(ops)) if ops[i - 1].dests == (NEWS,) and NEWS in ops[i].srcs)
    with pytest.raises(VerificationError, match="WRONG"):
        verify_kernels([ops[:inside], ops[inside:]], kernel.filter)


def test_a_limit_shorter_than_a_macro_is_a_clear_error():
    with pytest.raises(CainError, match="no kernel of at most 1 ICWs.*raise max-icws"):
        CTarget(max_icws=1).text(gauss_module())
    with pytest.raises(CainError, match="max-icws must be at least 1"):
        CTarget(max_icws=0).text(gauss_module())


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
@pytest.mark.parametrize("level", ["macro", "synth"])
def test_split_c_runs_on_the_stand_in_within_its_stack(level, tmp_path):
    """Cut to 8 ICWs, the C runs against a stand-in whose ICW stack holds 8 (10 with the host's 2), and gives
    the correlation; printed as one kernel, the stand-in refuses it."""
    f = gauss3_filter("A")
    images = random_images(1, 1, SIZE, seed=3)[:, 0]
    expected = correlate(images, f.kernels[0].goal, f.depth)
    m = reach(gauss3_basic())
    text = CTarget(max_icws=8).text(gauss_module(level))
    assert text.count("scamp5_kernel_begin();") >= 2
    small = ["SCAMP5_ICW_STACK_CAP=10", "SCAMP5_ICW_STACK_TAKEN=2"]
    (out,) = compile_and_run(text, "gauss3", ["A"], ["A"], images, tmp_path, small)
    assert np.allclose(out[m:-m, m:-m], expected[m:-m, m:-m], atol=1e-9)
    whole = CTarget().text(gauss_module(level))
    with pytest.raises(subprocess.CalledProcessError) as refused:
        compile_and_run(whole, "gauss3", ["A"], ["A"], images, tmp_path, small)
    assert "overflows the ICW stack" in refused.value.stderr


def test_expansion_pieces_match_the_program():
    module = gauss_module()
    kernel = kernel_of(module)
    flat = [op for p in kernel_pieces(kernel) for op in piece_micro_ops(p)]
    regalloc = allocate(gauss3_basic(), gauss3_filter("A").registers)
    assert len(flat) == len(expansion(regalloc))


@pytest.mark.slow
@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_a_program_past_the_store_runs_on_the_stand_in_as_kernels(tmp_path):
    """1026 ICWs: as one kernel the stand-in's 1024-ICW stack refuses it; split, it runs and copies A to B."""
    images = random_images(1, 1, SIZE, seed=4)[:, 0]
    (out,) = compile_and_run(CTarget().text(long_module(513)), "chain", ["A"], ["B"], images, tmp_path)
    assert np.array_equal(out, images[0])
    whole = CTarget(max_icws=2000).text(long_module(513))
    assert whole.count("scamp5_kernel_begin();") == 1
    with pytest.raises(subprocess.CalledProcessError) as refused:
        compile_and_run(whole, "chain", ["A"], ["B"], images, tmp_path)
    assert "a kernel of 1026 ICWs overflows the ICW stack" in refused.value.stderr
