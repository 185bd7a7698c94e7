// RUN: cain-opt %examples/gauss3x3.cain | filecheck %s
// RUN: cain-opt %examples/gauss3x3.cain | cain-opt | filecheck %s

// CHECK:      goal.filter @gauss3x3 depth 4 registers ["A", "B", "C", "D", "E", "F"] instructions "all" {
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.kernel "blur" -> "A" weights 1/16 [[1, 2, 1], [2, 4, 2], [1, 2, 1]] goal #goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]> error 0
// CHECK-NEXT: }
