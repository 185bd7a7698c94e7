// Two input channels; each kernel has one weight matrix and one goal matrix per channel.
// RUN: cain-opt %examples/rgb_luma_edge.cain | filecheck %s
// RUN: cain-opt %examples/rgb_luma_edge.cain | cain-opt | filecheck %s

// CHECK:      goal.filter @rgb_luma_edge depth 3
// CHECK-NEXT:   goal.input "green" -> "A"
// CHECK-NEXT:   goal.input "red" -> "B"
// CHECK-NEXT:   goal.kernel "luma" -> "C" weights 1/4 [[3]], [[1]] goal #goal.goal<[[6]], [[2]]> error 0
// CHECK-NEXT:   goal.kernel "edge" -> "D" weights 1/8 [[-4, 0, 4]], [[1, 2, 1]] goal #goal.goal<[[0, 0, 0], [-4, 0, 4], [0, 0, 0]], [[0, 0, 0], [1, 2, 1], [0, 0, 0]]> error 0
