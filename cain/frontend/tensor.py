"""Weights as arrays: a conv layer's weight tensor (`out_channels x in_channels x kh x kw`) or one 2-D
array per kernel, read into the same `Filter` as a `.cain` file.

A CNN's convolution is a cross-correlation, as Cain's kernels are: weight `[kh][kw]` reads the pixel
`kh - kh//2` rows south and `kw - kw//2` columns east of the output pixel (row 0 to the north). Floats
are read by their shortest decimal form (`0.1` as 1/10, a float32's as float32 prints it), so the
approximation error is measured against the weights as the user wrote them.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from cain.diagnostics import CainError
from cain.dialects.goal import filter_to_op
from cain.frontend.options import (
    DEFAULT_INSTRUCTION_SET,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_ERROR,
    check_instruction_set,
    check_max_depth,
    check_max_error,
    check_registers,
)
from cain.model.approx import ApproximationError, approximate
from cain.model.filter import Filter, Kernel
from cain.model.isa import DEFAULT_REGISTERS

Matrix = tuple[tuple[Fraction, ...], ...]


def exact(value: object) -> Fraction:
    """A weight as an exact rational: floats by their shortest decimal form, so `0.1` is 1/10."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return Fraction(int(value))
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise CainError(f"a weight is {value}; every weight must be a finite number")
        return Fraction(str(value))
    raise CainError(f"a weight must be a number, not {value!r}")


def weight_tensor(weights: object) -> list[list[Matrix]]:
    """`weights[k][z]`: kernel k's matrix for input channel z, from a 4-D tensor (out x in x kh x kw),
    a 3-D stack of single-channel kernels, one 2-D array, or a list of 2-D arrays."""
    if isinstance(weights, np.ndarray) and weights.dtype != object:
        array = weights
    elif isinstance(weights, (list, tuple)) and weights and all(np.ndim(w) == 2 for w in weights):
        return [[_matrix(w)] for w in weights]
    else:
        try:
            array = np.asarray(weights)
        except ValueError:
            raise CainError("the weights are ragged: give arrays of one shape per kernel") from None
    if array.ndim == 2:
        array = array[None, None]
    elif array.ndim == 3:
        array = array[:, None]
    if array.ndim != 4:
        raise CainError(
            f"weights of shape {tuple(array.shape)}: give a 2-D kernel, a list of 2-D kernels, or a conv weight "
            "tensor out_channels x in_channels x kh x kw"
        )
    if 0 in array.shape:
        raise CainError(f"weights of shape {tuple(array.shape)} hold no kernel")
    return [[_matrix(m) for m in kernel] for kernel in array]


def _matrix(values: object) -> Matrix:
    array = np.asarray(values, dtype=object)
    if array.ndim != 2 or 0 in array.shape:
        raise CainError(f"a kernel must be a non-empty 2-D array, not one of shape {array.shape}")
    return tuple(tuple(exact(w) for w in row) for row in array)


def filter_from_weights(
    weights: object,
    *,
    name: str = "conv",
    outputs: Sequence[str] | None = None,
    inputs: Sequence[str] | None = None,
    kernel_names: Sequence[str] | None = None,
    registers: Sequence[str] | str = DEFAULT_REGISTERS,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_error: object = DEFAULT_MAX_ERROR,
    instruction_set: str = DEFAULT_INSTRUCTION_SET,
) -> Filter:
    """The filter computing `weights` (see `weight_tensor`): input channel z arrives in `inputs[z]`
    (default: the first registers), kernel k ends in `outputs[k]` (default: the first registers)."""
    try:
        regs = check_registers(registers)
        depth_limit = check_max_depth(max_depth)
        error_bound = check_max_error(max_error)
        instructions = check_instruction_set(instruction_set)
    except ValueError as e:
        raise CainError(str(e)) from None
    kernels = weight_tensor(weights)
    channels = len(kernels[0])
    if len(kernels) > len(regs):
        raise CainError(
            f"{name}: {len(kernels)} output kernels need {len(kernels)} registers but the register file has "
            f"{len(regs)} ({' '.join(regs)}); compile the outputs in groups of at most {len(regs)}, or use more "
            "registers"
        )
    in_regs = _registers(inputs, regs[:channels], channels, "input channel", name, regs)
    out_regs = _registers(outputs, regs[: len(kernels)], len(kernels), "output kernel", name, regs)
    names = list(kernel_names) if kernel_names is not None else [f"out{k}" for k in range(len(kernels))]
    if len(names) != len(kernels) or len(set(names)) != len(names):
        raise CainError(f"{name}: give {len(kernels)} distinct kernel names, not {names}")
    for k, kernel in enumerate(kernels):
        if all(w == 0 for m in kernel for row in m for w in row):
            raise CainError(f"{name}: kernel '{names[k]}' is empty (all its weights are zero)")
    try:
        depth, goals, errors = approximate(kernels, depth_limit, error_bound)
    except ApproximationError as e:
        raise CainError(f"{name}: {e.message}") from None
    for kernel_name, goal in zip(names, goals, strict=True):
        if not goal:
            raise CainError(
                f"{name}: kernel '{kernel_name}' rounds to zero at depth {depth}: lower max_error so that its "
                "weights survive the approximation"
            )
    return Filter(
        name,
        tuple((f"in{z}" if channels > 1 else "in", r) for z, r in enumerate(in_regs)),
        tuple(
            Kernel(n, r, tuple(m), g, e)
            for n, r, m, g, e in zip(names, out_regs, kernels, goals, errors, strict=True)
        ),
        depth,
        regs,
        instructions,
    )


def _registers(
    given: Sequence[str] | None,
    default: Sequence[str],
    count: int,
    what: str,
    name: str,
    regs: Sequence[str],
) -> tuple[str, ...]:
    """The registers of `count` inputs or outputs, checked against the register file."""
    chosen = tuple(default if given is None else ([given] if isinstance(given, str) else given))
    if len(chosen) != count:
        raise CainError(
            f"{name}: {count} {what}(s) need {count} register(s), not {len(chosen)} ({', '.join(chosen)})"
        )
    for r in chosen:
        if r not in regs:
            raise CainError(
                f"{name}: register '{r}' for an {what} is not in the register file ({' '.join(regs)})"
            )
    if len(set(chosen)) != len(chosen):
        raise CainError(f"{name}: every {what} needs a register of its own, not {', '.join(chosen)}")
    return chosen


def lower_weights(weights: object, **options: object) -> ModuleOp:
    """A module holding the `goal.filter` of `filter_from_weights(weights, **options)`."""
    return ModuleOp([filter_to_op(filter_from_weights(weights, **options))])  # type: ignore[arg-type]


def check_conv(where: str, strides: Sequence[int], dilations: Sequence[int]) -> None:
    """A located error for a stride other than 1 or a dilation below 1 (what SCAMP-5 cannot compute)."""
    if any(s != 1 for s in strides):
        raise CainError(
            f"{where}: stride {'x'.join(map(str, strides))} is not supported: SCAMP-5 computes every pixel, so "
            "compile the convolution with stride 1 and subsample its result after readout"
        )
    if len(dilations) != 2 or any(d < 1 for d in dilations):
        raise CainError(
            f"{where}: dilation {'x'.join(map(str, dilations))} cannot be expressed: give two dilations of at least 1"
        )


def dilate(weights: np.ndarray, dilations: Sequence[int]) -> np.ndarray:
    """Weights out x in x kh x kw of a dilated convolution as the denser kernel it reads (zeros between)."""
    dy, dx = dilations
    if (dy, dx) == (1, 1):
        return weights
    out, channels, kh, kw = weights.shape
    spread = np.zeros((out, channels, (kh - 1) * dy + 1, (kw - 1) * dx + 1), dtype=weights.dtype)
    spread[:, :, ::dy, ::dx] = weights
    return spread


BIAS_ADVICE = "a SCAMP-5 kernel adds no constants, so add the bias after readout"
