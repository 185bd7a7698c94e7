"""Proof that a filter with as many outputs as registers has no program in the goal model.

When every register holds an output at the end, the final goal-bag is full, and the reverse search (the
goal model: an instruction's terms split its result's atoms, never cancel them) must at some point
shrink it. Until then no step may add a goal, so none divides (every division needs a second register
it writes, or scratch) and each step replaces one goal `u` by a single new part of itself:
`u` less some moved, signed copies of other goals of the bag (`u = a + u'`, `a` alive, `u'` in `u`'s
register), or `u` moved or negated. The bag shrinks only when a goal is made from the others alone:
then, after such reductions, it equals a moved, signed copy of another goal, or of one scaled by a power
of two (`divq`). This module explores every bag those reductions reach, with goals taken up to
translation and sign (which allows more than any instruction does), and reports a proof when none of
them has such a goal: then no program of the goal model fits the registers, however long.
"""

from __future__ import annotations

from cain.search.goals.atoms import Atoms, counts, from_counts, neg, pattern

STATES = 50_000
"""Most bags explored before giving up without a proof."""


def _shape(goal: Atoms) -> Atoms:
    """The goal up to translation and sign."""
    return min(pattern(goal), pattern(neg(goal)))


def _scale_free(goal: Atoms) -> Atoms:
    """The goal up to translation, sign and a power-of-two scale."""
    g = 0
    for a in goal:
        g |= abs(a[3])
    k = (g & -g).bit_length() - 1
    return _shape(tuple((x, y, z, c >> k) for x, y, z, c in goal))


def _reductions(u: Atoms, a: Atoms):
    """`u` less one moved, signed copy of `a` that it holds, for every such copy (never the whole of `u`)."""
    have = counts(u)
    x0, y0, z0, c0 = a[0]
    for sign in (1, -1):
        for x, y, z, c in u:
            if z != z0 or c * sign * c0 <= 0:
                continue
            dx, dy = x - x0, y - y0
            left = dict(have)
            for ax, ay, az, ac in a:
                key = (ax + dx, ay + dy, az)
                b = left.get(key, 0)
                want = sign * ac
                if b * want <= 0 or abs(b) < abs(want):
                    break
                left[key] = b - want
            else:
                rest = from_counts(left)
                if rest:
                    yield _shape(rest)


def full_bag_refuted(final: list[Atoms], inputs: int, registers: int, limit: int = STATES) -> bool:
    """True when no program of the goal model computes the `final` goals from `inputs` input goals in
    `registers` registers, proven as the module says; False when the bag is not full, need not shrink
    (as many inputs as registers), or a reachable bag could shrink (or past `limit` bags)."""
    if len(final) != registers or inputs >= registers:
        return False
    start = tuple(sorted(_shape(g) for g in final))
    seen = {start}
    stack = [start]
    while stack:
        bag = stack.pop()
        free = [_scale_free(g) for g in bag]
        if len(set(free)) < len(free):
            return False  # a goal is a moved, signed, scaled copy of another: the bag can shrink
        for i, u in enumerate(bag):
            rest = bag[:i] + bag[i + 1 :]
            for a in set(rest):
                for part in _reductions(u, a):
                    child = tuple(sorted((*rest, part)))
                    if child not in seen:
                        if len(seen) >= limit:
                            return False
                        seen.add(child)
                        stack.append(child)
    return True
