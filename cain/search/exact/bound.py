"""Lower bounds on program length: how many macros any program computing a goal-bag needs, at least.

Every bound here holds for every program of the instruction set, including programs whose additions
cancel atoms (so it also bounds the goal model's programs, which never cancel). Each counts
instructions of kinds that cannot stand in for one another:

- **goals**: one instruction per distinct goal of the bag that is not an input, one more per second
  register holding a goal (a copy), except that one `res2` zeroes two registers;
- **divisions**: the counts of a value only lose a factor of two by a division (additions, moves and
  negation never lower the largest power of two dividing every count of the values alive), so every
  power `2^j` between the smallest of the bag and the inputs' smallest (`2^d` for the filter's input)
  is made first by its own division;
  a level no goal of the bag has is made by a division that is none of the bag's goals;
- **shifts**: an instruction reading from neighbours moves atoms by at most its number of directions,
  so the bounding box of all atoms ever computed (it holds the inputs') grows in width plus height by
  at most that much per instruction; the bag's box needs that many shifting instructions;
- **combinations**: an instruction of `k` operands has at most `k` times the atom positions of its
  largest operand, and at most `k` times its largest total of absolute counts (cancelling only lowers
  it; moves and negation keep it, divisions halve it), so a goal of `p` positions and total `t` needs
  `log_k (p / q)` and `log_k (t / T)` combining instructions after one another, where the largest input
  has `q` positions and total `T` (1 and `2^d` for the filter's input).

Divisions never shift or combine, so they add to the shifts and combinations; shifts and combinations
add up only when no instruction does both (the basic set), and otherwise the larger counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from cain.model.filter import Filter
from cain.model.isa import Macro, instruction_set
from cain.search.goals.atoms import Atoms, from_goal, total


@dataclass(frozen=True)
class Kinds:
    """What the bounds need to know of an instruction set: which kinds of instruction it has."""

    shift: int
    """Most directions one pure move reads through (0: no move)."""
    combine_shift: int
    """Most directions an instruction that also combines operands reads through (0: none does both)."""
    fan_in: int
    """Most operands one instruction adds or subtracts."""
    res2: bool
    """Whether one instruction zeroes two registers."""

    @staticmethod
    def of(macros: dict[str, Macro]) -> Kinds:
        moves = [m.directions for m in macros.values() if len(m.terms) == 1]
        both = [m.directions for m in macros.values() if len(m.terms) >= 2]
        return Kinds(
            shift=max(moves, default=0),
            combine_shift=max(both, default=0),
            fan_in=max((len(m.terms) for m in macros.values()), default=1),
            res2=any(m.scale == 0 and len(m.results) == 2 for m in macros.values()),
        )


def valuation(goal: Atoms) -> int | None:
    """The largest `j` with `2^j` dividing every count (None for the zero goal)."""
    g = 0
    for a in goal:
        g |= abs(a[3])
    return (g & -g).bit_length() - 1 if g else None


class Summary(NamedTuple):
    """What the bounds read of one goal: its `valuation`, the box of its atoms (min x, max x, min y, max y;
    None for the zero goal), its positions and its total of absolute counts."""

    valuation: int | None
    box: tuple[int, int, int, int] | None
    positions: int
    mass: int


def summary(goal: Atoms) -> Summary:
    if not goal:
        return Summary(None, None, 0, 0)
    xs = [a[0] for a in goal]
    ys = [a[1] for a in goal]
    return Summary(valuation(goal), (min(xs), max(xs), min(ys), max(ys)), len(goal), total(goal))


def _goal_count(bag: list[Atoms], inputs: set[Atoms], kinds: Kinds) -> int:
    """One instruction per distinct non-input goal and per extra copy (`res2` zeroes two at once)."""
    n = 0
    counts: dict[Atoms, int] = {}
    for g in bag:
        counts[g] = counts.get(g, 0) + 1
    for g, c in counts.items():
        if not g and kinds.res2:
            n += (c + 1) // 2
        else:
            n += c - (1 if g in inputs else 0)
    return n


def _missing_levels(bag: list[Summary], inputs: list[Summary]) -> tuple[int, int]:
    """(levels 2^j below the inputs' lowest that some goal needs, those of them no goal of the bag has);
    `bag`: its goals that are not inputs."""
    top = min((s.valuation for s in inputs if s.valuation is not None), default=0)
    levels = {s.valuation for s in bag if s.valuation is not None}
    low = min(levels, default=top)
    needed = range(low, top)
    return len(needed), sum(1 for j in needed if j not in levels)


def _extent(goals: list[Summary]) -> int:
    """Width plus height of the box of the goals' atoms (0 for none)."""
    boxes = [s.box for s in goals if s.box is not None]
    if not boxes:
        return 0
    return (
        max(b[1] for b in boxes)
        - min(b[0] for b in boxes)
        + max(b[3] for b in boxes)
        - min(b[2] for b in boxes)
    )


def bag_bound(bag: list[Atoms], inputs: list[Atoms], kinds: Kinds) -> int:
    """Instructions any program needs to hold every goal of `bag` at once, starting from `inputs` (any
    values: a window of a program starts from what the instructions before it left)."""
    inputs_set = set(inputs)
    return summary_bound(
        _goal_count(bag, inputs_set, kinds),
        [summary(g) for g in bag],
        [summary(g) for g in bag if g not in inputs_set],
        [summary(g) for g in inputs],
        kinds,
    )


def summary_bound(
    goals: int, bag: list[Summary], made: list[Summary], inputs: list[Summary], kinds: Kinds
) -> int:
    """`bag_bound` from the bag's goal count (`_goal_count`) and the summaries of its goals, of those of
    them that are not inputs (`made`), and of the inputs."""
    divisions, missing = _missing_levels(made, inputs)
    goals += missing
    width = _extent(bag + inputs) - _extent(inputs)
    positions = max((s.positions for s in bag), default=1)
    spread = max((s.positions for s in inputs), default=1)
    combines = (
        math.ceil(math.log(positions / spread, kinds.fan_in) - 1e-9)
        if positions > spread and kinds.fan_in > 1
        else 0
    )
    if kinds.fan_in > 1:
        mass = max((s.mass for s in bag), default=0)
        reach = max((s.mass for s in inputs), default=1)
        grown = 0
        while reach < mass:
            reach *= kinds.fan_in
            grown += 1
        combines = max(combines, grown)
    if kinds.combine_shift:
        shifts = -(-width // max(kinds.shift, kinds.combine_shift))
        work = max(shifts, combines)
    else:
        shifts = -(-width // kinds.shift) if kinds.shift else 0
        work = shifts + combines
    return max(goals, divisions + work)


def filter_bound(filt: Filter, instruction_set_name: str) -> int:
    """A lower bound on the macros of every program computing `filt`'s kernels in the given set."""
    kinds = Kinds.of(instruction_set(instruction_set_name))
    bag = [from_goal(g) for g in filt.final_goals()]
    inputs = [from_goal(g) for g in filt.initial_goals()]
    bound = bag_bound(bag, inputs, kinds)
    # an output that is an input goal but must end in another register is at least one mov
    moved = sum(
        1
        for k in filt.kernels
        if from_goal(k.goal) in inputs and k.register != filt.inputs[inputs.index(from_goal(k.goal))][1]
    )
    return max(bound, moved)
