"""`convert-linalg-to-goal`: the 2-D convolutions of a model (linalg, tosa) become `goal.filter`s
(cain.frontend.linalg), ready for `search`."""

from __future__ import annotations

from dataclasses import dataclass

from cain.dialects.goal import filter_to_op
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cain.frontend.linalg import conv_filters


@dataclass(frozen=True)
class ConvertLinalgToGoalPass(ModulePass):
    """Replace the module by one goal.filter per convolution with constant weights (the rest of the model
    runs off the sensor)."""

    name = "convert-linalg-to-goal"

    max_depth: int | None = None
    """Largest approximation depth (default 8)."""
    max_error: int | float | str | None = None
    """Largest total approximation error of a filter, e.g. 0 or 1/64 (default 0)."""
    registers: tuple[str, ...] | None = None
    """The register file (default A,B,C,D,E,F); inputs and outputs take the first registers."""
    instruction_set: str | None = None
    """`all` or `basic` (default all)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        filters = conv_filters(
            op,
            registers=self.registers,
            max_depth=self.max_depth,
            max_error=self.max_error,
            instruction_set=self.instruction_set,
        )
        for old in list(op.ops):
            old.detach()
        op.body.block.add_ops(filter_to_op(f) for f in filters)
