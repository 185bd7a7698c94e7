// Convolutions Cain cannot compile: a one-line error naming the op and what to change.
// RUN: sed -e 's/STRIDE/2/' -e 's/WEIGHTS/%w/' %s | not cain-opt -p convert-linalg-to-goal 2>&1 | filecheck %s
// RUN: sed -e 's/STRIDE/1/' -e 's/WEIGHTS/%arg/' %s | not cain-opt -p convert-linalg-to-goal 2>&1 | filecheck %s --check-prefix=DYNAMIC
// RUN: sed -e 's/STRIDE/2/' -e 's/WEIGHTS/%w/' -e 's/-> tensor<1x1x31x31xf32>$/& loc("model.py":12:4)/' %s | not cain-opt -p convert-linalg-to-goal 2>&1 | filecheck %s --check-prefix=LOC
// RUN: echo 'func.func @f() { func.return }' | not cain-opt -p convert-linalg-to-goal 2>&1 | filecheck %s --check-prefix=NONE

func.func @net(%img: tensor<1x1x64x64xf32>, %arg: tensor<1x1x3x3xf32>) -> tensor<1x1x31x31xf32> {
  %w = arith.constant dense<1.0> : tensor<1x1x3x3xf32>
  %init = tensor.empty() : tensor<1x1x31x31xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<STRIDE> : tensor<2xi64>} ins(%img, WEIGHTS : tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) outs(%init : tensor<1x1x31x31xf32>) -> tensor<1x1x31x31xf32>
  func.return %r : tensor<1x1x31x31xf32>
}

// CHECK: error: @net: %r = linalg.conv_2d_nchw_fchw: stride 2x2 is not supported: SCAMP-5 computes every pixel, so compile the convolution with stride 1 and subsample its result after readout
// LOC: error: model.py:12:4: @net: %r = linalg.conv_2d_nchw_fchw: stride 2x2 is not supported
// DYNAMIC: error: @net: %r = linalg.conv_2d_nchw_fchw: its weights are not a constant (arith.constant dense<...> or tosa.const); Cain compiles fixed weights, so fold them into a constant before this pass
// NONE: error: the input holds no 2-D convolution to compile (Cain reads linalg.conv_2d_nchw_fchw, linalg.conv_2d_nhwc_hwcf, tosa.conv2d)
