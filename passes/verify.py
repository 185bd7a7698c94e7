"""`verify`: prove every scamp5 kernel computes its goals, symbolically and on random images."""

from __future__ import annotations

from dataclasses import dataclass

from cain.dialects.scamp5 import KernelOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cain.backend.verify import verify_kernel
from cain.diagnostics import CainError


@dataclass(frozen=True)
class VerifyPass(ModulePass):
    """Check each kernel (macro or bus level) against its goals; fail with a report on a mismatch."""

    name = "verify"

    images: int = 2
    """Random images to simulate."""
    size: int = 64
    """Their width and height (enlarged if the kernel reaches further)."""
    seed: int = 0
    """Seed of the random images."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.walk() if isinstance(k, KernelOp)]
        if not kernels:
            raise CainError("verify: the input holds no scamp5.kernel (run search first)")
        for kernel in kernels:
            verify_kernel(kernel, images=self.images, size=self.size, seed=self.seed)
