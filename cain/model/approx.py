"""Approximation of rational kernel weights by integer goals (paper section 3.1).

Every weight `w` becomes `round(w * 2^d)` atoms (ties away from zero); all kernels of a filter share
the depth `d`, the smallest one whose total absolute error is within the bound. What the bound leaves
over is spent on rounding weights toward zero (`sparsen`): fewer positions and atoms, shorter programs.
Arithmetic is exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from cain.diagnostics import CainError
from cain.model.goal import Goal, centred

Matrix = Sequence[Sequence[Fraction]]
Weights = Sequence[Matrix]
"""One matrix of weights per input channel, row 0 to the north."""


class ApproximationError(CainError):
    """No depth up to `max_depth` represents the kernels within `max_error`."""

    def __init__(self, message: str, max_depth: int, errors: list[Fraction]):
        super().__init__(message)
        self.max_depth = max_depth
        self.errors = errors
        """The error of each kernel at `max_depth`."""


def round_half_away(value: Fraction) -> int:
    """The nearest integer to `value`, ties away from zero (so `+-0.5` becomes `+-1`)."""
    magnitude = int(abs(value) + Fraction(1, 2))
    return magnitude if value >= 0 else -magnitude


def approximate_kernel(
    weights: Weights, depth: int, down: frozenset[int] = frozenset()
) -> tuple[Goal, Fraction]:
    """The goal of one kernel at `depth` and its error `sum |w - round(w 2^d) / 2^d|`, the counts whose
    magnitude is in `down` taken one atom toward zero."""
    scale = 2**depth
    integers: list[list[list[int]]] = []
    error = Fraction(0)
    for matrix in weights:
        rows = []
        for row in matrix:
            counts = [_rounded(Fraction(w) * scale, down) for w in row]
            error += sum(abs(Fraction(w) - Fraction(c, scale)) for w, c in zip(row, counts, strict=True))
            rows.append(counts)
        integers.append(rows)
    return Goal.from_matrices(integers), error


def _rounded(value: Fraction, down: frozenset[int]) -> int:
    count = round_half_away(value)
    return _toward_zero(count) if abs(count) in down else count


def _toward_zero(count: int) -> int:
    """A nonzero count one atom nearer zero."""
    return count - 1 if count > 0 else count + 1


def rounding_error(weights: Weights, depth: int, goal: Goal) -> Fraction:
    """The error of `goal` as a rounding of `weights` at `depth` that `approximate` may give: every count
    the nearest, or one atom toward zero (`sparsen`). Raises ValueError at a count that is neither."""
    nearest, _ = approximate_kernel(weights, depth)
    exact = {atom: Fraction(w) for atom, w in centred(weights)}
    error = Fraction(0)
    for atom in exact.keys() | goal.as_dict().keys():
        count, near = goal.count(atom), nearest.count(atom)
        if count != near and (near == 0 or count != _toward_zero(near)):
            raise ValueError(f"the count at {atom} is {count}, neither the nearest ({near}) nor one atom toward zero")
        error += abs(exact.get(atom, Fraction(0)) - Fraction(count, 2**depth))
    return error


def approximate(
    weights_per_kernel: Sequence[Weights],
    max_depth: int,
    max_error: Fraction | float = 0,
    sparse: bool = True,
) -> tuple[int, list[Goal], list[Fraction]]:
    """The smallest depth `d <= max_depth` whose total error over all kernels is at most `max_error`,
    with each kernel's goal and error at that depth (`sparse`: the error left over spent by `sparsen`).
    Raises `ApproximationError` if there is none."""
    if max_depth < 0:
        raise CainError(f"max_depth must be at least 0, not {max_depth}")
    bound = Fraction(max_error)
    if bound < 0:
        raise CainError(f"max_error must be at least 0, not {max_error}")
    for depth in range(max_depth + 1):
        results = [approximate_kernel(w, depth) for w in weights_per_kernel]
        errors = [e for _, e in results]
        if sum(errors) <= bound:
            if sparse and sum(errors) < bound:
                down = sparsen(weights_per_kernel, depth, bound - sum(errors))
                results = [approximate_kernel(w, depth, down) for w in weights_per_kernel]
            return depth, [g for g, _ in results], [e for _, e in results]
    total = sum(errors, Fraction(0))
    raise ApproximationError(
        f"the kernels cannot be represented within max_error = {format_fraction(bound)}: at max_depth = "
        f"{max_depth} the total error is {format_fraction(total)} (~{float(total):.4g}); "
        "raise max_depth or max_error",
        max_depth,
        errors,
    )


def sparsen(weights_per_kernel: Sequence[Weights], depth: int, slack: Fraction) -> frozenset[int]:
    """The counts to take one atom toward zero at `depth` (every weight rounded to that magnitude alike,
    so that equal counts, a kernel's symmetries and the sums kernels share, stay equal) for at most
    `slack` more error: first the counts of 1 (a position less to reach), then the others, each in
    order of the error it adds per atom."""
    scale = 2**depth
    extra: dict[int, Fraction] = {}
    atoms: Counter[int] = Counter()
    for value in (
        abs(Fraction(w)) * scale for weights in weights_per_kernel for m in weights for row in m for w in row
    ):
        count = round_half_away(value)
        if count:
            extra[count] = (
                extra.get(count, Fraction(0)) + (abs(value - count + 1) - abs(value - count)) / scale
            )
            atoms[count] += 1
    down = set()
    for count in sorted(extra, key=lambda c: (c > 1, extra[c] / atoms[c], c)):
        if extra[count] <= slack:
            slack -= extra[count]
            down.add(count)
    return frozenset(down)


def format_fraction(value: Fraction) -> str:
    """`3/32`, `-1/4` or `2`: a rational as the kernel language and the goal IR write it."""
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
