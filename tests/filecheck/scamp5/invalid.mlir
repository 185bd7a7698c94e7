// The scamp5 verifiers reject what the hardware cannot do, naming the rule.
// RUN: cain-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<B>
  %2 = scamp5.sub %0, %1 : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<B>
  scamp5.output %2 : !scamp5.areg<B>
}
// CHECK: sub: the result (y) must be in a different register from the subtracted operand (x1) (both are B): a register appears at most once in a bus micro-op

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.add %0, %0 : !scamp5.areg<A>, !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
// CHECK: add: the first operand (x0) must be in a different register from the second operand (x1) (both are A)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.neg %0 : !scamp5.areg<A> -> !scamp5.areg<A>
  scamp5.output %1 : !scamp5.areg<A>
}
// CHECK: neg: the result (y) must be in a different register from the first operand (x0) (both are A)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.diva %0 scratch C, D : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
// CHECK: diva: the result (y) must be in the register of the first operand (x0): the macro works in place

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.div %0 scratch B : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
// CHECK: div: the result (y) must be in a different register from the first scratch register (s0) (both are B)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.div %0 : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
// CHECK: div: needs 1 scratch register(s) once allocated, has 0

// -----

scamp5.kernel @k(%0: !scamp5.areg) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.div %0 scratch C : !scamp5.areg -> !scamp5.areg
  scamp5.output %1 : !scamp5.areg
}
// CHECK: div: scratch registers are chosen by regalloc, with the other registers

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg
  scamp5.output %1 : !scamp5.areg
}
// CHECK: movx: either every operand and result has a register, or none

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.mov2x %0 north : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
// CHECK: mov2x: takes 2 direction(s), has 1

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 up : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
// CHECK: unknown direction 'up' (choose from north, east, south, west)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<G>
  scamp5.output %1 : !scamp5.areg<G>
}
// CHECK: kernel @k: output 'y' must end in register B, but its value is in G

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<G>
  %2 = scamp5.mov %1 : !scamp5.areg<G> -> !scamp5.areg<B>
  scamp5.output %2 : !scamp5.areg<B>
}
// CHECK: kernel @k: scamp5.movx uses register G, which is not in the register file (A, B, C, D, E, F)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output
}
// CHECK: kernel @k: scamp5.output takes 1 value(s), one per output, has 0

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  scamp5.bus NEWS, A, A
  scamp5.output
}
// CHECK: bus(NEWS, A, A): a register appears at most once in a micro-op (A)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  scamp5.bus A, NEWS, A
  scamp5.output
}
// CHECK: bus(A, NEWS, A): a destination is never also a source (A)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  scamp5.bus A, B, C, D, E, F
  scamp5.output
}
// CHECK: bus(A, B, C, D, E, F): bus reads at most 4 source(s)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  scamp5.bus3 A, B, C, D, E
  scamp5.output
}
// CHECK: bus3(A, B, C, D, E): bus3 reads at most 1 source(s)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  scamp5.bus2 A
  scamp5.output
}
// CHECK: bus2 writes 2 destination(s)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "B" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.bus B, NEWS
  scamp5.output
}
// CHECK: kernel @k: macros and bus micro-ops cannot be mixed (scamp5.movx)

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 0 registers ["A", "B"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "A" goal #goal.goal<[[1]]> error 1/0 weights [[1]])] {
  scamp5.output %0 : !scamp5.areg<A>
}
// CHECK: the denominator of a rational must not be zero

// -----

scamp5.kernel @k(%0: !scamp5.areg<A>) depth -1 registers ["A", "B"] instructions "all" inputs ["x" -> "A"] outputs [("y" -> "A" goal #goal.goal<[[1]]> error 0 weights [[1]])] {
  scamp5.output %0 : !scamp5.areg<A>
}
// CHECK: kernel @k: depth must be at least 0, not -1
