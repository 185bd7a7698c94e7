"""The accumulator plan of a digital filter: kernel after kernel, a running sum walks over the kernel's
positions and adds the inputs where it stands; the inputs never move.

It is built without search, for when neither a searched plan nor the bit-plane plan fits the DREG file:
across a move only the inputs, the outputs already made and one running sum are live (the bit-plane plan,
`cain.search.constructive.planes`, holds every kernel's sum while a plane walks). A sum costs a move per bit
where a plane costs one, so its programs are longer, and it is tried last.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

from cain.model.filter import Filter
from cain.model.goal import Goal
from cain.model.program import Program
from cain.search.constructive.planes import PlanePlan, steps, walk, walk_planes

ORDERS = 6
"""Kernel orders tried (all of them up to three kernels): the outputs made first are held while the later
sums walk."""


def kernel_orders(kernels: int) -> list[tuple[int, ...]]:
    """The orders of the kernels to make them in: every permutation up to `ORDERS` of them, else as written
    and reversed."""
    every = list(permutations(range(kernels)))
    if len(every) <= ORDERS:
        return every
    ahead = tuple(range(kernels))
    return [ahead, ahead[::-1]]


def accumulator_plan(filt: Filter, order: Sequence[int], walked: tuple[bool, bool] | None = None) -> Program:
    """The plan making the kernels of the integer filter `filt` (`cain.search.digital.integer_filter`, or
    split into its input planes, `cain.search.constructive.planes.split_filter`) in `order`: each kernel's
    sum starts at its position farthest along a walk from the origin (`walk`), adds (or subtracts) each input
    there, doubled to each power of two of the weight's signed digits, and moves one position at a time back
    to the origin, adding the inputs at each position it reaches. Moving a sum by `d` reads it at `d` further
    on, so reaching position `q` from `here` is the walker's move from `q` to `here`. With `walked`
    (`origin_last`, `top_first`, on a split filter), the last kernel is made as the bit-plane plan makes it
    (`walk_planes`): the planes move then, as nothing reads them after."""
    build = PlanePlan(len(filt.inputs))
    goals = filt.final_goals()
    outputs: list[int | None] = [None] * len(goals)
    for k in order[:-1] if walked is not None else order:
        outputs[k] = _sum(build, goals[k])
    if walked is not None:
        outputs[order[-1]] = walk_planes(build, [goals[order[-1]]], *walked)[0]
    return Program(
        f"{filt.name}_accumulators",
        [(z, reg) for z, (_, reg) in enumerate(filt.inputs)],
        build.instrs,
        [
            (build.new("res") if v is None else v, k.register)
            for v, k in zip(outputs, filt.kernels, strict=True)
        ],
    )


def _sum(build: PlanePlan, goal: Goal) -> int | None:
    """The instructions of one kernel's running sum (`accumulator_plan`); its value, None for a zero kernel."""
    positions = {(x, y) for (x, y, _), _ in goal}
    if not positions:
        return None
    path = walk(positions)[::-1]
    if path[-1] != (0, 0):
        path.append((0, 0))
    doubled: list[dict[int, int]] = [{0: z} for z in range(build.inputs)]
    total: int | None = None
    here = path[0]
    for there in path:
        for side in steps(there, here):
            assert total is not None
            total = build.new("movx", (total,), (side,))
        here = there
        for z in range(build.inputs):
            total = build.add_weighted(total, doubled[z], goal.count((*there, z)))
    return total
