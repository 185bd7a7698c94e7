"""The bit-plane plan of a digital filter: its inputs split into 1-bit planes, each plane walked once over
the kernels' positions and added into one running sum per kernel, least significant plane first (or most).

It is built without search and keeps few bits live across moves: the planes not yet walked, the walker and
its next position, and the running sums (a sum's low bits are final once the planes below them are added).
When the searched plans need more DREGs than the PE has, it is the program that may still fit.
"""

from __future__ import annotations

from dataclasses import replace

from cain.model.dreg import Encoding
from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal
from cain.model.isa import DIRECTIONS
from cain.model.program import Instr, Program

Plane = tuple[int, int]
"""(input channel, bit)."""


def planes_of(encoding: Encoding) -> list[Plane]:
    """Every input bit plane, in the split filter's channel order (channel by channel, bit 0 first)."""
    return [(z, k) for z, width in enumerate(encoding.input_bits) for k in range(encoding.input_width(z))]


def split_filter(filt: Filter, encoding: Encoding) -> Filter:
    """The integer filter `filt` on its input bit planes: one 1-bit channel per plane, each kernel weighing
    bit k of channel z by 2^k times its weight on z; with its encoding, the planes in the DREGs the
    channels' bits arrive in (the planes are in the channels' bit order, so unpinned inputs take the same
    first free data DREGs)."""
    planes = planes_of(encoding)
    index = {plane: p for p, plane in enumerate(planes)}
    kernels = []
    for kernel in filt.kernels:
        goal = Goal(
            ((x, y, index[z, k]), count << k)
            for (x, y, z), count in kernel.goal
            for k in range(encoding.input_width(z))
        )
        kernels.append(Kernel.exact(kernel.name, kernel.register, goal, 0, len(planes)))
    pinned = encoding.input_dregs
    split = Encoding(
        (1,) * len(planes),
        encoding.bits,
        encoding.dregs,
        None if pinned is None else tuple((pinned[z][k],) for z, k in planes),
    )
    inputs = tuple((f"{filt.inputs[z][0]}.{k}", filt.inputs[z][1]) for z, k in planes)
    return replace(filt, inputs=inputs, kernels=tuple(kernels), depth=0, encoding=split)


def steps(here: tuple[int, int], there: tuple[int, int]) -> list[str]:
    """The moves that take a value read at offset `here` to offset `there`, east-west first."""
    moves = []
    for axis in (0, 1):
        delta = there[axis] - here[axis]
        if delta:
            moves += [next(s for s, step in DIRECTIONS.items() if step[axis] * delta > 0)] * abs(delta)
    return moves


def walk(offsets: set[tuple[int, int]], origin_last: bool = False) -> list[tuple[int, int]]:
    """The offsets in visiting order: from the origin, always the nearest one left (then the least); with
    `origin_last`, the origin (if read, and not alone) after all the others."""
    origin = (0, 0)
    last = origin_last and origin in offsets and len(offsets) > 1
    left, here, order = set(offsets) - ({origin} if last else set()), origin, []
    while left:
        here = min(left, key=lambda o: (abs(o[0] - here[0]) + abs(o[1] - here[1]), o))
        left.remove(here)
        order.append(here)
    return order + [origin] * last


def signed_digits(n: int) -> list[tuple[int, int]]:
    """(sign, power) of the non-adjacent form of `n`: the fewest signed powers of two that sum to it."""
    digits, power = [], 0
    while n:
        if n % 2:
            digit = 2 - n % 4
            digits.append((digit, power))
            n -= digit
        n //= 2
        power += 1
    return digits


class PlanePlan:
    """Builds the plan's instructions on numbered values."""

    def __init__(self, inputs: int):
        self.instrs: list[Instr] = []
        self.inputs = inputs
        self.count = inputs

    def new(self, macro: str, operands: tuple[int, ...] = (), directions: tuple[str, ...] = ()) -> int:
        self.instrs.append(Instr(macro, (self.count,), operands, directions))
        self.count += 1
        return self.count - 1

    def add_weighted(self, total: int | None, doubled: dict[int, int], weight: int) -> int | None:
        """`total` (None: nothing yet) plus `weight` times the value `doubled[0]`, a signed digit at a time:
        each power of two of it doubled once (`doubled` keeps them; doubling is free in DREGs)."""
        for sign, power in signed_digits(weight):
            for j in range(max(doubled) + 1, power + 1):
                doubled[j] = self.new("add", (doubled[j - 1], doubled[j - 1]))
            term = doubled[power]
            if total is None:
                total = term if sign > 0 else self.new("neg", (term,))
            else:
                total = self.new("add" if sign > 0 else "sub", (total, term))
        return total


WALKS = tuple((last, top) for top in (False, True) for last in (False, True))
"""(`origin_last`, `top_first`) of every variant of the bit-plane plan's walks (`plane_plan`)."""


def plane_plan(split: Filter, origin_last: bool = False, top_first: bool = False) -> Program:
    """The bit-plane plan of a split filter (`split_filter`): plane after plane, lowest bit first, a walker
    moves over the positions its channel is read at, and each kernel's running sum adds (or subtracts) the
    walker there, doubled to each power of two of the weight's signed digits (doubling is free in DREGs).
    With `origin_last`, the last plane's walker leaves its plane first and comes back to the origin at the
    end: two moves more, and the plane is read once only, so R12 may hold it (`cain.backend.dreg_alloc.park`)
    and then an output bit. With `top_first`, the planes go highest bit first: the running sums then hold
    no low bits (the high planes' terms have none) while the lower planes wait to be walked."""
    build = PlanePlan(len(split.inputs))
    sums = walk_planes(build, split.final_goals(), origin_last, top_first)
    outputs = [build.new("res") if s is None else s for s in sums]
    return Program(
        f"{split.name}_planes",
        [(p, reg) for p, (_, reg) in enumerate(split.inputs)],
        build.instrs,
        [(v, k.register) for v, k in zip(outputs, split.kernels, strict=True)],
    )


def walk_planes(
    build: PlanePlan, goals: list[Goal], origin_last: bool = False, top_first: bool = False
) -> list[int | None]:
    """The instructions of `plane_plan`'s walks for `goals` (on the split filter's planes, the inputs of
    `build`), added to `build`: each goal's running sum (None for a zero goal)."""
    planes = build.inputs
    sums: list[int | None] = [None] * len(goals)
    order = sorted(range(planes), key=lambda p: (max(c for _, c in _weights(goals, p)).bit_length(), p))
    order = order[::-1] if top_first else order
    for p in order:
        weights = _weights(goals, p)
        walker, here = p, (0, 0)
        for there in walk({(x, y) for (x, y), _ in weights}, origin_last and p == order[-1]):
            for side in steps(here, there):
                walker = build.new("movx", (walker,), (side,))
            here = there
            doubled = {0: walker}
            for k, goal in enumerate(goals):
                sums[k] = build.add_weighted(sums[k], doubled, goal.count((*there, p)))
    return sums


def _weights(goals: list[Goal], plane: int) -> list[tuple[tuple[int, int], int]]:
    """((x, y), |count|) of every kernel's atoms on `plane` (at least one entry, for ordering)."""
    found = [((x, y), abs(c)) for goal in goals for (x, y, z), c in goal if z == plane]
    return found or [((0, 0), 0)]
