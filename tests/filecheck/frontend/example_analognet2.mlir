// RUN: cain-opt %examples/analognet2.cain | filecheck %s

// CHECK:      goal.filter @analognet2 depth 2
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.kernel "k1" -> "A" weights 1/4 [[0, 0, 0], [-3, 1, 0], [-3, 0, 2]] goal #goal.goal<[[0, 0, 0], [-3, 1, 0], [-3, 0, 2]]> error 0
// CHECK-NEXT:   goal.kernel "k2" -> "B" weights 1/4 [[-4, -1, 1], [-1, 2, 0], [1, 1, 0]] goal #goal.goal<[[-4, -1, 1], [-1, 2, 0], [1, 1, 0]]> error 0
// CHECK-NEXT:   goal.kernel "k3" -> "C" weights 1/4 [[-1, 2, 0], [-1, 1, -3], [0, -3, 0]] goal #goal.goal<[[-1, 2, 0], [-1, 1, -3], [0, -3, 0]]> error 0
