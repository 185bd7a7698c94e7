"""`expand-bus`: every macro of an allocated kernel becomes its exact bus micro-ops (cain.isa.expand)."""

from __future__ import annotations

from dataclasses import dataclass

from cain.dialects.scamp5 import BusMicroOp, KernelOp, OutputOp, program_from_kernel
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cain.diagnostics import CainError
from cain.isa import MACROS
from cain.sim import instr_bus_ops, instr_registers


@dataclass(frozen=True)
class ExpandBusPass(ModulePass):
    """Expand macros to bus micro-ops; the kernel keeps its macro and ICW counts as attributes."""

    name = "expand-bus"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, KernelOp)]:
            if kernel.is_bus_level:
                continue
            if not kernel.is_allocated:
                raise CainError(
                    f"expand-bus: kernel @{kernel.sym_name.data} has no registers yet: run regalloc first"
                )
            program, _ = program_from_kernel(kernel)
            block = Block(arg_types=[a.type for a in kernel.block.args])
            for instr in program.instrs:
                macro = MACROS[instr.macro]
                call = macro.sdk_call(instr_registers(instr, macro, program.registers), instr.directions)
                for k, bus in enumerate(instr_bus_ops(instr, program.registers)):
                    micro = BusMicroOp.from_bus_op(bus)
                    if k == 0:
                        micro.attributes["macro"] = StringAttr(call)
                    block.add_op(micro)
            block.add_op(OutputOp())
            new = KernelOp(kernel.info(), Region(block))
            new.attributes["macros"] = IntegerAttr(program.macros, i64)
            new.attributes["icws"] = IntegerAttr(program.icws, i64)
            Rewriter.replace_op(kernel, new)
