"""Approximation of weights by goals (paper section 3.1): rounding, the smallest depth, reported errors."""

from fractions import Fraction as F
from random import Random

import pytest

from cain.model.approx import ApproximationError, approximate, approximate_kernel, round_half_away
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
        assert all(
            abs(w * 2**depth - goal.count((c - cx, cy - r, 0))) <= F(1, 2)
            for r, row in enumerate(weights[0])
            for c, w in enumerate(row)
        )
        if depth > 0:
            assert approximate_kernel(weights, depth - 1)[1] > bound
