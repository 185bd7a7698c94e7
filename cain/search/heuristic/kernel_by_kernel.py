"""A plan for a filter of several kernels found kernel by kernel: each kernel is searched alone (keeping
every input alive in its register for the kernels after it, and leaving alone the registers of the kernels
before it) and the plans are concatenated, to be register-allocated and verified as one program. The last
kernels may be left too few registers for the search; the constructive program
(`cain.search.constructive.program`) computes them in an accumulator alone.

It is the search's first plan for a filter of several kernels: quick, often close to the simultaneous
search's best on unrelated kernels, and a bound that prunes the simultaneous search from the start."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

from cain.diagnostics import CainError
from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal
from cain.model.program import Instr, Program
from cain.search.constructive.program import Bases


def kernel_order(filt: Filter) -> list[int] | None:
    """The kernels in the order they are compiled: those whose register holds an input come last (they
    overwrite it); None when two of them do (the second would need an input the first destroyed)."""
    input_regs = {reg for _, reg in filt.inputs}
    last = [i for i, k in enumerate(filt.kernels) if k.register in input_regs]
    if len(last) > 1:
        return None
    return [i for i in range(len(filt.kernels)) if i not in last] + last


def sub_filter(
    filt: Filter, index: int, keep_inputs: bool, taken: set[str], registers: tuple[str, ...]
) -> Filter:
    """Kernel `index` alone, with the identity of each input as an extra kernel in the input's own
    register when `keep_inputs`, on the registers not `taken` by kernels already compiled."""
    kernel = filt.kernels[index]
    kernels = [kernel]
    if keep_inputs:
        channels = len(filt.inputs)
        for z, (name, reg) in enumerate(filt.inputs):
            weights = tuple(((Fraction(int(c == z)),),) for c in range(channels))
            kernels.append(Kernel(f"{name}.kept", reg, weights, Goal.identity(2**filt.depth, z), Fraction(0)))
    free = tuple(r for r in registers if r not in taken)
    return replace(filt, name=f"{filt.name}.{kernel.name}", kernels=tuple(kernels), registers=free)


Part = tuple[list[int], Program, tuple[int, ...]]
"""Kernel indices, their sub-filter's plan, and the kernels built before that the plan reads as extra
inputs after the filter's own (its bases, kept to its end)."""


def concatenate(filt: Filter, parts: list[Part]) -> Program:
    """One SSA program from `parts`, in order: each plan reads the inputs as the plan before it left them
    (its outputs after its kernels' keep them), and its bases as the kernels they are."""
    channels = len(filt.inputs)
    current = {z: z for z in range(channels)}  # the value holding input z
    instrs: list[Instr] = []
    outputs: dict[int, int] = {}
    nxt = channels
    for indices, plan, bases in parts:
        rename = {v: current[z] for z, (v, _) in enumerate(plan.inputs[:channels])}
        rename.update({v: outputs[j] for (v, _), j in zip(plan.inputs[channels:], bases, strict=True)})
        for ins in plan.instrs:
            for r in ins.results:
                rename[r] = nxt
                nxt += 1
            instrs.append(
                Instr(
                    ins.macro,
                    tuple(rename[r] for r in ins.results),
                    tuple(rename[o] for o in ins.operands),
                    ins.directions,
                )
            )
        for index, (value, _) in zip(indices, plan.outputs, strict=False):
            outputs[index] = rename[value]
        for z, (value, _) in enumerate(plan.outputs[len(indices) : len(plan.outputs) - len(bases)]):
            current[z] = rename[value]
    return Program(
        filt.name,
        [(z, reg) for z, (_, reg) in enumerate(filt.inputs)],
        instrs,
        [(outputs[i], k.register) for i, k in enumerate(filt.kernels)],
    )


def kernel_by_kernel(
    filt: Filter,
    registers: tuple[str, ...],
    search_one: Callable[[Filter], Program | None],
    constructive: Callable[[Filter, Bases], Program | None] | None = None,
) -> Program | None:
    """The concatenated SSA plan (to be register-allocated and verified as one program), or None when no
    split has a plan. The kernels before the split are compiled one at a time: `search_one` returns a
    kernel's SSA plan or None, `constructive` (the constructive program) builds one, and the shorter is kept.
    The kernels from the split on are built together by `constructive` (with the fewest registers: it may
    halve the inputs in place, as no kernel after them needs them). `constructive` is also given the kernels
    built before (register, goal), which its kernels may start from (`cain.search.constructive.program`,
    sharing). Every split is tried; the shortest whole plan wins."""
    order = kernel_order(filt)
    if order is None or len(filt.kernels) < 2:
        return None
    taken: set[str] = set()
    parts: list[Part] = []
    best: tuple[int, list[Part]] | None = None

    def offer(whole: list[Part]) -> None:
        nonlocal best
        length = sum(plan.macros for _, plan, _ in whole)
        if best is None or length < best[0]:
            best = length, whole

    for n, i in enumerate(order):
        rest = order[n:]
        done = tuple(j for indices, _, _ in parts for j in indices)
        bases = tuple((filt.kernels[j].register, filt.kernels[j].goal) for j in done)
        if constructive and len(rest) > 1:
            free = tuple(r for r in registers if r not in taken)
            together = constructive(replace(filt, kernels=tuple(filt.kernels[k] for k in rest), registers=free), bases)
            if together is not None:
                offer([*parts, (rest, together, done)])
        sub = sub_filter(filt, i, n < len(order) - 1, taken, registers)
        reads: tuple[int, ...] = ()
        try:
            plan = search_one(sub)
        except CainError:
            plan = None  # too few registers left for the search of this kernel alone
        built = constructive(sub, bases) if constructive else None
        if built is not None and (plan is None or built.macros < plan.macros):
            plan, reads = built, done  # the search in few registers may do worse than the construction
        if plan is None:
            break
        parts.append(([i], plan, reads))
        taken.add(filt.kernels[i].register)
    else:
        offer(parts)
    return concatenate(filt, best[1]) if best is not None else None
