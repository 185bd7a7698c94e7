"""The conv layers of an ONNX model (`Conv` nodes with constant weights), read into `Filter`s.

Needs the `onnx` package (`pip install 'cain[onnx]'`). A grouped convolution becomes one filter whose
kernels read only their group's channels; a layer with more outputs than registers is split into filters of
at most `outputs_per_filter` kernels. As for IR (cain.frontend.linalg), the stride must be 1, padding does
not matter, and a bias must be zero unless `bias="ignore"` (then add it after readout).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cain.diagnostics import CainError
from cain.frontend.tensor import BIAS_ADVICE, check_conv, dilate, filter_from_weights
from cain.model.filter import Filter


def _onnx() -> Any:
    try:
        import onnx  # an optional extra: cain[onnx]
    except ImportError:
        raise CainError("reading ONNX models needs the onnx package: pip install 'cain[onnx]'") from None
    return onnx


def load(model: object) -> Any:
    """An `onnx.ModelProto` from a path or a model."""
    onnx = _onnx()
    if isinstance(model, str | Path):
        path = Path(model)
        if not path.exists():
            raise CainError(f"cannot read '{path}': no such file")
        try:
            return onnx.load(str(path))
        except Exception as e:  # noqa: BLE001 (protobuf's DecodeError and onnx's own errors: no common base)
            raise CainError(f"cannot read '{path}' as an ONNX model: {e}") from None
    if not isinstance(model, onnx.ModelProto):
        raise CainError(f"expected an ONNX model or the path of one, not {type(model).__name__}")
    return model


def conv_layers(model: object, bias: str = "error") -> list[tuple[str, np.ndarray]]:
    """(layer name, weights out x in x kh x kw) of every `Conv` node, groups spread block-diagonally."""
    onnx = _onnx()
    proto = load(model)
    if bias not in ("error", "ignore"):
        raise CainError(f"bias must be 'error' or 'ignore', not '{bias}'")
    graph = proto.graph
    constants = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    constants[node.output[0]] = onnx.numpy_helper.to_array(attr.t)
    layers = []
    for index, node in enumerate(n for n in graph.node if n.op_type == "Conv"):
        name = node.name or (node.output[0] if node.output else f"conv{index}")
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        where = f"ONNX Conv node '{name}'"
        weights = constants.get(node.input[1]) if len(node.input) > 1 else None
        if weights is None:
            raise CainError(f"{where}: its weights are not a constant (an initializer or Constant node)")
        if weights.ndim != 4:
            raise CainError(f"{where}: weights of shape {weights.shape}; Cain compiles 2-D convolutions")
        check_conv(
            where, tuple(attrs.get("strides", (1, 1))), dilations := tuple(attrs.get("dilations", (1, 1)))
        )
        if len(node.input) > 2 and node.input[2]:
            b = constants.get(node.input[2])
            if bias == "error" and (b is None or np.any(b != 0)):
                raise CainError(
                    f"{where}: its bias is not zero; {BIAS_ADVICE} (bias='ignore' compiles the weights alone)"
                )
        weights = dilate(_ungroup(weights, int(attrs.get("group", 1)), where), dilations)
        layers.append((name, weights))
    return layers


def _ungroup(weights: np.ndarray, group: int, where: str) -> np.ndarray:
    """Grouped weights (out x in/group x kh x kw) as a dense tensor whose kernels read only their group."""
    if group == 1:
        return weights
    out, per_group, kh, kw = weights.shape
    if group < 1 or out % group:
        raise CainError(f"{where}: group {group} does not divide its {out} output channels")
    dense = np.zeros((out, per_group * group, kh, kw), dtype=weights.dtype)
    per_out = out // group
    for k in range(out):
        g = k // per_out
        dense[k, g * per_group : (g + 1) * per_group] = weights[k]
    return dense


def onnx_filters(
    model: object,
    *,
    outputs_per_filter: int | None = None,
    bias: str = "error",
    registers: Sequence[str] | str | None = None,
    **options: Any,
) -> list[Filter]:
    """One filter per conv layer (or per group of `outputs_per_filter` output channels of it), named after
    the layer (`conv1`, or `conv1_0`, `conv1_1`, ... when split)."""
    if registers is not None:
        options["registers"] = registers
    filters = []
    for name, weights in conv_layers(model, bias):
        ident = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
        ident = ident if ident and not ident[0].isdigit() else f"conv_{ident}"
        step = outputs_per_filter or len(weights)
        if step < 1:
            raise CainError(f"outputs_per_filter must be at least 1, not {outputs_per_filter}")
        for start in range(0, len(weights), step):
            part = weights[start : start + step]
            names = [f"out{k}" for k in range(start, start + len(part))]
            label = ident if step >= len(weights) else f"{ident}_{start // step}"
            filters.append(filter_from_weights(part, name=label, kernel_names=names, **options))
    if not filters:
        raise CainError("the ONNX model holds no Conv node")
    return filters
