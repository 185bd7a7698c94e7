// Seven output channels need seven registers: the error says to split the outputs or to add registers,
// and with a seventh register the layer converts.
// RUN: not cain-opt %s -p convert-linalg-to-goal 2>&1 | filecheck %s
// RUN: cain-opt %s -p 'convert-linalg-to-goal{registers=A,B,C,D,E,F,G}' | filecheck %s --check-prefix=MORE

func.func @wide(%img: tensor<1x1x64x64xf32>) -> tensor<1x7x62x62xf32> {
  %w = arith.constant dense<1.0> : tensor<7x1x3x3xf32>
  %init = tensor.empty() : tensor<1x7x62x62xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%img, %w : tensor<1x1x64x64xf32>, tensor<7x1x3x3xf32>) outs(%init : tensor<1x7x62x62xf32>) -> tensor<1x7x62x62xf32>
  func.return %r : tensor<1x7x62x62xf32>
}

// CHECK: error: @wide: %r = linalg.conv_2d_nchw_fchw: wide_conv0: 7 output kernels need 7 registers but the register file has 6 (A B C D E F); compile the outputs in groups of at most 6, or use more registers
// MORE: goal.filter @wide_conv0 depth 0 registers ["A", "B", "C", "D", "E", "F", "G"]
// MORE: goal.kernel "out6" -> "G"
