// Both Gaussians share depth 6; the padded 3x3 kernel becomes a 3x3 goal scaled by 4.
// RUN: cain-opt %examples/gauss5x5_3x3.cain | filecheck %s

// CHECK:      goal.filter @gauss5x5_3x3 depth 6
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.kernel "blur5" -> "A"
// CHECK-SAME:   goal #goal.goal<[[0, 1, 2, 1, 0], [1, 4, 6, 4, 1], [2, 6, 10, 6, 2], [1, 4, 6, 4, 1], [0, 1, 2, 1, 0]]> error 0
// CHECK-NEXT:   goal.kernel "blur3" -> "B"
// CHECK-SAME:   goal #goal.goal<[[4, 8, 4], [8, 16, 8], [4, 8, 4]]> error 0
