// A JSON config is read into the same goal IR as a .cain file: kernels and channels are named after their
// registers; innermost arrays give one weight per input channel; command-line overrides apply.
// RUN: cain-opt %examples/json/rgb_luma_edge.json | filecheck %s
// RUN: cain-opt %examples/json/sobel.json --registers A,B,C --instruction-set basic | filecheck %s --check-prefix=OVERRIDE

// CHECK:      goal.filter @rgb_luma_edge depth 3 registers ["A", "B", "C", "D", "E", "F"] instructions "all" {
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.input "B" -> "B"
// CHECK-NEXT:   goal.kernel "C" -> "C" weights 1/4 [[3]], [[1]] goal #goal.goal<[[6]], [[2]]> error 0
// CHECK-NEXT:   goal.kernel "D" -> "D" weights 1/8 [[-4, 0, 4]], [[1, 2, 1]] goal #goal.goal<[[0, 0, 0], [-4, 0, 4], [0, 0, 0]], [[0, 0, 0], [1, 2, 1], [0, 0, 0]]> error 0
// CHECK-NEXT: }

// OVERRIDE:      goal.filter @sobel depth 0 registers ["A", "B", "C"] instructions "basic" {
// OVERRIDE-NEXT:   goal.input "A" -> "A"
// OVERRIDE-NEXT:   goal.kernel "B" -> "B" weights {{\[\[}}-1, 0, 1], [-2, 0, 2], [-1, 0, 1]] goal
// OVERRIDE-NEXT:   goal.kernel "C" -> "C" weights {{\[\[}}1, 2, 1], [0, 0, 0], [-1, -2, -1]] goal
