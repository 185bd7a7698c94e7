"""2-D convolutions in IR from other xDSL / MLIR pipelines, read into `Filter`s: `linalg.conv_2d_nchw_fchw`,
`linalg.conv_2d_nhwc_hwcf` and `tosa.conv2d`, each with constant weights (`arith.constant dense<...>` or
`tosa.const`).

SCAMP-5 computes every output pixel at its own PE, so a convolution compiles when its stride is 1; a
dilation spreads the weights over a larger, sparser kernel; padding and the batch size do not matter (the
sensor sees one image, and pixels beyond its edge read as 0). A TOSA bias must be zero: the program
computes sums of the image, with no constants. Each unsupported case is an error naming the op and what
to change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    UnknownLoc,
    UnregisteredOp,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue

from cain.diagnostics import CainError
from cain.frontend.tensor import BIAS_ADVICE, check_conv, dilate, filter_from_weights
from cain.model.filter import Filter


@dataclass(frozen=True)
class Layout:
    """Where a convolution op keeps its weights and settings."""

    weights: tuple[int, int, int, int]
    """The transposition of the weight tensor to out_channels x in_channels x kh x kw."""
    strides: str
    dilations: str
    bias: int | None = None
    """The operand index of the bias, if the op has one."""


LAYOUTS: dict[str, Layout] = {
    "linalg.conv_2d_nchw_fchw": Layout((0, 1, 2, 3), "strides", "dilations"),
    "linalg.conv_2d_nhwc_hwcf": Layout((3, 2, 0, 1), "strides", "dilations"),
    "tosa.conv2d": Layout((0, 3, 1, 2), "stride", "dilation", bias=2),
}
"""The convolution ops Cain reads, by name (a `tosa.conv2d` may also be an unregistered op)."""


def op_name(op: Operation) -> str:
    """An op's name, also for an op of no registered dialect (`--allow-unregistered-dialect`)."""
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name


def _func(op: Operation) -> FuncOp | None:
    """The function an op is in."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent


def describe(op: Operation) -> str:
    """`model.mlir:3:5: @net: %r = linalg.conv_2d_nchw_fchw`: where an op is, for an error message."""
    func = _func(op)
    results = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    text = f"{results} = {op_name(op)}" if results else op_name(op)
    if func is not None:
        text = f"@{func.sym_name.data}: {text}"
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        text = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: {text}"
    elif not isinstance(loc, UnknownLoc):
        text = f"{loc}: {text}"
    return text


def _setting(op: Operation, name: str) -> tuple[int, ...] | None:
    """An integer array setting (`strides = dense<1> : tensor<2xi64>` or `stride = array<i64: 1, 1>`)."""
    value = op.properties.get(name) or op.attributes.get(name)
    if value is None:
        return None
    if isinstance(value, DenseArrayBase):
        return tuple(int(v) for v in value.get_values())
    if isinstance(value, DenseIntOrFPElementsAttr):
        values = tuple(int(v) for v in value.get_values())
        return values * 2 if len(values) == 1 else values
    raise CainError(f"{describe(op)}: cannot read its {name} {value}")


def _dense(attr: Attribute) -> np.ndarray | None:
    """The values of a dense constant, in its element type (so float32 weights keep their float32 text)."""
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        return None
    element = attr.get_element_type()
    dtype = {Float16Type: np.float16, Float32Type: np.float32, Float64Type: np.float64}.get(type(element))
    values = np.asarray(attr.get_values(), dtype=dtype if dtype is not None else np.int64)
    shape = tuple(attr.get_shape() or ())
    return np.broadcast_to(values, shape) if values.size == 1 else values.reshape(shape)


def constant(value: SSAValue) -> np.ndarray | None:
    """The tensor `value` holds when an `arith.constant` or `tosa.const` defines it, else None."""
    owner = value.owner
    if not isinstance(owner, Operation) or op_name(owner) not in ("arith.constant", "tosa.const"):
        return None
    for key in ("value", "values"):
        attr = owner.properties.get(key) or owner.attributes.get(key)
        if attr is not None:
            return _dense(attr)
    return None


def conv_weights(op: Operation) -> np.ndarray:
    """A convolution op's weights as out_channels x in_channels x kh x kw, dilation spread in; a located
    error for what Cain cannot compile."""
    layout = LAYOUTS[op_name(op)]
    where = describe(op)
    if len(op.operands) < 2:
        raise CainError(f"{where}: expected an input and weights as its first two operands")
    check_conv(
        where, _setting(op, layout.strides) or (1, 1), dilations := _setting(op, layout.dilations) or (1, 1)
    )
    weights = constant(op.operands[1])
    if weights is None:
        raise CainError(
            f"{where}: its weights are not a constant (arith.constant dense<...> or tosa.const); Cain compiles "
            "fixed weights, so fold them into a constant before this pass"
        )
    if weights.ndim != 4:
        raise CainError(f"{where}: its weights have shape {weights.shape}; expected a 4-D tensor")
    if layout.bias is not None and len(op.operands) > layout.bias:
        bias = constant(op.operands[layout.bias])
        if bias is None or np.any(bias != 0):
            raise CainError(
                f"{where}: its bias is not a zero constant; {BIAS_ADVICE} (give a zero bias here)"
            )
    return dilate(np.transpose(weights, layout.weights), dilations)


def conv_ops(module: ModuleOp) -> Iterator[tuple[str, Operation]]:
    """Every supported convolution of `module` with the name its filter gets (`net_conv0`, ...)."""
    counts: dict[str, int] = {}
    for op in module.walk():
        if op_name(op) in LAYOUTS:
            func = _func(op)
            prefix = func.sym_name.data if func is not None else "conv"
            index = counts.get(prefix, 0)
            counts[prefix] = index + 1
            yield f"{prefix}_conv{index}", op


def conv_filters(module: ModuleOp, **options: object) -> list[Filter]:
    """The filter of every convolution in `module`, in program order (`options`: those of
    `filter_from_weights` but the names, None meaning the default); an error when there is none."""
    options = {k: v for k, v in options.items() if v is not None}
    filters = []
    for name, op in conv_ops(module):
        weights = conv_weights(op)
        try:
            filters.append(filter_from_weights(weights, name=name, **options))  # type: ignore[arg-type]
        except CainError as e:
            raise CainError(f"{describe(op)}: {e.message}") from None
    if not filters:
        names = ", ".join(LAYOUTS)
        raise CainError(f"the input holds no 2-D convolution to compile (Cain reads {names})")
    return filters
