"""`verify`: prove every scamp5 kernel computes its goals, symbolically and on random images."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cain.backend.convert import kernels_of
from cain.backend.verify import verify_kernel


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
        for kernel in kernels_of(op, "verify"):
            verify_kernel(kernel, images=self.images, size=self.size, seed=self.seed)
