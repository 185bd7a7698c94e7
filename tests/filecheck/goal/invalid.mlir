// The goal dialect's verifiers reject inconsistent filters.
// RUN: cain-opt %s --split-input-file --verify-diagnostics | filecheck %s

goal.filter @f depth 2 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "C" weights 1/4 [[1, 2, 1]] goal #goal.goal<[[0, 0, 0], [1, 2, 1], [0, 0, 0]]> error 0
}
// CHECK: filter @f: register 'C' is not in the register file ['A', 'B']

// -----

goal.filter @f depth 2 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights 1/4 [[1]] goal #goal.goal<[[1]]> error 0
  goal.kernel "j" -> "B" weights 1/4 [[2]] goal #goal.goal<[[2]]> error 0
}
// CHECK: filter @f: output register 'B' appears twice

// -----

goal.filter @f depth 2 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.input "A" -> "B"
  goal.kernel "k" -> "B" weights 1/4 [[1]], [[1]] goal #goal.goal<[[1]], [[1]]> error 0
}
// CHECK: filter @f: input channel 'A' appears twice

// -----

goal.filter @f depth 2 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights 1/4 [[1, 2, 1]] goal #goal.goal<[[0, 0, 0], [1, 3, 1], [0, 0, 0]]> error 0
}
// CHECK: filter @f: the goal of kernel 'k' is not its weights times 2^2 rounded (the count at (0, 0, 0) is 3, neither the nearest (2) nor one atom toward zero); rounded to the nearest it is #goal.goal<[[0, 0, 0], [1, 2, 1], [0, 0, 0]]>

// -----

goal.filter @f depth 1 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights 1/4 [[1, 2, 1]] goal #goal.goal<[[0, 0, 0], [1, 1, 1], [0, 0, 0]]> error 1/4
}
// CHECK: filter @f: kernel 'k' has error 1/4 but its goal is off its weights by 1/2

// -----

goal.filter @f depth 2 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights 1/4 [[1]], [[1]] goal #goal.goal<[[1]], [[1]]> error 0
}
// CHECK: filter @f: kernel 'k' has weights for 2 channels but the filter has 1 inputs

// -----

goal.filter @f depth -1 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights [[1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: filter @f: depth must be at least 0, not -1

// -----

goal.filter @f depth 0 registers ["A", "B", "A"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights [[1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: filter @f: a register is listed twice in ['A', 'B', 'A']

// -----

goal.filter @f depth 0 registers ["A", "B"] instructions "fancy" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights [[1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: filter @f: unknown instruction set 'fancy' (choose from basic, all)

// -----

goal.filter @f depth 0 registers ["A", "B"] instructions "all" {
  goal.kernel "k" -> "B" weights [[1]] goal #goal.goal<[[1]]> error 0
}
// CHECK: filter @f has no goal.input

// -----

goal.filter @f depth 0 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
}
// CHECK: filter @f has no goal.kernel

// -----

goal.input "A" -> "A"
// CHECK: goal.input must be directly inside a goal.filter

// -----

goal.filter @f depth 0 registers ["A", "B"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "k" -> "B" weights [[1]] goal #goal.goal<[[1]]> error -1
}
// CHECK: kernel 'k' has a negative error
