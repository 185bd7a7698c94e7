"""`expand-bus`: every macro of an allocated kernel becomes its exact bus micro-ops (cain.model.isa.expand)."""

from __future__ import annotations

from dataclasses import dataclass

from cain.dialects.scamp5 import BusMicroOp, KernelOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.backend.convert import bus_kernel, program_from_kernel, require_registers
from cain.backend.sim import instr_micro_ops, instr_registers
from cain.model.isa import MACROS


@dataclass(frozen=True)
class ExpandBusPass(ModulePass):
    """Expand macros to bus micro-ops; the kernel keeps its macro and ICW counts as attributes."""

    name = "expand-bus"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            if kernel.is_bus_level:
                continue
            require_registers(kernel, "expand-bus")
            program = program_from_kernel(kernel)
            ops = []
            for instr in program.instrs:
                macro = MACROS[instr.macro]
                call = macro.sdk_call(instr_registers(instr, macro, program.registers), instr.directions)
                for k, micro_op in enumerate(instr_micro_ops(instr, program.registers)):
                    micro = BusMicroOp.of(micro_op)
                    if k == 0:
                        micro.attributes["macro"] = StringAttr(call)
                    ops.append(micro)
            new = bus_kernel(kernel, ops, {"macros": program.macros, "icws": program.icws})
            Rewriter.replace_op(kernel, new)
