// RUN: cain-opt %examples/sobel.cain | filecheck %s

// CHECK:      goal.filter @sobel depth 0
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.kernel "gx" -> "B" weights [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]] goal #goal.goal<[[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]> error 0
// CHECK-NEXT:   goal.kernel "gy" -> "C" weights [[1, 2, 1], [0, 0, 0], [-1, -2, -1]] goal #goal.goal<[[1, 2, 1], [0, 0, 0], [-1, -2, -1]]> error 0
