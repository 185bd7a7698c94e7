// Every op and attribute of the goal dialect prints and parses back unchanged, in the custom and the
// generic syntax.
// RUN: cain-opt %s | filecheck %s
// RUN: cain-opt %s | cain-opt | filecheck %s
// RUN: cain-opt %s --print-op-generic | cain-opt | filecheck %s
// RUN: cain-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

goal.filter @two_channels depth 3 registers ["A", "B", "C", "D"] instructions "basic" attributes {note = #goal.rational<-3/4>, w = #goal.weights<1/2 [[1, 2]], [[-1], [3]]>, g = #goal.goal<[[1]], [[-2]]>} {
  goal.input "red" -> "A"
  goal.input "green" -> "B"
  goal.kernel "mix" -> "C" weights 1/8 [[1, 0, -3]], [[2]] goal #goal.goal<[[0, 0, 0], [1, 0, -3], [0, 0, 0]], [[0, 0, 0], [0, 2, 0], [0, 0, 0]]> error 0
  goal.kernel "third" -> "A" weights 1/3 [[1]], [[0]] goal #goal.goal<[[3]], [[0]]> error 1/24
}

goal.filter @"needs quotes" depth 0 registers ["A"] instructions "all" {
  goal.input "A" -> "A"
  goal.kernel "id" -> "A" weights [[1]] goal #goal.goal<[[1]]> error 0 {tag}
}

// CHECK:      goal.filter @two_channels depth 3 registers ["A", "B", "C", "D"] instructions "basic" attributes {note = #goal.rational<-3/4>, w = #goal.weights<1/2 [[1, 2]], [[-1], [3]]>, g = #goal.goal<[[1]], [[-2]]>} {
// CHECK-NEXT:   goal.input "red" -> "A"
// CHECK-NEXT:   goal.input "green" -> "B"
// CHECK-NEXT:   goal.kernel "mix" -> "C" weights 1/8 [[1, 0, -3]], [[2]] goal #goal.goal<[[0, 0, 0], [1, 0, -3], [0, 0, 0]], [[0, 0, 0], [0, 2, 0], [0, 0, 0]]> error 0
// CHECK-NEXT:   goal.kernel "third" -> "A" weights 1/3 [[1]], [[0]] goal #goal.goal<[[3]], [[0]]> error 1/24
// CHECK-NEXT: }
// CHECK-NEXT: goal.filter @"needs quotes" depth 0 registers ["A"] instructions "all" {
// CHECK-NEXT:   goal.input "A" -> "A"
// CHECK-NEXT:   goal.kernel "id" -> "A" weights [[1]] goal #goal.goal<[[1]]> error 0 {tag}
// CHECK-NEXT: }

// GENERIC:      "goal.filter"() <{sym_name = "two_channels", depth = #builtin.int<3>, registers = ["A", "B", "C", "D"], instruction_set = "basic"}> ({
// GENERIC-NEXT:   "goal.input"() <{channel = "red", register = "A"}> : () -> ()
// GENERIC:        "goal.kernel"() <{name = "mix", register = "C", weights = #goal.weights<1/8 [[1, 0, -3]], [[2]]>, goal = #goal.goal<[[0, 0, 0], [1, 0, -3], [0, 0, 0]], [[0, 0, 0], [0, 2, 0], [0, 0, 0]]>, error = #goal.rational<0>}> : () -> ()
// GENERIC-NEXT:   "goal.kernel"() <{name = "third", register = "A", weights = #goal.weights<1/3 [[1]], [[0]]>, goal = #goal.goal<[[3]]>, error = #goal.rational<1/24>}> : () -> ()
// GENERIC:      }) {note = #goal.rational<-3/4>, w = #goal.weights<1/2 [[1, 2]], [[-1], [3]]>, g = #goal.goal<[[1]], [[-2]]>} : () -> ()
