// 1/9 needs depth 6 to come within max_error = 0.05: 7/64 per tap, 1/576 off each, 1/64 in total.
// RUN: cain-opt %examples/box3x3.cain | filecheck %s
// With no error allowed it cannot be represented at all:
// RUN: not cain-opt %examples/box3x3.cain --max-error 0 2>&1 | filecheck %s --check-prefix=EXACT
// A larger bound gives a smaller depth (1/8 per tap at depth 3 is 1/72 off each, 1/8 in total):
// RUN: cain-opt %examples/box3x3.cain --max-error 1/8 | filecheck %s --check-prefix=COARSE

// CHECK:      goal.filter @box3x3 depth 6
// CHECK:        goal.kernel "mean" -> "A" weights 1/9 [[1, 1, 1], [1, 1, 1], [1, 1, 1]] goal #goal.goal<[[7, 7, 7], [7, 7, 7], [7, 7, 7]]> error 1/64

// EXACT:      box3x3.cain:5:8: error: the kernels cannot be represented within max_error = 0: at max_depth = 8 the total error is 1/64
// EXACT-SAME: raise max_depth or max_error

// COARSE:     goal.filter @box3x3 depth 3
// COARSE:       goal #goal.goal<[[1, 1, 1], [1, 1, 1], [1, 1, 1]]> error 1/8
