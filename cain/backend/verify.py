"""Proof that a program computes its kernels: symbolically and on random images.

Symbolic: each output value holds exactly its goal (executed on goals, so exact). For an allocated
program the bus micro-ops of every macro are also executed on the register file, where every register
that is not an input starts with a unique garbage atom: a value that is clobbered or read before being
set shows up as a wrong goal, and the first instruction where a live value is lost is named.
Numeric: the program runs in the simulator (cain.backend.sim) on random images and each output is compared with
the direct correlation of the image with `goal / 2^depth`, on the pixels far enough from the edges
(`cain.backend.sim.reach`) to be exact.

Each level of a compile is verified once: whoever verifies a program `remember`s it, by its content, and
a later pass that meets the same program (`allocation_of`, `is_verified`) trusts it. The record lives in
this process alone and is keyed by what was verified, never by what a kernel claims, so IR read from a
file, or changed by any pass since, is verified again: nothing in the IR can say it is verified. An
allocated program's verification runs its macros as their bus micro-ops (`run_registers`), so it also
verifies that expansion (what `expand-bus` makes of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cain.backend.convert import micro_ops_of, program_from_kernel
from cain.backend.regalloc import describe
from cain.backend.sim import (
    GOAL_ALGEBRA,
    SimulationError,
    bus_reach,
    bus_registers,
    correlate,
    expansion,
    garbage_registers,
    instr_registers,
    numeric_algebra,
    random_images,
    reach,
    run_kernels,
    run_registers,
    run_values,
)
from cain.diagnostics import CainError
from cain.dialects.scamp5 import KernelOp
from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.isa import MACROS, NEWS, MicroOp
from cain.model.program import Instr, Program

GARBAGE_CHANNEL = 1 << 20
"""Channel of the atoms that mark a register's unset contents in symbolic register-level runs."""


@dataclass
class VerificationReport:
    """What was checked and how closely the simulated outputs match the direct correlation."""

    name: str
    macros: int
    icws: int
    checks: list[str] = field(default_factory=list)
    max_error: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        head = f"{self.name}: {self.macros} macros, {self.icws} ICWs: " + ("verified" if self.ok else "WRONG")
        lines = [head, *(f"  ok: {c}" for c in self.checks), *(f"  error: {p}" for p in self.problems)]
        return "\n".join(lines)


class VerificationError(CainError):
    """A program does not compute its kernels; `report` says where and how."""

    def __init__(self, report: VerificationReport):
        super().__init__(str(report))
        self.report = report


def show_goal(goal: Goal, channels: int) -> str:
    """A goal as its matrices, or a note when it holds garbage from an unset or clobbered register."""
    if any(a[2] >= GARBAGE_CHANNEL for a, _ in goal):
        garbage = sorted({a[2] - GARBAGE_CHANNEL for a, _ in goal if a[2] >= GARBAGE_CHANNEL})
        return f"garbage left in register(s) {', '.join(_garbage_names[g] for g in garbage if g < len(_garbage_names))}"
    if not goal:
        return "0"
    return " ".join(str(m) for m in goal.matrices(channels=max(channels, goal.channels)))


_garbage_names: list[str] = []


def _garbage(reg: str) -> Goal:
    """The unique atom standing for what `reg` holds before the program sets it."""
    if reg not in _garbage_names:
        _garbage_names.append(reg)
    return Goal({(0, 0, GARBAGE_CHANNEL + _garbage_names.index(reg)): 1})


def verify_program(
    program: Program,
    input_goals: list[Goal],
    output_goals: list[Goal],
    depth: int,
    *,
    images: int = 2,
    size: int = 64,
    seed: int = 0,
) -> VerificationReport:
    """Check `program` symbolically and numerically; raise VerificationError on any mismatch."""
    report = VerificationReport(program.name, program.macros, program.icws)
    channels = len(input_goals)
    if len(program.inputs) != channels:
        report.problems.append(f"the program has {len(program.inputs)} input(s), the filter {channels}")
    if len(program.outputs) != len(output_goals):
        report.problems.append(
            f"the program has {len(program.outputs)} output(s), the filter {len(output_goals)}"
        )
    if report.problems:
        raise VerificationError(report)

    # symbolic, on SSA values
    try:
        values = run_values(program, input_goals, GOAL_ALGEBRA)
    except SimulationError as e:
        report.problems.append(f"symbolic execution failed: {e}")
        raise VerificationError(report) from None
    except KeyError as e:
        report.problems.append(f"value %{e.args[0]} is read before it is defined")
        raise VerificationError(report) from None
    values_at = [f"%{v}" for v, _ in program.outputs]
    _compare_goals(report, [values[v] for v, _ in program.outputs], output_goals, values_at, channels)
    if report.ok:
        report.checks.append("symbolic: every output value holds exactly its goal")

    # symbolic, on the register file
    if program.registers:
        for kind, pins in (("input", program.inputs), ("output", program.outputs)):
            for v, reg in pins:
                if program.registers.get(v) != reg:
                    report.problems.append(
                        f"{kind} %{v} is pinned to register {reg} but allocated to {program.registers.get(v)}"
                    )
    if program.registers and report.ok:
        _symbolic_registers(report, program, input_goals, output_goals, values, channels)

    # numeric, on random images
    if report.ok:
        margin = reach(program)
        size = max(size, 2 * margin + 8)
        pictures = random_images(channels, images, size, seed)
        inputs = [correlate(pictures, g, depth) for g in input_goals]
        expected = [correlate(pictures, g, depth) for g in output_goals]
        algebra = numeric_algebra(pictures.shape[1:])
        outputs = [reg for _, reg in program.outputs]
        numbers = run_values(program, inputs, algebra)
        _compare_numeric(
            report, "numeric (values)", [numbers[v] for v, _ in program.outputs], expected, outputs, margin
        )
        if program.registers:
            garbage = garbage_registers(program.registers.values(), pictures.shape[1:], seed + 1)
            state = run_registers(program, inputs, algebra, garbage)
            _compare_numeric(
                report, "numeric (registers)", [state[r] for r in outputs], expected, outputs, margin
            )
        if report.ok:
            report.checks.append(
                f"numeric: {images} random {size}x{size} image(s), {'values and registers' if program.registers else 'values'}, "
                f"margin {margin}: max |error| {report.max_error:.3g}"
            )
    if not report.ok:
        raise VerificationError(report)
    return report


def _compare_goals(
    report: VerificationReport, got: list[Goal], want: list[Goal], places: Sequence[str], channels: int
) -> None:
    """A problem for each output whose goal is not what it holds (at `places`: its value or register)."""
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if g != w:
            report.problems.append(
                f"output {k} ({places[k]}) holds {show_goal(g, channels)}, but its goal is {show_goal(w, channels)}"
            )


def _symbolic_registers(
    report: VerificationReport,
    program: Program,
    input_goals: list[Goal],
    output_goals: list[Goal],
    values: dict[int, Goal],
    channels: int,
) -> None:
    """Run every macro's micro-ops on goals in the register file; name the first lost value."""
    last = program.last_uses()
    define = {v: -1 for v, _ in program.inputs} | {
        r: i for i, ins in enumerate(program.instrs) for r in ins.results
    }
    regs = program.registers
    initial = {r: _garbage(r) for r in {*regs.values(), NEWS}}

    order = {v: n for n, v in enumerate(define)}
    live = {v for v, when in define.items() if when < 0}  # defined, and read at or after this instruction

    def check(i: int, instr: Instr, state) -> None:
        live.update(instr.results)
        for v in sorted(live, key=order.__getitem__):
            if (last.get(v, define[v]) > i or v in instr.results) and state.get(regs[v]) != values[v]:
                roles = instr_registers(instr, MACROS[instr.macro], regs)
                call = MACROS[instr.macro].sdk_call(roles, instr.directions)
                raise _Lost(
                    f"after instruction {i} `{describe(instr)}` ({call}), register {regs[v]} should hold %{v} = "
                    f"{show_goal(values[v], channels)} but holds {show_goal(state.get(regs[v], Goal()), channels)}"
                )
        live.difference_update([v for v in live if last.get(v, define[v]) <= i])

    try:
        state = run_registers(program, input_goals, GOAL_ALGEBRA, initial, on_instr=check)
    except (_Lost, SimulationError) as e:
        report.problems.append(f"registers: {e}")
        return
    outputs = [reg for _, reg in program.outputs]
    _compare_goals(report, [state[reg] for reg in outputs], output_goals, outputs, channels)
    if report.ok:
        report.checks.append(
            "symbolic: the register-level micro-ops keep every live value and end with the goals"
        )


class _Lost(Exception):
    """A live value was overwritten: stops the register-level run at the instruction that did it."""


def verify_bus(ops: Sequence[MicroOp], filter: Filter, **options: int | None) -> VerificationReport:
    """Check a bus micro-op program: with `filter`'s inputs in their registers, every output register
    ends with its kernel's goal (`verify_kernels` of one kernel, with its options)."""
    return verify_kernels([ops], filter, **options)  # type: ignore[arg-type]


def verify_kernels(
    parts: Sequence[Sequence[MicroOp]],
    filter: Filter,
    *,
    images: int = 2,
    size: int = 64,
    seed: int = 0,
    macros: int | None = None,
) -> VerificationReport:
    """`verify_bus` of a program run as a sequence of kernels (`cain.backend.split`), as the device runs
    them: registers keep their values between kernels, NEWS holds garbage at the start of each."""
    name, depth = filter.name, filter.depth
    inputs = [r for _, r in filter.inputs]
    outputs = [k.register for k in filter.kernels]
    input_goals, output_goals = filter.initial_goals(), filter.final_goals()
    ops = [op for part in parts for op in part]
    report = VerificationReport(name, macros if macros is not None else 0, len(ops))
    channels = len(input_goals)
    regs = {*inputs, *outputs, *bus_registers(ops)}
    initial: dict[str, object] = {r: _garbage(r) for r in {*regs, NEWS}}
    initial.update(zip(inputs, input_goals, strict=True))
    try:
        state = run_kernels(parts, initial, GOAL_ALGEBRA, lambda k: _garbage(f"{NEWS} (at kernel {k + 1})"))
    except SimulationError as e:
        report.problems.append(f"bus: {e}")
        raise VerificationError(report) from None
    _compare_goals(report, [state[reg] for reg in outputs], output_goals, outputs, channels)
    if not report.ok:
        raise VerificationError(report)
    kernels = f" run as {len(parts)} kernels" if len(parts) > 1 else ""
    report.checks.append(
        f"symbolic: the micro-ops{kernels} end with every output register holding exactly its goal"
    )
    margin = bus_reach(ops, outputs)
    size = max(size, 2 * margin + 8)
    pictures = random_images(channels, images, size, seed)
    algebra = numeric_algebra(pictures.shape[1:])
    numeric = garbage_registers(regs, pictures.shape[1:], seed + 1)
    numeric.update(zip(inputs, [correlate(pictures, g, depth) for g in input_goals], strict=True))
    run_kernels(
        parts, numeric, algebra, lambda k: garbage_registers((), pictures.shape[1:], seed + 1 + k)[NEWS]
    )
    expected = [correlate(pictures, g, depth) for g in output_goals]
    _compare_numeric(report, "numeric", [numeric[r] for r in outputs], expected, outputs, margin)
    if not report.ok:
        raise VerificationError(report)
    report.checks.append(
        f"numeric: {images} random {size}x{size} image(s), margin {margin}: max |error| {report.max_error:.3g}"
    )
    return report


def _compare_numeric(
    report: VerificationReport, level: str, got: list, expected: list, outputs: Sequence[str], margin: int
) -> None:
    """Compare simulated outputs with the direct correlations on the pixels at least `margin` from the
    edges; note the largest difference and a problem for each output that is off by more than rounding."""
    inner = (..., slice(margin, -margin or None), slice(margin, -margin or None))
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        err = float(np.max(np.abs(g[inner] - e[inner])))
        report.max_error = max(report.max_error, err)
        if err > 1e-6 * (1 + float(np.max(np.abs(e[inner])))):
            report.problems.append(
                f"{level}: output {k} ({outputs[k]}) differs from the direct correlation by up to {err:.4g}"
            )


def verify_for_filter(program: Program, filter: Filter, **options: int) -> VerificationReport:
    """`verify_program` against a `cain.model.filter.Filter`'s initial and final goals and depth."""
    return verify_program(program, filter.initial_goals(), filter.final_goals(), filter.depth, **options)


def verify_kernel(kernel: KernelOp, **options: int) -> VerificationReport:
    """Check a `scamp5.kernel` op against the filter in its header, at macro or at bus level (and
    `remember` what was verified)."""
    filt = kernel.filter
    if kernel.is_bus_level:
        ops = micro_ops_of(kernel)
        report = verify_bus(ops, filt, macros=kernel.counts.get("macros"), **options)
        remember_bus(filt, ops)
        return report
    program = program_from_kernel(kernel)
    report = verify_for_filter(program, filt, **options)
    if program.registers:
        remember(filt, program)
    return report


def ensure_verified(kernel: KernelOp, **options: int) -> None:
    """`verify_kernel`, unless this process has verified the kernel's very program already."""
    if not is_verified(kernel):
        verify_kernel(kernel, **options)


# -- what this process has verified ----------------------------------------------------------------

_VERIFIED: dict[tuple[Filter, tuple], Program] = {}
"""(filter, content of a program) -> the verified allocated program that stands for it: itself, or the
allocation of an SSA plan (`remember`)."""
_VERIFIED_BUS: set[tuple[Filter, tuple[MicroOp, ...]]] = set()
"""(filter, micro-ops) of bus-level programs verified as such."""
REMEMBERED = 64
"""Programs of each table kept (a batch compiles many filters in one process)."""


def _content(program: Program) -> tuple:
    """The program with its values numbered in order of definition, as `program_from_kernel` reads them:
    equal for a program and its kernel read back, whatever numbers the program used."""
    number: dict[int, int] = {}
    for v in (*(v for v, _ in program.inputs), *(r for i in program.instrs for r in i.results)):
        number[v] = len(number)
    instrs = tuple(
        (
            i.macro,
            tuple(map(number.get, i.results)),
            tuple(map(number.get, i.operands)),
            i.directions,
            i.scratch,
        )
        for i in program.instrs
    )
    return (
        tuple((number[v], r) for v, r in program.inputs),
        instrs,
        tuple((number[v], r) for v, r in program.outputs),
        tuple(sorted((number[v], r) for v, r in program.registers.items() if v in number)),
    )


def remember(filter: Filter, program: Program, plan: Program | None = None) -> None:
    """Note that the allocated `program` has been verified to compute `filter`, and that it is the
    allocation of the SSA `plan` on `filter.registers` (when given)."""
    if len(_VERIFIED) >= REMEMBERED:
        _VERIFIED.clear()
    _VERIFIED[filter, _content(program)] = program
    if plan is not None:
        _VERIFIED[filter, _content(plan)] = program


def remember_bus(filter: Filter, ops: Sequence[MicroOp]) -> None:
    """Note that the micro-ops `ops` have been verified to compute `filter`."""
    if len(_VERIFIED_BUS) >= REMEMBERED:
        _VERIFIED_BUS.clear()
    _VERIFIED_BUS.add((filter, tuple(ops)))


def allocation_of(filter: Filter, plan: Program) -> Program | None:
    """The verified allocation of the SSA `plan` on `filter.registers`, if this process made one."""
    return _VERIFIED.get((filter, _content(plan)))


def is_verified(kernel: KernelOp) -> bool:
    """Whether this process has verified the program `kernel` holds: at bus level, its micro-ops as such
    or as the expansion of a verified allocated program."""
    filt = kernel.filter
    if not kernel.is_bus_level:
        return kernel.is_allocated and (filt, _content(program_from_kernel(kernel))) in _VERIFIED
    ops = tuple(micro_ops_of(kernel))
    if (filt, ops) in _VERIFIED_BUS:
        return True
    expanded = (p for (f, _), p in _VERIFIED.items() if f == filt and p.registers)
    if any(tuple(expansion(p)) == ops for p in expanded):
        remember_bus(filt, ops)
        return True
    return False
