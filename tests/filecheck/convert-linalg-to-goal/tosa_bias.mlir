// A TOSA convolution with a non-zero bias: the program adds no constants, so the error says to add it
// after readout.
// RUN: not cain-opt %s -p convert-linalg-to-goal 2>&1 | filecheck %s

func.func @biased(%img: tensor<1x64x64x1xf32>) -> tensor<1x64x64x1xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<1x3x3x1xf32>}> : () -> tensor<1x3x3x1xf32>
  %b = "tosa.const"() <{values = dense<0.5> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %img, %w, %b {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x64x64x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x64x64x1xf32>
  func.return %r : tensor<1x64x64x1xf32>
}

// CHECK: error: @biased: %r = tosa.conv2d: its bias is not a zero constant; a SCAMP-5 kernel adds no constants, so add the bias after readout (give a zero bias here)
