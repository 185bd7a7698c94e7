"""Between `Program` (plain Python, what the search, regalloc and the simulator work on) and the
`scamp5.kernel` op (what the passes hand on)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue

from cain.backend.sim import Noise, simulate, simulate_bus
from cain.diagnostics import CainError
from cain.dialects.scamp5 import MACRO_OPS, ARegType, BusMicroOp, KernelOp, MacroOp, OutputOp, register_of
from cain.model.filter import Filter
from cain.model.isa import MicroOp
from cain.model.program import Instr, Program


def kernel_from_program(
    program: Program, filter: Filter, counts: Mapping[str, int] | None = None
) -> KernelOp:
    """A kernel op for `filter` holding `program` (typed with registers when `program.registers` is
    filled), with its macro and ICW counts among its attributes."""
    regs = program.registers

    def type_of(v: int) -> ARegType:
        return ARegType(regs[v]) if regs else ARegType.unallocated()

    block = Block(arg_types=[type_of(v) for v, _ in program.inputs])
    values: dict[int, SSAValue] = {v: arg for (v, _), arg in zip(program.inputs, block.args, strict=True)}
    for instr in program.instrs:
        op = MACRO_OPS[instr.macro](
            [values[o] for o in instr.operands],
            instr.directions,
            [type_of(r) for r in instr.results],
            instr.scratch or None,
        )
        block.add_op(op)
        values.update(zip(instr.results, op.results, strict=True))
    block.add_op(OutputOp([values[v] for v, _ in program.outputs]))
    return KernelOp(filter, Region(block), {**(counts or {}), "macros": program.macros, "icws": program.icws})


def program_from_kernel(op: KernelOp) -> Program:
    """The macro program of a kernel op (registers filled when its values are allocated)."""
    if op.is_bus_level:
        raise CainError(
            f"kernel @{op.sym_name.data} is at bus level (after expand-bus): it has no macro program"
        )
    filt = op.filter
    numbers: dict[SSAValue, int] = {}
    for arg in op.block.args:
        numbers[arg] = len(numbers)
    instrs = []
    for inner in op.block.ops:
        if isinstance(inner, MacroOp):
            for r in inner.results:
                numbers[r] = len(numbers)
            instrs.append(
                Instr(
                    inner.MACRO.name,
                    tuple(numbers[r] for r in inner.results),
                    tuple(numbers[o] for o in inner.operands),
                    inner.direction_names,
                    inner.scratch_registers,
                )
            )
    registers = {n: register_of(v) for v, n in numbers.items()} if op.is_allocated else {}
    return Program(
        filt.name,
        [(numbers[a], r) for a, (_, r) in zip(op.block.args, filt.inputs, strict=True)],
        instrs,
        [(numbers[v], k.register) for v, k in zip(op.output.outs, filt.kernels, strict=True)],
        registers,
    )


def micro_ops_of(op: KernelOp) -> list[MicroOp]:
    """The micro-ops of a kernel at bus level."""
    return [inner.micro_op() for inner in op.block.ops if isinstance(inner, BusMicroOp)]


def kernels_of(module: ModuleOp, step: str, *, allocated: bool = False) -> list[KernelOp]:
    """The module's scamp5 kernels for pass `step`: a clear error when it holds none, or (`allocated`) when
    one has no registers yet."""
    kernels = [k for k in module.walk() if isinstance(k, KernelOp)]
    if not kernels:
        earlier = "search and regalloc" if allocated else "search"
        raise CainError(f"{step}: the input holds no scamp5.kernel (run {earlier} first)")
    if allocated:
        for kernel in kernels:
            require_registers(kernel, step)
    return kernels


def require_registers(kernel: KernelOp, step: str) -> None:
    """A clear error unless every value of `kernel` has a register (regalloc has run)."""
    if not kernel.is_allocated:
        raise CainError(f"{step}: kernel @{kernel.sym_name.data} has no registers yet: run regalloc first")


def bus_kernel(kernel: KernelOp, ops: Iterable[BusMicroOp], counts: Mapping[str, int]) -> KernelOp:
    """The bus-level kernel replacing `kernel`: the same filter and inputs, `ops`, then `scamp5.output`;
    `counts` update the kernel's own."""
    block = Block(arg_types=[a.type for a in kernel.block.args])
    block.add_ops(ops)
    block.add_op(OutputOp())
    return KernelOp(kernel.filter, Region(block), {**kernel.counts, **counts})


def simulate_kernel(
    kernel: KernelOp, images: np.ndarray, *, noise: Noise | None = None, seed: int = 0
) -> list[np.ndarray]:
    """Run a `scamp5.kernel` op (macro level, allocated or not, or bus level) on `images`
    (`[channel, (image,) row, column]`); its outputs in output order."""
    if kernel.is_bus_level:
        return simulate_micro_ops(micro_ops_of(kernel), kernel.filter, images, noise, seed)
    return simulate(program_from_kernel(kernel), images, noise=noise, seed=seed)


def simulate_micro_ops(
    ops: Iterable[MicroOp], filt: Filter, images: np.ndarray, noise: Noise | None = None, seed: int = 0
) -> list[np.ndarray]:
    """Run `filt`'s bus micro-ops `ops` on `images` (`[channel, (image,) row, column]`, each channel in its
    input register); its outputs in output order."""
    inputs = dict(zip((r for _, r in filt.inputs), np.asarray(images, dtype=np.float64), strict=True))
    outputs = [k.register for k in filt.kernels]
    return simulate_bus(list(ops), inputs, outputs, noise=noise, seed=seed)
