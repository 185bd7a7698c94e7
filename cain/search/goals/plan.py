"""Plans: the direct solver for goal-bags one step from the input, and turning a plan into a `Program`.

A plan is the list of pairs from the final goal-bag down to the initial one (reverse order); the program
runs them backwards, each pair's upper goal becoming a new SSA value computed from its lowers.
"""

from __future__ import annotations

from cain.model.filter import Filter
from cain.model.isa import MACROS
from cain.model.program import Instr, Program
from cain.search.goals.space import Pair, Space


def direct_solution(space: Space, bag: tuple[int, ...]) -> list[Pair] | None:
    """Pairs that take `bag` straight to the initial goal-bag when every goal in it is an input, a
    division chain of an input (`input / 2^j`), its negation or one move of it, zero, or a duplicate;
    None when some goal is not of that form."""
    depth = space.depth
    copies: list[Pair] = []
    derived: list[Pair] = []
    chain: dict[int, int] = {}
    chain_goal: dict[tuple[int, int], int] = {}

    def chain_id(z: int, j: int) -> int:
        key = (z, j)
        g = chain_goal.get(key)
        if g is None:
            g = space.intern(((0, 0, z, 1 << (depth - j)),))
            chain_goal[key] = g
        return g

    seen: set[int] = set()
    for g in bag:
        if g in seen:
            if space.copy is None:
                return None
            copies.append((space.copy.macro, (), g, (g,)))
            continue
        seen.add(g)
        if g in space.input_set:
            continue
        goal = space.goal_of[g]
        if not goal:
            if space.res is None:
                return None
            derived.append((space.res, (), g, ()))
            continue
        if len(goal) != 1:
            return None
        x, y, z, c = goal[0]
        a = abs(c)
        if a & (a - 1) or a > (1 << depth) or z >= len(space.inputs):
            return None
        j = depth - (a.bit_length() - 1)
        if j and space.division is None:
            return None
        if (x, y) == (0, 0) and c > 0:
            chain[z] = max(chain.get(z, 0), j)
            continue
        if (x, y) == (0, 0):
            if space.negate is None:
                return None
            derived.append((space.negate.macro, (), g, (chain_id(z, j),)))
        elif c > 0 and (x, y) in space.shift_offsets:
            form, dirs = space.shift_offsets[(x, y)]
            derived.append((form.macro, dirs, g, (chain_id(z, j),)))
        else:
            return None
        chain[z] = max(chain.get(z, 0), j)
    steps = copies + derived  # (reverse order) a copy runs after its goal is made
    for z, top in sorted(chain.items()):
        for j in range(top, 0, -1):
            steps.append((space.division.macro, (), chain_id(z, j), (chain_id(z, j - 1),)))
    return steps


def to_program(
    space: Space, filt: Filter, plan: list[Pair], name: str | None = None, shared: bool = False
) -> Program:
    """The SSA program of a plan (pairs from the final goal-bag down to the initial one). A goal twice
    among one pair's operands is read from two values, or with `shared` from one where the bus rule lets
    it (`Form.copies`)."""
    forms = {f.macro: f for f in space.unary + space.binary + space.ternary}
    values: dict[int, list[int]] = {}
    inputs = []
    for z, (_, reg) in enumerate(filt.inputs):
        values.setdefault(space.inputs[z], []).append(z)
        inputs.append((z, reg))
    nxt = len(inputs)
    instrs = []
    for macro, dirs, upper, lowers in reversed(plan):
        if shared and macro in forms:
            copies = forms[macro].copies(lowers)
        else:
            copies = tuple(lowers[:i].count(lo) for i, lo in enumerate(lowers))
        operands = tuple(values[lo][-1 - k] for lo, k in zip(lowers, copies, strict=True))
        results = tuple(range(nxt, nxt + len(MACROS[macro].results)))
        nxt += len(results)
        instrs.append(Instr(macro, results, operands, dirs))
        for r in results:
            values.setdefault(upper, []).append(r)
    used: dict[int, int] = {}
    outputs = []
    for k in filt.kernels:
        g = space.id_of[tuple((x, y, z, c) for (x, y, z), c in k.goal.items)]
        n = used.get(g, 0)
        used[g] = n + 1
        outputs.append((values[g][-1 - n], k.register))
    return Program(name or filt.name, inputs, instrs, outputs)


def fold_negations(program: Program, macros: dict) -> Program:
    """`program` with each negation read once, by an `add` or as a `sub`'s subtrahend, folded into that
    reader (`neg(t, a); add(y, b, t)` is `sub(y, b, a)`, `sub(y, b, t)` is `add(y, b, a)`): the goal model
    makes a negated goal a goal of its own, and a plan may reach it by `neg` where one step does both."""
    reads: dict[int, int] = {}
    for instr in program.instrs:
        for o in instr.operands:
            reads[o] = reads.get(o, 0) + 1
    for v, _ in program.outputs:
        reads[v] = reads.get(v, 0) + 2
    negated = {
        i.results[0]: i.operands[0]
        for i in program.instrs
        if i.macro == "neg" and reads.get(i.results[0]) == 1
    }
    folded, instrs = set(), []
    for instr in program.instrs:
        ops = instr.operands
        if instr.macro == "add" and "sub" in macros and any(o in negated for o in ops):
            t = ops[0] if ops[0] in negated else ops[1]
            other = ops[1] if t == ops[0] else ops[0]
            instr = Instr("sub", instr.results, (other, negated[t]))
            folded.add(t)
        elif instr.macro == "sub" and "add" in macros and ops[1] in negated:
            instr = Instr("add", instr.results, (ops[0], negated[ops[1]]))
            folded.add(ops[1])
        instrs.append(instr)
    if not folded:
        return program
    instrs = [i for i in instrs if not (i.macro == "neg" and i.results[0] in folded)]
    return Program(program.name, program.inputs, instrs, program.outputs)
