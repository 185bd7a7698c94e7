// bus-synth needs registers (run regalloc first).
// RUN: not cain-opt %s -p bus-synth 2>&1 | filecheck %s

scamp5.kernel @k(%0: !scamp5.areg) depth 0 registers ["A", "B"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 1, 0], [0, 0, 0], [0, 0, 0]]> error 0 weights [[0, 1, 0], [0, 0, 0], [0, 0, 0]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg -> !scamp5.areg
  scamp5.output %1 : !scamp5.areg
}

// CHECK: error: bus-synth: kernel @k has no registers yet: run regalloc first
