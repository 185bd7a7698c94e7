"""`regalloc`: assign registers to every scamp5 kernel (cain.backend.regalloc), then check the result.

A plan the search has just allocated and verified on the same registers keeps that allocation
(`cain.backend.verify.allocation_of`): it is neither allocated nor verified again."""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.convert import kernel_from_program, kernels_of, program_from_kernel
from cain.backend.regalloc import allocate
from cain.backend.verify import allocation_of, remember, verify_for_filter
from cain.diagnostics import CainError


@dataclass(frozen=True)
class RegallocPass(ModulePass):
    """Assign registers (default: the kernel's register file), reusing them in place where legal."""

    name = "regalloc"

    registers: tuple[str, ...] | None = None
    """The register file to use, e.g. `registers=A,B,C,D,E,F,G,H`; default: the kernel's."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels_of(op, "regalloc"):
            if kernel.is_bus_level and "icw_bound" in kernel.counts:
                continue  # the exact search at bus level chose the registers itself
            if kernel.is_bus_level:
                raise CainError(
                    f"regalloc: kernel @{kernel.sym_name.data} is already expanded to bus micro-ops"
                )
            filt = kernel.filter
            if self.registers:
                filt = replace(filt, registers=tuple(self.registers))
            plan = program_from_kernel(kernel)
            allocated = allocation_of(filt, plan)
            if allocated is None:
                allocated = allocate(plan, filt.registers)
                verify_for_filter(allocated, filt, images=1, size=32)
                remember(filt, allocated)
            Rewriter.replace_op(kernel, kernel_from_program(allocated, filt, kernel.counts))
