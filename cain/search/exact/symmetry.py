"""The eight symmetries of the square, which the exact searches use to try one of each set of equivalent
goal-bags: the inputs sit at the origin and every direction is available to every move, so a rotated or
mirrored goal-bag needs exactly as many instructions."""

from __future__ import annotations

from cain.search.goals.atoms import Atoms

SYMMETRIES = ((1, 0, 0, 1), (0, -1, 1, 0), (-1, 0, 0, -1), (0, 1, -1, 0),
              (-1, 0, 0, 1), (1, 0, 0, -1), (0, 1, 1, 0), (0, -1, -1, 0))  # fmt: skip
"""The dihedral group of the square as matrices `(a, b, c, d)`: `(x, y) -> (a x + b y, c x + d y)`."""

Symmetry = tuple[int, int, int, int]


def image(s: Symmetry, goal: Atoms) -> Atoms:
    """`goal`'s atoms mapped by symmetry `s`, in canonical (sorted) order."""
    a, b, c, d = s
    return tuple(sorted((a * x + b * y, c * x + d * y, z, n) for x, y, z, n in goal))
