// A linalg NCHW/FCHW convolution with constant float weights becomes a goal.filter (one kernel per output
// channel, 1/16 read exactly), and the whole pipeline compiles and verifies it.
// RUN: cain-opt %s -p convert-linalg-to-goal | filecheck %s
// RUN: cain-opt %s -p 'convert-linalg-to-goal,search{budget=300 quiet=true},regalloc,emit' | filecheck %s --check-prefix=C
// RUN: cain-opt %s -p 'convert-linalg-to-goal{max_depth=2 max_error=0.75 registers=A,B,C,D instruction_set=basic}' | filecheck %s --check-prefix=OPT

func.func @net(%img: tensor<1x1x64x64xf32>) -> tensor<1x2x62x62xf32> {
  %w = arith.constant dense<[[[[0.0625, 0.125, 0.0625], [0.125, 0.25, 0.125], [0.0625, 0.125, 0.0625]]], [[[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]]]> : tensor<2x1x3x3xf32>
  %init = tensor.empty() : tensor<1x2x62x62xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%img, %w : tensor<1x1x64x64xf32>, tensor<2x1x3x3xf32>) outs(%init : tensor<1x2x62x62xf32>) -> tensor<1x2x62x62xf32>
  func.return %r : tensor<1x2x62x62xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   goal.filter @net_conv0 depth 4 registers ["A", "B", "C", "D", "E", "F"] instructions "all" {
// CHECK-NEXT:     goal.input "in" -> "A"
// CHECK-NEXT:     goal.kernel "out0" -> "A" weights 1/16 [[1, 2, 1], [2, 4, 2], [1, 2, 1]] goal #goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]> error 0
// CHECK-NEXT:     goal.kernel "out1" -> "B" weights [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]] goal #goal.goal<[[-16, 0, 16], [-32, 0, 32], [-16, 0, 16]]> error 0
// CHECK-NEXT:   }
// CHECK-NEXT: }

// C: void net_conv0(void) {
// C: scamp5_kernel_end();

// OPT: goal.filter @net_conv0 depth 2 registers ["A", "B", "C", "D"] instructions "basic" {
// OPT: goal.kernel "out0" -> "A" weights 1/16 [[1, 2, 1], [2, 4, 2], [1, 2, 1]] goal #goal.goal<[[0, 1, 0], [1, 1, 1], [0, 1, 0]]> error 3/4
