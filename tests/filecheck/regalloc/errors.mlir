// When too many values are live, regalloc names the instruction and the register count.
// RUN: not cain-opt %s -p regalloc 2>&1 | filecheck %s
// RUN: not cain-opt %s -p 'regalloc{registers=A,B,C}' 2>&1 | filecheck %s --check-prefix=FEW
// RUN: cain-opt %s -p 'regalloc{registers=A,B,C,D,E,F,G,H},verify' | filecheck %s --check-prefix=MORE
// RUN: not cain-opt %s -p 'regalloc{registers=B,C,D,E,F,G,H}' 2>&1 | filecheck %s --check-prefix=PIN

scamp5.kernel @spread(%0: !scamp5.areg) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("ring" -> "A" goal #goal.goal<[[0, 1, 1], [1, -1, 1], [1, 1, 0]]> error 0 weights [[0, 1, 1], [1, -1, 1], [1, 1, 0]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg -> !scamp5.areg
  %2 = scamp5.movx %0 east : !scamp5.areg -> !scamp5.areg
  %3 = scamp5.movx %0 south : !scamp5.areg -> !scamp5.areg
  %4 = scamp5.movx %0 west : !scamp5.areg -> !scamp5.areg
  %5 = scamp5.mov2x %0 north east : !scamp5.areg -> !scamp5.areg
  %6 = scamp5.mov2x %0 south west : !scamp5.areg -> !scamp5.areg
  %7 = scamp5.neg %0 : !scamp5.areg -> !scamp5.areg
  %8 = scamp5.add3 %1, %2, %3 : !scamp5.areg, !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %9 = scamp5.add3 %4, %5, %6 : !scamp5.areg, !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %10 = scamp5.add3 %7, %8, %9 : !scamp5.areg, !scamp5.areg, !scamp5.areg -> !scamp5.areg
  scamp5.output %10 : !scamp5.areg
}

// CHECK: error: spread: out of registers at instruction 5 `%6 = mov2x %0 south west`: 6 value(s) stay live across it (%0, %1, %2, %3, %4, %5); it needs 1 register(s) besides its operands' for its results and scratch, but only 0 of the 6 registers (A, B, C, D, E, F) are free
// CHECK-SAME: use more registers or a plan with fewer live values

// FEW: error: spread: out of registers at instruction 2 `%3 = movx %0 south`: 3 value(s) stay live across it

// MORE: scamp5.kernel @spread(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F", "G", "H"]
// MORE: %10 = scamp5.add3 %7, %8, %9 : {{.*}} -> !scamp5.areg<A>

// PIN: error: spread: input %0 is pinned to register A, which is not in the register file (B, C, D, E, F, G, H)
