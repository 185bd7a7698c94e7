// RUN: cain-opt %examples/gauss5x5.cain | filecheck %s

// CHECK:      goal.filter @gauss5x5 depth 6
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.kernel "blur" -> "A" weights 1/64 [[0, 1, 2, 1, 0], [1, 4, 6, 4, 1], [2, 6, 10, 6, 2], [1, 4, 6, 4, 1], [0, 1, 2, 1, 0]]
// CHECK-SAME:   goal #goal.goal<[[0, 1, 2, 1, 0], [1, 4, 6, 4, 1], [2, 6, 10, 6, 2], [1, 4, 6, 4, 1], [0, 1, 2, 1, 0]]> error 0
