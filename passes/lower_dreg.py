"""`lower-dreg`: lower each digital plan (a `scamp5.kernel` made by `digital-plan`, or read from a file) to
DREG words, allocated on the DREG file and verified bit for bit (`cain.search.digital.lower_plan`): a
`dreg.kernel`."""

from __future__ import annotations

from dataclasses import dataclass

from cain.dialects.scamp5 import KernelOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.convert import program_from_kernel
from cain.backend.digital import kernel_op
from cain.diagnostics import CainError
from cain.search.digital import lower_plan


@dataclass(frozen=True)
class LowerDregPass(ModulePass):
    """Replace every digital plan by its verified `dreg.kernel`."""

    name = "lower-dreg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.walk() if isinstance(k, KernelOp)]
        if not kernels:
            raise CainError(f"{self.name}: the input holds no scamp5.kernel (run digital-plan first)")
        for kernel in kernels:
            program = lower_plan(program_from_kernel(kernel), kernel.filter)
            Rewriter.replace_op(kernel, kernel_op(program))
