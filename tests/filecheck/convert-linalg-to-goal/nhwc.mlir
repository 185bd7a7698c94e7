// A linalg NHWC/HWCF convolution of two input channels; a dilation of 2 spreads the 2x2 weights over a 3x3
// kernel.
// RUN: cain-opt %s -p convert-linalg-to-goal | filecheck %s

func.func @rgb(%img: tensor<1x64x64x2xf64>) -> tensor<1x62x62x1xf64> {
  %w = arith.constant dense<[[[[1.0], [2.0]], [[3.0], [4.0]]], [[[5.0], [6.0]], [[7.0], [8.0]]]]> : tensor<2x2x2x1xf64>
  %init = tensor.empty() : tensor<1x62x62x1xf64>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%img, %w : tensor<1x64x64x2xf64>, tensor<2x2x2x1xf64>) outs(%init : tensor<1x62x62x1xf64>) -> tensor<1x62x62x1xf64>
  func.return %r : tensor<1x62x62x1xf64>
}

// weights[kh][kw][c][f]: channel 0 reads 1 3 / 5 7, channel 1 reads 2 4 / 6 8, spread by the dilation.
// CHECK:      goal.filter @rgb_conv0 depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" {
// CHECK-NEXT:   goal.input "in0" -> "A"
// CHECK-NEXT:   goal.input "in1" -> "B"
// CHECK-NEXT:   goal.kernel "out0" -> "A" weights [[1, 0, 3], [0, 0, 0], [5, 0, 7]], [[2, 0, 4], [0, 0, 0], [6, 0, 8]]
