"""Atoms and goals: the paper's representation of kernels (section 3.1).

An atom `(x, y, z)` is channel `z` of the input read at PE offset `(x, y)` (+x east, +y north).
A goal is a multiset of signed atoms, stored as a sorted tuple of `(atom, count)` pairs with non-zero
integer counts; it stands for the kernel scaled by `2^d`. Goals are immutable and hashable, so they can
key dictionaries and live in goal-bags (the search keeps its own compact form: cain/search/goals.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import TypeVar

Atom = tuple[int, int, int]
T = TypeVar("T")
Offset = tuple[int, int]


class Goal:
    """A multiset of signed atoms: `{atom: count}` with integer, non-zero counts."""

    __slots__ = ("_hash", "items")

    items: tuple[tuple[Atom, int], ...]

    def __init__(self, counts: Mapping[Atom, int] | Iterable[tuple[Atom, int]] = ()):
        pairs = counts.items() if isinstance(counts, Mapping) else counts
        merged: dict[Atom, int] = {}
        for atom, count in pairs:
            merged[atom] = merged.get(atom, 0) + count
        self.items = tuple(sorted((a, c) for a, c in merged.items() if c))
        self._hash = hash(self.items)

    @classmethod
    def _of(cls, items: tuple[tuple[Atom, int], ...]) -> Goal:
        """The goal of `items`, already sorted, merged and non-zero (what moving, negating and scaling
        keep), without sorting again: the symbolic checks make millions."""
        goal = cls.__new__(cls)
        goal.items = items
        goal._hash = hash(items)
        return goal

    # -- construction ---------------------------------------------------------------------------
    @staticmethod
    def identity(scale: int, channel: int = 0) -> Goal:
        """The initial goal of a channel: `scale` (= 2^d) positive atoms at the origin."""
        return Goal({(0, 0, channel): scale})

    @staticmethod
    def from_matrices(matrices: Sequence[Sequence[Sequence[int]]]) -> Goal:
        """A goal from one integer matrix per channel, row 0 to the north, centre at offset (0, 0).

        For an even size the centre is the element at index `size // 2` (below and right of the middle).
        """
        return Goal({atom: int(value) for atom, value in centred(matrices) if value})

    # -- queries --------------------------------------------------------------------------------
    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Goal) and self.items == other.items

    def __lt__(self, other: Goal) -> bool:
        return self.items < other.items

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Goal({dict(self.items)!r})"

    def as_dict(self) -> dict[Atom, int]:
        return dict(self.items)

    def count(self, atom: Atom) -> int:
        return dict(self.items).get(atom, 0)

    @property
    def total(self) -> int:
        """The number of atoms, `sum |count|`."""
        return sum(abs(c) for _, c in self.items)

    @property
    def channels(self) -> int:
        """One more than the largest channel index used (0 for the zero goal)."""
        return max((a[2] for a, _ in self.items), default=-1) + 1

    def bounds(self) -> tuple[int, int, int, int]:
        """`(min_x, max_x, min_y, max_y)` over the atoms; all zero for the zero goal."""
        if not self.items:
            return (0, 0, 0, 0)
        xs = [a[0] for a, _ in self.items]
        ys = [a[1] for a, _ in self.items]
        return (min(xs), max(xs), min(ys), max(ys))

    # -- arithmetic (exact) ---------------------------------------------------------------------
    def __add__(self, other: Goal) -> Goal:
        if not other.items:
            return self
        if not self.items:
            return other
        merged = dict(self.items)
        cancelled = False
        for atom, count in other.items:
            total = merged[atom] = merged.get(atom, 0) + count
            cancelled = cancelled or not total
        items = sorted(merged.items())
        return Goal._of(tuple(item for item in items if item[1]) if cancelled else tuple(items))

    def __sub__(self, other: Goal) -> Goal:
        return self + -other

    def __neg__(self) -> Goal:
        return Goal._of(tuple((a, -c) for a, c in self.items))

    def scaled(self, factor: int) -> Goal:
        return Goal._of(tuple((a, c * factor) for a, c in self.items)) if factor else Goal()

    def halved(self) -> Goal | None:
        """The goal with every count halved, or None if some count is odd."""
        if any(c % 2 for _, c in self.items):
            return None
        return Goal._of(tuple((a, c // 2) for a, c in self.items))

    def shifted(self, offset: Offset) -> Goal:
        """Every atom moved by `offset`: what a register holding this goal holds after it is read
        from the neighbour in direction `offset` (reference/scamp5.md section 3)."""
        dx, dy = offset
        return Goal._of(tuple(((x + dx, y + dy, z), c) for (x, y, z), c in self.items))

    # -- display --------------------------------------------------------------------------------
    def matrices(self, channels: int | None = None, radius: int | None = None) -> list[list[list[int]]]:
        """One square integer matrix per channel, row 0 to the north, centred on offset (0, 0)."""
        channels = self.channels if channels is None else channels
        if radius is None:
            x0, x1, y0, y1 = self.bounds()
            radius = max(abs(x0), abs(x1), abs(y0), abs(y1))
        counts = self.as_dict()
        return [
            [[counts.get((x, y, z), 0) for x in range(-radius, radius + 1)] for y in range(radius, -radius - 1, -1)]
            for z in range(channels)
        ]


def centred(matrices: Sequence[Sequence[Sequence[T]]]) -> Iterator[tuple[Atom, T]]:
    """Every entry of one matrix per channel with its atom: row 0 to the north, centre at index `size // 2`
    (below and right of the middle for an even size)."""
    for z, matrix in enumerate(matrices):
        cy, cx = len(matrix) // 2, len(matrix[0]) // 2 if matrix else 0
        for r, row in enumerate(matrix):
            for c, value in enumerate(row):
                yield (c - cx, cy - r, z), value


def exact_weights(goal: Goal, depth: int) -> dict[Atom, Fraction]:
    """The kernel weights a goal stands for at approximation depth `depth`."""
    return {a: Fraction(c, 2**depth) for a, c in goal.items}
