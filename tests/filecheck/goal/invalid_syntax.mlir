// Malformed goal attributes are parse errors.
// RUN: cain-opt %s --split-input-file --parsing-diagnostics | filecheck %s

goal.filter @f depth 0 registers ["A"] instructions "all" attributes {g = #goal.goal<[[1, 2], [3, 4]]>} {
  goal.input "A" -> "A"
  goal.kernel "k" -> "A" weights [[1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: goal matrices must be square, of one odd size, centred on offset (0, 0)

// -----

goal.filter @f depth 0 registers ["A"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "A" weights [[1, 2], [1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: a weight matrix needs rows of one non-zero length

// -----

goal.filter @f depth 0 registers ["A"] instructions "all" attributes {r = #goal.rational<1/0>} {
  goal.input "A" -> "A"
  goal.kernel "k" -> "A" weights [[1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: the denominator of a rational must not be zero

// -----

goal.filter @f depth 0 registers ["A"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "A" weights [[1]] goal [[1]] error 0
}
// CHECK: expected a #goal.goal attribute
