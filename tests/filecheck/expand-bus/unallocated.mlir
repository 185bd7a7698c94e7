// expand-bus needs registers.
// RUN: not cain-opt %s -p expand-bus 2>&1 | filecheck %s

scamp5.kernel @k(%0: !scamp5.areg) depth 0 registers ["A", "B"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 1, 0], [0, 0, 0], [0, 0, 0]]> error 0 weights [[0, 1, 0], [0, 0, 0], [0, 0, 0]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg -> !scamp5.areg
  scamp5.output %1 : !scamp5.areg
}

// CHECK: error: expand-bus: kernel @k has no registers yet: run regalloc first
