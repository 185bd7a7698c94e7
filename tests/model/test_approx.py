"""Approximation of weights by goals (paper section 3.1): rounding, the smallest depth, reported errors."""

from fractions import Fraction as F
from itertools import chain
from random import Random

import pytest

from cain.model.approx import (
    ApproximationError,
    approximate,
    approximate_kernel,
    round_half_away,
    rounding_error,
)
from cain.model.goal import Goal, exact_weights


def test_round_half_away_from_zero():
    assert [round_half_away(F(n, 2)) for n in range(-5, 6)] == [-3, -2, -2, -1, -1, 0, 1, 1, 2, 2, 3]
    assert round_half_away(F(7, 3)) == 2 and round_half_away(F(-8, 3)) == -3


def test_exact_kernel_uses_its_denominator():
    gauss = [[[F(1, 16), F(2, 16), F(1, 16)], [F(2, 16), F(4, 16), F(2, 16)], [F(1, 16), F(2, 16), F(1, 16)]]]
    depth, goals, errors = approximate([gauss], max_depth=8, max_error=0)
    assert depth == 4
    assert goals == [Goal.from_matrices([[[1, 2, 1], [2, 4, 2], [1, 2, 1]]])]
    assert errors == [0]


def test_kernels_share_the_largest_depth_needed():
    depth, goals, errors = approximate([[[[F(1, 2)]]], [[[F(3, 8)]]]], max_depth=8, max_error=0)
    assert errors == [0, 0]
    assert depth == 3
    assert goals == [Goal({(0, 0, 0): 4}), Goal({(0, 0, 0): 3})]


def test_smallest_depth_within_the_bound_and_its_error():
    third = [[[F(1, 3)]]]
    depth, goals, errors = approximate([third], max_depth=8, max_error=F(1, 100))
    # d=5: 1/3 * 32 = 10.67 -> 11, off by 1/96 > 1/100; d=6: 21.33 -> 21, off by 1/192
    assert depth == 6 and goals == [Goal({(0, 0, 0): 21})] and errors == [F(1, 192)]
    assert approximate_kernel(third, 5)[1] == F(1, 96)


def test_error_is_summed_over_kernels():
    # each kernel alone is within 1/8 at depth 2, together they are not
    kernels = [[[[F(1, 3)]]], [[[F(1, 3)]]]]
    depth, _, errors = approximate(kernels, max_depth=8, max_error=F(1, 8))
    assert sum(errors) <= F(1, 8)
    assert approximate_kernel(kernels[0], depth - 1)[1] * 2 > F(1, 8)


def test_no_depth_within_bound_raises_with_errors_at_max_depth():
    with pytest.raises(ApproximationError) as info:
        approximate([[[[F(1, 3)]]], [[[F(1, 2)]]]], max_depth=3, max_error=0)
    assert info.value.errors == [F(1, 24), 0]
    assert "max_depth = 3" in info.value.message and "raise max_depth or max_error" in info.value.message


def test_bad_bounds():
    with pytest.raises(Exception, match="max_depth"):
        approximate([[[[F(1)]]]], max_depth=-1, max_error=0)
    with pytest.raises(Exception, match="max_error"):
        approximate([[[[F(1)]]]], max_depth=2, max_error=-1)


def test_random_kernels_goal_is_within_reported_error():
    """The reported error is exactly the distance between the weights and goal / 2^d, and no smaller
    depth would do."""
    rng = Random(7)
    for _ in range(50):
        size = rng.choice([1, 2, 3, 4, 5])
        weights = [
            [
                [F(rng.randint(-40, 40), rng.choice([1, 3, 5, 7, 16, 64])) for _ in range(size)]
                for _ in range(size)
            ]
        ]
        bound = F(rng.randint(0, 20), 100)
        try:
            depth, (goal,), (error,) = approximate([weights], max_depth=10, max_error=bound)
        except ApproximationError:
            assert approximate_kernel(weights, 10)[1] > bound
            continue
        cy, cx = size // 2, size // 2
        exact = exact_weights(goal, depth)
        distance = sum(
            abs(w - exact.get((c - cx, cy - r, 0), 0))
            for r, row in enumerate(weights[0])
            for c, w in enumerate(row)
        )
        assert distance == error <= bound
        assert all(  # the nearest count, or one toward zero (sparsen)
            round_half_away(w * 2**depth) - goal.count((c - cx, cy - r, 0)) in ((0, 1) if w > 0 else (0, -1))
            for r, row in enumerate(weights[0])
            for c, w in enumerate(row)
        )
        if depth > 0:
            assert approximate_kernel(weights, depth - 1)[1] > bound


def test_the_error_left_over_rounds_small_weights_to_zero():
    # a 5x5 Gaussian (sigma 1) within 0.05 needs depth 8; rounded to the nearest it has 25 positions, and
    # the error left over takes its four corners (0.003 each, 1/256 to the nearest) to zero
    g = [0.0030, 0.0133, 0.0219, 0.0596, 0.0983, 0.1621]
    rows = [[0, 1, 2, 1, 0], [1, 3, 4, 3, 1], [2, 4, 5, 4, 2], [1, 3, 4, 3, 1], [0, 1, 2, 1, 0]]
    gauss = [[[F(str(g[i])) for i in row] for row in rows]]
    depth, (near,), (near_error,) = approximate([gauss], max_depth=16, max_error=F(5, 100), sparse=False)
    assert depth == 8 and near.matrices(1, 2)[0][0] == [1, 3, 6, 3, 1]
    depth, (goal,), (error,) = approximate([gauss], max_depth=16, max_error=F(5, 100))
    corners = [goal.matrices(1, 2)[0][r][c] for r in (0, 4) for c in (0, 4)]
    assert depth == 8 and corners == [0, 0, 0, 0] and near_error < error <= F(5, 100)
    assert approximate_kernel(gauss, 8)[0] == near


def test_sparse_rounding_stays_within_the_bound_and_one_atom_from_the_nearest():
    rng = Random(3)
    for _ in range(200):
        kernels = [
            [[[F(rng.randint(-60, 60), rng.choice([7, 9, 25, 100])) for _ in range(3)] for _ in range(3)]]
            for _ in range(rng.randint(1, 2))
        ]
        bound = F(rng.randint(1, 30), 100)
        try:
            depth, goals, errors = approximate(kernels, max_depth=10, max_error=bound)
        except ApproximationError:
            continue
        _, nearest, _ = approximate(kernels, max_depth=10, max_error=bound, sparse=False)
        assert sum(errors) <= bound
        magnitudes: dict[int, int] = {}
        for weights, goal, near, error in zip(kernels, goals, nearest, errors, strict=True):
            (counts,), (near_counts,) = goal.matrices(1, 1), near.matrices(1, 1)
            cells = list(zip(chain(*weights[0]), chain(*counts), chain(*near_counts), strict=True))
            assert error == sum(abs(w - F(c, 2**depth)) for w, c, _ in cells)
            for w, c, n in cells:
                assert c == n or (c == n - 1 and n > 0) or (c == n + 1 and n < 0)  # toward zero by one
                assert magnitudes.setdefault(abs(n), abs(c)) == abs(c)  # equal counts stay equal


def test_the_goal_ir_accepts_exactly_the_roundings_approximate_gives():
    weights = [[[F(3, 10), F(7, 10), F(-9, 20)]]]  # x 8: 2.4, 5.6, -3.6
    assert rounding_error(weights, 3, Goal.from_matrices([[[2, 6, -4]]])) == approximate_kernel(weights, 3)[1]
    assert rounding_error(weights, 3, Goal.from_matrices([[[2, 5, -3]]])) == (F(2, 5) + F(3, 5) + F(3, 5)) / 8
    for wrong in ([[3, 6, -4]], [[2, 4, -4]], [[2, 6, -5]], [[2, 6, -4, 1]]):
        with pytest.raises(ValueError, match="neither the nearest"):
            rounding_error(weights, 3, Goal.from_matrices([wrong]))
