"""`digital`: compile each filter of goal IR for the digital (DREG) plane: plans of the shared reverse search
for its integer kernels, each lowered to DREG words, allocated on the DREG file and verified bit for bit
(`cain.backend.digital`); the shortest in ICWs replaces the filter as a `dreg.kernel`."""

from __future__ import annotations

from dataclasses import dataclass

from cain.dialects.goal import FilterOp, filter_from_op
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.digital import kernel_op
from cain.diagnostics import CainError
from cain.frontend.options import check_bits, check_dregs, check_input_bits, digital_encoding
from cain.search.digital import DEFAULT_BUDGET, compile_digital


@dataclass(frozen=True)
class DigitalPass(ModulePass):
    """Replace every goal filter by its verified digital kernel."""

    name = "digital"

    bits: int | None = None
    """The width of every value, wrapping modulo 2^bits (default: each value as wide as its range)."""
    input_bits: tuple[int, ...] = ()
    """The width of each input channel, e.g. `1` or `4,8` (default: `bits`, else 1)."""
    dregs: tuple[str, ...] = ()
    """The DREGs free for data, e.g. `R5,R6,R7` (default R5-R11 and R0)."""
    budget: int = DEFAULT_BUDGET
    seed: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options: dict[str, object] = {"mode": "digital"}
        try:
            if self.bits is not None:
                options["bits"] = check_bits(self.bits)
            if self.input_bits:
                options["input_bits"] = check_input_bits(self.input_bits)
            if self.dregs:
                options["dregs"] = check_dregs(self.dregs)
        except ValueError as e:
            raise CainError(f"digital: {e}") from None
        for filter_op in [o for o in op.walk() if isinstance(o, FilterOp)]:
            filt = filter_from_op(filter_op)
            encoding = digital_encoding(options, len(filt.inputs), CainError)
            assert encoding is not None
            program = compile_digital(filt, encoding, self.budget, self.seed)
            Rewriter.replace_op(filter_op, kernel_op(program))
