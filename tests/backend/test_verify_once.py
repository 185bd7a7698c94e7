"""Each level of a compile is verified once: a pass trusts a program only when this process verified that
very program (`cain.backend.verify.remember`), so a changed program, or one read from a file, is verified
again."""

from dataclasses import replace

import pytest
from cain.dialects.scamp5 import BusMicroOp, KernelOp
from cain.passes.bus_synth import BusSynthPass
from cain.passes.expand_bus import ExpandBusPass
from cain.passes.regalloc import RegallocPass
from cain.passes.search import SearchPass
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

from cain.backend import regalloc, verify
from cain.backend.convert import bus_kernel, kernel_from_program, micro_ops_of, program_from_kernel
from cain.backend.emit_c import CTarget
from cain.backend.sim import expansion
from cain.backend.verify import VerificationError
from cain.frontend.kernel import lower_source
from cain.model.isa import MicroOp
from cain.model.program import Instr

GAUSS = """filter gauss3x3
input  A
output blur -> A = 1/16 [1 2 1; 2 4 2; 1 2 1]
"""


class Counts:
    """How many programs were verified (one report each) and allocated since `reset`."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.verified = self.allocated = 0


@pytest.fixture
def counts(monkeypatch):
    """Counts verifications (each makes one report) and allocations (each checks its pins once), in a
    process that has verified nothing yet."""
    seen = Counts()

    class Report(verify.VerificationReport):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.verified += 1

    check_pins = regalloc._check_pins

    def counted_check_pins(*args):
        seen.allocated += 1
        return check_pins(*args)

    monkeypatch.setattr(verify, "VerificationReport", Report)
    monkeypatch.setattr(regalloc, "_check_pins", counted_check_pins)
    monkeypatch.setattr(verify, "_VERIFIED", {})
    monkeypatch.setattr(verify, "_VERIFIED_BUS", set())
    return seen


def kernel_of(module: ModuleOp) -> KernelOp:
    (kernel,) = [op for op in module.walk() if isinstance(op, KernelOp)]
    return kernel


def searched(counts: Counts) -> ModuleOp:
    module = lower_source(GAUSS, "gauss3x3.cain")
    # exact_reach=0: no probe for the exact search (not what is tested here)
    SearchPass(budget=300, exact_reach=0, quiet=True).apply(Context(), module)
    assert counts.verified == 1  # the program the search returns
    counts.reset()
    return module


def change(kernel: KernelOp) -> None:
    """What a faulty pass might do: shift the first shifting macro the other way, in place of `kernel`."""
    program = program_from_kernel(kernel)
    k = next(k for k, i in enumerate(program.instrs) if i.directions)
    flip = {"north": "south", "south": "north", "east": "west", "west": "east"}
    instr = program.instrs[k]
    program.instrs[k] = Instr(
        instr.macro, instr.results, instr.operands, tuple(flip[d] for d in instr.directions), instr.scratch
    )
    Rewriter.replace_op(kernel, kernel_from_program(program, kernel.filter, kernel.counts))


def test_search_regalloc_emit_verifies_once(counts):
    module = searched(counts)
    RegallocPass().apply(Context(), module)
    assert (counts.allocated, counts.verified) == (0, 0)  # the search's allocation, verified, is kept
    CTarget().text(module)
    assert counts.verified == 0


def test_regalloc_on_other_registers_allocates_and_verifies(counts):
    module = searched(counts)
    RegallocPass(registers=("F", "E", "D", "C", "B", "A")).apply(Context(), module)
    assert (counts.allocated, counts.verified) == (1, 1)
    CTarget().text(module)
    assert counts.verified == 1


def test_a_program_this_process_did_not_verify_is_verified(counts, monkeypatch):
    module = searched(counts)
    RegallocPass().apply(Context(), module)
    monkeypatch.setattr(verify, "_VERIFIED", {})  # as in a new process reading the IR from a file
    CTarget().text(module)
    assert counts.verified == 1
    CTarget().text(module)
    assert counts.verified == 1


def test_a_changed_program_is_verified_again(counts):
    module = searched(counts)
    RegallocPass().apply(Context(), module)
    change(kernel_of(module))
    with pytest.raises(VerificationError, match="differs from the direct correlation|holds"):
        CTarget().text(module)
    assert counts.verified == 1


def test_a_changed_plan_is_allocated_and_verified(counts):
    module = searched(counts)
    change(kernel_of(module))
    with pytest.raises(VerificationError):
        RegallocPass().apply(Context(), module)
    assert (counts.allocated, counts.verified) == (1, 1)


def test_the_expansion_of_a_verified_program_is_verified(counts):
    module = searched(counts)
    RegallocPass().apply(Context(), module)
    allocated = program_from_kernel(kernel_of(module))
    ExpandBusPass().apply(Context(), module)
    CTarget().text(module)
    assert counts.verified == 0
    kernel = kernel_of(module)
    ops = micro_ops_of(kernel)
    assert ops == expansion(allocated) and verify.is_verified(kernel)
    last = ops[-1]
    ops[-1] = MicroOp(last.kind, last.dests, (*last.srcs[:-1], "F"))  # read another register
    Rewriter.replace_op(kernel, bus_kernel(kernel, map(BusMicroOp.of, ops), {}))
    assert not verify.is_verified(kernel_of(module))
    with pytest.raises(VerificationError):
        CTarget().text(module)
    assert counts.verified == 1


def test_bus_synth_verifies_the_bus_level_once(counts):
    module = searched(counts)
    RegallocPass().apply(Context(), module)
    BusSynthPass(beam=4).apply(Context(), module)
    synthesized = counts.verified
    assert synthesized <= 1  # verified at bus level when synthesized, else the (verified) expansion is kept
    CTarget().text(module)
    assert counts.verified == synthesized


def test_a_filter_is_part_of_what_was_verified(counts):
    module = searched(counts)
    kernel = kernel_of(module)
    plan = program_from_kernel(kernel)
    assert verify.allocation_of(kernel.filter, plan) is not None
    other = replace(kernel.filter, depth=kernel.filter.depth + 1)
    assert verify.allocation_of(other, plan) is None
    assert verify.allocation_of(replace(kernel.filter, registers=("A", "B", "C")), plan) is None
