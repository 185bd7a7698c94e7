"""Register allocation for straight-line SCAMP-5 macro programs (no spilling exists on the device).

A linear scan over the program: inputs start in the registers they arrive in; each output's register
is reserved from the point its value is computed, so the value is computed straight into it when
possible; results reuse a dying operand's register where the bus rule allows (`add(A, A, B)`); the
division family (`div`, `diva`, `div4`: the same meaning in different register forms) is given the form
and scratch registers that fit. Every register constraint comes from `cain.model.isa` (`distinct_roles`,
`tied`, `scratch`). Only when an output cannot be computed into its register (or two outputs hold one
value, or an instruction names one value twice where the bus rule needs two registers) is a `mov`
inserted, which changes the macro count.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from cain.diagnostics import CainError
from cain.model.isa import DEFAULT_REGISTERS, MACROS
from cain.model.program import Instr, Program


class RegisterAllocationError(CainError):
    """The program needs more registers than the register file has at some instruction."""


@cache
def _distinct(name: str) -> frozenset[tuple[str, str]]:
    """Role pairs of macro `name` that must be different registers, both orders."""
    pairs = MACROS[name].distinct_roles
    return frozenset(pairs) | frozenset((b, a) for a, b in pairs)


@cache
def _forms(name: str) -> tuple[str, ...]:
    """Macros with the same meaning, operands and instruction sets as `name` (e.g. div, diva, div4)."""
    m = MACROS[name]
    key = (m.terms, m.scale, m.directions, len(m.operands), len(m.results), m.sets)
    return tuple(
        n
        for n, o in MACROS.items()
        if (o.terms, o.scale, o.directions, len(o.operands), len(o.results), o.sets) == key
    )


def describe(instr: Instr) -> str:
    """An instruction in the scamp5 dialect's spelling, e.g. `%4 = add %2, %3`."""
    ops = ", ".join(f"%{o}" for o in instr.operands)
    dirs = " ".join(instr.directions)
    results = ", ".join(f"%{r}" for r in instr.results)
    return f"{results} = {instr.macro} {ops}{' ' if ops and dirs else ''}{dirs}".rstrip()


def _separate_operands(program: Program, next_value: int) -> tuple[list[Instr], int]:
    """Copy a value used for two operands that the bus rule needs in different registers."""
    instrs: list[Instr] = []
    for instr in program.instrs:
        macro = MACROS[instr.macro]
        distinct = _distinct(instr.macro)
        operands = list(instr.operands)
        for j in range(len(operands)):
            for k in range(j):
                if operands[j] == operands[k] and (macro.operands[k], macro.operands[j]) in distinct:
                    instrs.append(Instr("mov", (next_value,), (operands[j],)))
                    operands[j] = next_value
                    next_value += 1
        instrs.append(
            instr
            if tuple(operands) == instr.operands
            else Instr(instr.macro, instr.results, tuple(operands), instr.directions, instr.scratch)
        )
    return instrs, next_value


def allocate(program: Program, registers: Sequence[str] | None = None) -> Program:
    """A copy of `program` with every value given a register from `registers` (default A..F).

    Raises RegisterAllocationError naming the instruction where too many values are live. When the
    first scan needs moves to place outputs (or fails), scans with other register preference orders
    are tried and the one with fewest moves is kept.
    """
    regs = tuple(registers or DEFAULT_REGISTERS)
    _check_pins(program, regs)
    values = [v for v, _ in program.inputs] + [r for i in program.instrs for r in i.results]
    next_value = max(values, default=-1) + 1
    instrs, next_value = _separate_operands(program, next_value)

    # liveness: each value's last use (`Program.last_uses`), or for one never read its definition (-1: input)
    define: dict[int, int] = {v: -1 for v, _ in program.inputs}
    for i, instr in enumerate(instrs):
        for o in instr.operands:
            if o not in define:
                raise CainError(
                    f"{program.name}: instruction {i} `{describe(instr)}` reads %{o}, which is not defined before it"
                )
        define.update(dict.fromkeys(instr.results, i))
    for v, _ in program.outputs:
        if v not in define:
            raise CainError(f"{program.name}: output %{v} is not defined")
    last = define | Program(program.name, program.inputs, instrs, program.outputs).last_uses()

    # each output's register is reserved for its value from its definition on
    want: dict[int, str] = {}
    reserved: dict[str, tuple[int, int]] = {}
    for v, reg in program.outputs:
        if v not in want:
            want[v] = reg
            reserved[reg] = (v, define[v])

    first_error: RegisterAllocationError | None = None
    best: tuple[int, Program] | None = None
    for preference in _preferences(regs):
        try:
            result = _scan(program, regs, instrs, last, want, reserved, next_value, preference)
        except RegisterAllocationError as e:
            first_error = first_error or e
            continue
        moves = len(result.instrs) - len(instrs)
        if best is None or moves < best[0]:
            best = (moves, result)
        if moves == 0:
            break
    if best is None:
        assert first_error is not None
        raise first_error
    return best[1]


def _preferences(regs: tuple[str, ...]):
    """Register preference orders to try: the file's own order, then its rotations and reversals."""
    yield regs
    for k in range(1, len(regs)):
        yield regs[k:] + regs[:k]
    back = regs[::-1]
    for k in range(len(regs)):
        yield back[k:] + back[:k]


def _scan(
    program: Program,
    regs: tuple[str, ...],
    instrs: list[Instr],
    last: dict[int, int],
    want: dict[int, str],
    reserved: dict[str, tuple[int, int]],
    next_value: int,
    preference: tuple[str, ...],
) -> Program:
    """One linear scan over a prepared program (`instrs`, liveness `last`, output registers `want`,
    `reserved`), preferring registers in the order `preference`."""
    order = {r: k for k, r in enumerate(preference)}
    reg_of: dict[int, str] = {}
    holder: dict[str, int | None] = dict.fromkeys(regs)
    for v, reg in program.inputs:
        reg_of[v] = reg
        if last[v] >= 0:
            holder[reg] = v

    def blocked(reg: str, v: int, i: int) -> bool:
        """Would `v` in `reg` keep `reg` from the output value reserved to it?"""
        w = reserved.get(reg)
        return w is not None and w[0] != v and w[1] > i and last[v] > w[1]

    def rank(reg: str, v: int, i: int, in_place: set[str]) -> tuple[int, int]:
        """How good `reg` is for `v` (lower is better): its output register, a dying operand's, a free
        unreserved one, a reserved one, one that would block an output; ties by `preference`."""
        if want.get(v) == reg:
            return (0, order[reg])
        if blocked(reg, v, i):
            return (4, order[reg])
        if reg in in_place:
            return (1, order[reg])
        return (2 if reg not in reserved else 3, order[reg])

    out: list[Instr] = []
    for i, instr in enumerate(instrs):
        dying = {o for o in instr.operands if last[o] == i}
        free = [r for r in preference if holder[r] is None]
        choice = _choose(instr, i, dying, free, reg_of, want, rank)
        if choice is None:
            raise _pressure_error(program, instr, i, regs, holder, last)
        macro_name, result_regs, scratch = choice
        for o in dying:
            holder[reg_of[o]] = None
        for v, reg in zip(instr.results, result_regs, strict=True):
            reg_of[v] = reg
            holder[reg] = v if last[v] > i else None
        out.append(Instr(macro_name, instr.results, instr.operands, instr.directions, tuple(scratch)))

    outputs = _place_outputs(program, regs, out, reg_of, next_value)
    return Program(program.name, list(program.inputs), out, outputs, reg_of)


@cache
def _shape(name: str) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], int]:
    """Per result: the operand indices it must not share a register with, and the operand index it
    is tied to (-1 if none); and the number of scratch registers."""
    m = MACROS[name]
    distinct = _distinct(name)
    tied = dict(m.tied)
    conflicts = tuple(
        tuple(k for k, x in enumerate(m.operands) if (role, x) in distinct) for role in m.results
    )
    tied_to = tuple(m.operands.index(tied[role]) if role in tied else -1 for role in m.results)
    return conflicts, tied_to, len(m.scratch)


def _choose(instr, i, dying, free, reg_of, want, rank):
    """(macro form, result registers, scratch registers) for one instruction, or None if none fits."""
    operand_regs = [reg_of[o] for o in instr.operands]
    in_place = {r for r, o in zip(operand_regs, instr.operands, strict=True) if o in dying}
    for name in _form_order(instr, dying, reg_of, want):
        conflicts, tied_to, scratch = _shape(name)
        if any(t >= 0 and instr.operands[t] not in dying for t in tied_to):
            continue  # the macro overwrites an operand that is still needed
        result_regs: list[str] = []
        for j, v in enumerate(instr.results):
            if tied_to[j] >= 0:
                reg = operand_regs[tied_to[j]]
            else:
                banned = {operand_regs[k] for k in conflicts[j]}
                banned.update(result_regs)
                candidates = [r for r in free if r not in banned] + [r for r in in_place if r not in banned]
                if not candidates:
                    break
                reg = (
                    candidates[0]
                    if len(candidates) == 1
                    else min(candidates, key=lambda r: rank(r, v, i, in_place))
                )
            result_regs.append(reg)
        else:
            if not scratch:
                return name, result_regs, []
            spare = [r for r in free if r not in result_regs and r not in operand_regs]
            if len(spare) < scratch:
                continue
            return name, result_regs, spare[:scratch]
    return None


def _form_order(instr: Instr, dying: set[int], reg_of: dict[int, str], want: dict[int, str]) -> list[str]:
    """The forms of an instruction to try, best first: the in-place form when the result wants the
    dying operand's register, then the forms that keep operands, fewest scratch registers first."""
    forms = _forms(instr.macro)
    if len(forms) == 1:
        return [instr.macro]

    def key(name: str) -> tuple[int, int]:
        macro = MACROS[name]
        wants_in_place = bool(macro.tied) and any(
            want.get(r) == reg_of.get(instr.operands[macro.operands.index(x)])
            for r, (_, x) in zip(instr.results, macro.tied, strict=False)
        )
        return (0 if wants_in_place else 1 if not macro.tied else 2, len(macro.scratch))

    return sorted(forms, key=key)


def _pressure_error(program, instr, i, regs, holder, last) -> RegisterAllocationError:
    """The out-of-registers error at instruction `i`: what is live across it and what it needs."""
    live = sorted(v for v in holder.values() if v is not None and last[v] > i)
    free = [r for r in regs if holder[r] is None]
    dying = {k for k, o in enumerate(instr.operands) if last[o] == i}

    def need(name: str) -> int:
        conflicts, tied_to, scratch = _shape(name)
        in_place = any(t >= 0 or set(dying) - set(c) for c, t in zip(conflicts, tied_to, strict=True))
        return len(tied_to) - (1 if in_place else 0) + scratch

    needed = min(need(f) for f in _forms(instr.macro))
    across = f" ({', '.join(f'%{v}' for v in live)})" if live else ""
    return RegisterAllocationError(
        f"{program.name}: out of registers at instruction {i} `{describe(instr)}`: {len(live)} value(s) stay "
        f"live across it{across}; it needs {needed} register(s) besides its operands' for its results and "
        f"scratch, but only {len(free)} of the {len(regs)} registers ({', '.join(regs)}) are free; use more "
        f"registers or a plan with fewer live values"
    )


def _check_pins(program: Program, regs: tuple[str, ...]) -> None:
    """Inputs and outputs must be pinned to distinct registers of the file."""
    for kind, pins in (("input", program.inputs), ("output", program.outputs)):
        seen: set[str] = set()
        for v, reg in pins:
            if reg not in regs:
                raise RegisterAllocationError(
                    f"{program.name}: {kind} %{v} is pinned to register {reg}, which is not in the register file "
                    f"({', '.join(regs)})"
                )
            if reg in seen:
                raise RegisterAllocationError(f"{program.name}: two {kind}s are pinned to register {reg}")
            seen.add(reg)


def _place_outputs(program, regs, out, reg_of, next_value) -> list[tuple[int, str]]:
    """Move outputs that did not end in their registers there, as a parallel copy (appends `mov`s)."""
    final = {reg: v for v, reg in program.outputs}
    pending = {reg: v for reg, v in final.items() if reg_of[v] != reg}
    outputs_to = dict(final)
    copies: dict[int, int] = {}  # value -> its copy in a temporary register
    while pending:
        sources = {reg_of[copies.get(v, v)] for v in pending.values()}
        ready = [reg for reg in pending if reg not in sources]
        if ready:
            reg = min(ready, key=regs.index)
            v = pending.pop(reg)
            src = copies.get(v, v)
            out.append(Instr("mov", (next_value,), (src,)))
            reg_of[next_value] = reg
            outputs_to[reg] = next_value
            next_value += 1
            continue
        # a cycle: copy one source to a register that no output needs and no move still reads
        busy = set(final) | sources
        temps = [r for r in regs if r not in busy]
        if not temps:
            raise RegisterAllocationError(
                f"{program.name}: the outputs must swap registers and no register is free for the swap"
            )
        v = pending[min(pending, key=regs.index)]
        out.append(Instr("mov", (next_value,), (copies.get(v, v),)))
        reg_of[next_value] = temps[0]
        copies[v] = next_value
        next_value += 1
    return [(outputs_to[reg], reg) for _, reg in program.outputs]
