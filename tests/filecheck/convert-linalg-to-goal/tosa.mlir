// tosa.conv2d (NHWC input, OHWI weights from tosa.const, a zero bias) as MLIR prints it; a generic
// "tosa.conv2d" reads the same.
// RUN: cain-opt %s -p 'convert-linalg-to-goal,search{budget=300 quiet=true},regalloc,verify' | filecheck %s

func.func @edge(%img: tensor<1x64x64x1xf32>) -> tensor<1x62x62x1xf32> {
  %w = "tosa.const"() <{values = dense<[[[[0.0], [1.0], [0.0]], [[1.0], [-4.0], [1.0]], [[0.0], [1.0], [0.0]]]]> : tensor<1x3x3x1xf32>}> : () -> tensor<1x3x3x1xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %img, %w, %b {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x64x64x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x62x62x1xf32>
  %r2 = "tosa.conv2d"(%img, %w, %b) {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x64x64x1xf32>, tensor<1x3x3x1xf32>, tensor<1xf32>) -> tensor<1x62x62x1xf32>
  func.return %r : tensor<1x62x62x1xf32>
}

// CHECK: scamp5.kernel @edge_conv0(
// CHECK-SAME: goal #goal.goal<[[0, 1, 0], [1, -4, 1], [0, 1, 0]]>
// CHECK: scamp5.kernel @edge_conv1(
