"""Goals as the search handles them: plain sorted tuples of `(x, y, z, count)`, cheap to hash and shift.

The search must touch millions of goals, so it does not use `cain.model.goal.Goal` (a general, checked value
type) in its inner loop. A goal here is a tuple of atoms with non-zero signed counts, sorted by position;
translating it keeps it sorted. A goal-bag is a sorted tuple of such goals.
"""

from __future__ import annotations

from cain.model.goal import Goal

Atoms = tuple[tuple[int, int, int, int], ...]
AtomsBag = tuple[Atoms, ...]

ZERO: Atoms = ()


def from_goal(goal: Goal) -> Atoms:
    return tuple((x, y, z, c) for (x, y, z), c in goal.items)


def to_goal(goal: Atoms) -> Goal:
    return Goal(((x, y, z), c) for x, y, z, c in goal)


def from_counts(counts: dict[tuple[int, int, int], int]) -> Atoms:
    return tuple(sorted((x, y, z, c) for (x, y, z), c in counts.items() if c))


def counts(goal: Atoms) -> dict[tuple[int, int, int], int]:
    return {(x, y, z): c for x, y, z, c in goal}


def shift(goal: Atoms, dx: int, dy: int) -> Atoms:
    """Every atom moved by `(dx, dy)`."""
    if not dx and not dy:
        return goal
    return tuple([(x + dx, y + dy, z, c) for x, y, z, c in goal])


def neg(goal: Atoms) -> Atoms:
    return tuple([(x, y, z, -c) for x, y, z, c in goal])


def scale(goal: Atoms, k: int) -> Atoms:
    return tuple([(x, y, z, c * k) for x, y, z, c in goal])


def add(a: Atoms, b: Atoms) -> Atoms:
    d = counts(a)
    for x, y, z, c in b:
        d[(x, y, z)] = d.get((x, y, z), 0) + c
    return from_counts(d)


def sub(a: Atoms, b: Atoms) -> Atoms:
    d = counts(a)
    for x, y, z, c in b:
        d[(x, y, z)] = d.get((x, y, z), 0) - c
    return from_counts(d)


def total(goal: Atoms) -> int:
    """The number of atoms."""
    return sum(abs(a[3]) for a in goal)


def pattern(goal: Atoms) -> Atoms:
    """The goal translated so its first atom sits at the origin: equal for goals equal up to translation."""
    if not goal:
        return goal
    x0, y0 = goal[0][0], goal[0][1]
    return shift(goal, -x0, -y0)


def positions(goal: Atoms) -> int:
    """The number of distinct atom positions (x, y, z)."""
    return len(goal)


def contains(big: Atoms, small: Atoms) -> bool:
    """Whether `small` is a sub-multiset of `big`: every atom of `small` is in `big`, same sign, no more."""
    d = counts(big)
    for x, y, z, c in small:
        b = d.get((x, y, z), 0)
        if c > 0:
            if b < c:
                return False
        elif b > c:
            return False
    return True


def less(big: dict[tuple[int, int, int], int], small: Atoms) -> Atoms | None:
    """`big` (as `counts` gives it) less `small` when `small` is a sub-multiset of it (`contains`), else
    None: one goal's counts made once for many candidate parts."""
    d = dict(big)
    for x, y, z, c in small:
        b = d.get((x, y, z), 0)
        if (b < c) if c > 0 else (b > c):
            return None
        d[(x, y, z)] = b - c
    return from_counts(d)


def overlap(a: Atoms, b: Atoms) -> Atoms:
    """The largest common sub-multiset of `a` and `b` (same-sign count-wise minimum)."""
    d = counts(b)
    out = []
    for x, y, z, c in a:
        e = d.get((x, y, z))
        if e is None:
            continue
        if c > 0 and e > 0:
            out.append((x, y, z, min(c, e)))
        elif c < 0 and e < 0:
            out.append((x, y, z, max(c, e)))
    return tuple(out)


def halved(goal: Atoms) -> Atoms | None:
    if any(a[3] & 1 for a in goal):
        return None
    return tuple([(x, y, z, c >> 1) for x, y, z, c in goal])


def bag(goals) -> AtomsBag:
    return tuple(sorted(goals))
