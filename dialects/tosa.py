"""xDSL's `tosa` dialect with `tosa.conv2d`, which xDSL 0.74 lacks, so cain-opt reads TOSA convolutions as
MLIR prints them: `tosa.conv2d %input, %weights, %bias[, %input_zp, %weight_zp] {stride = ..., dilation =
..., pad = ...} : (...) -> ...` (input NHWC, weights OHWI)."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.dialects.tosa import TOSA
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def, var_operand_def


@irdl_op_definition
class Conv2DOp(IRDLOperation):
    """A 2-D convolution of an NHWC tensor with OHWI weights and a bias (attributes as in MLIR)."""

    name = "tosa.conv2d"

    operands_ = var_operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"


TosaDialect = Dialect("tosa", [*TOSA.operations, Conv2DOp], [*TOSA.attributes])
