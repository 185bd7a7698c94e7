// RUN: cain-opt %examples/laplacian.cain | filecheck %s

// CHECK:      goal.filter @laplacian depth 0
// CHECK:        goal.kernel "lap" -> "A" weights [[0, 1, 0], [1, -4, 1], [0, 1, 0]] goal #goal.goal<[[0, 1, 0], [1, -4, 1], [0, 1, 0]]> error 0
