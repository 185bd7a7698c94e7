"""`digital-plan`: plan each filter of goal IR for the digital (DREG) plane: the shared reverse search on its
integer kernels, its plans ranked by their ICWs once lowered to DREG words (`cain.search.digital`); the
best plan replaces the filter as a `scamp5.kernel` of the integer kernels that carries the digital
encoding, for `lower-dreg` (on the inputs' bit planes, one 1-bit channel each, when the program is the
bit-plane plan's: `cain.search.digital.plane_program`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from cain.dialects.goal import FilterOp, filter_from_op
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.convert import kernel_from_program
from cain.backend.digital import DigitalProgram
from cain.diagnostics import CainError
from cain.frontend.options import check_bits, check_dregs, check_input_bits, digital_encoding
from cain.model.dreg import Encoding
from cain.model.filter import Filter
from cain.search.digital import compile_digital, plan_filter


@dataclass(frozen=True)
class DigitalPlanPass(ModulePass):
    """Replace every goal filter by the plan of its verified digital program."""

    name = "digital-plan"

    bits: int | None = None
    """The width of every value, wrapping modulo 2^bits (default: the filter's, else each value as wide
    as its range)."""
    input_bits: tuple[int, ...] = ()
    """The width of each input channel, e.g. `1` or `4,8` (default: the filter's, else `bits`, else 1)."""
    dregs: tuple[str, ...] = ()
    """The DREGs free for data, e.g. `R5,R6,R7` (default: the filter's, else R5-R11 and R0)."""
    budget: int | None = None
    """Stop each search after this many nodes: deterministic."""
    time: int | float | None = None
    """Stop after this many seconds in all (default 10 when no budget is given)."""
    seed: int = 0
    """Seed of the searches (and of the images the program is verified on)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = self.options()
        for filter_op in [o for o in op.walk() if isinstance(o, FilterOp)]:
            filt = filter_from_op(filter_op)
            encoding = self.encoding(filt, options)
            program = compile_digital(
                filt, encoding, self.budget, self.seed, float(self.time) if self.time is not None else None
            )
            Rewriter.replace_op(filter_op, self.result(program, filt, encoding))

    def result(self, program: DigitalProgram, filt: Filter, encoding: Encoding):
        """What replaces the filter: the plan's kernel, its ICWs on the DREG plane among its counts."""
        assert program.plan is not None
        kernel = kernel_from_program(program.plan, plan_filter(filt, encoding, program.planes))
        kernel.attributes["dreg_icws"] = IntegerAttr(program.icws, i64)
        return kernel

    def options(self) -> dict[str, object]:
        """The pass's encoding options, checked."""
        options: dict[str, object] = {}
        try:
            if self.bits is not None:
                options["bits"] = check_bits(self.bits)
            if self.input_bits:
                options["input_bits"] = check_input_bits(self.input_bits)
            if self.dregs:
                options["dregs"] = check_dregs(self.dregs)
        except ValueError as e:
            raise CainError(f"{self.name}: {e}") from None
        return options

    def encoding(self, filt: Filter, options: dict[str, object]) -> Encoding:
        """The filter's own encoding (from `option mode = digital` or a digital JSON config), the pass's
        options overriding it; without one, the options' (binary inputs by default)."""
        if filt.encoding is None:
            encoding = digital_encoding({"mode": "digital", **options}, len(filt.inputs), CainError)
            assert encoding is not None
            return encoding
        widths = options.get("input_bits", filt.encoding.input_bits)
        assert isinstance(widths, tuple)
        if len(widths) == 1:
            widths = widths * len(filt.inputs)
        if len(widths) != len(filt.inputs):
            raise CainError(
                f"{self.name}: input_bits gives {len(widths)} widths for {len(filt.inputs)} input channels"
            )
        changes = {"input_bits": widths, **{k: v for k, v in options.items() if k != "input_bits"}}
        return replace(filt.encoding, **changes)  # type: ignore[arg-type]
