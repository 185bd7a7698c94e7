// verify accepts a correct kernel and leaves it unchanged; it rejects a wrong kernel, a kernel that
// clobbers a live value, and a bus program that does not compute its goal.
// RUN: cain-opt %s --split-input-file -p verify | filecheck %s --check-prefix=OK
// RUN: not cain-opt %S/Inputs/wrong_kernel.mlir -p verify 2>&1 | filecheck %s --check-prefix=WRONG
// RUN: not cain-opt %S/Inputs/clobber.mlir -p verify 2>&1 | filecheck %s --check-prefix=CLOBBER
// RUN: not cain-opt %S/Inputs/wrong_bus.mlir -p verify 2>&1 | filecheck %s --check-prefix=BUS

scamp5.kernel @edge(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("dx" -> "B" goal #goal.goal<[[0, 0, 0], [0, -1, 1], [0, 0, 0]]> error 0 weights [[0, 0, 0], [0, -1, 1], [0, 0, 0]])] {
  %1 = scamp5.subx %0, %0 east : !scamp5.areg<A>, !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}

// OK:      scamp5.kernel @edge
// OK-NEXT:   %1 = scamp5.subx %0, %0 east : !scamp5.areg<A>, !scamp5.areg<A> -> !scamp5.areg<B>

// WRONG:      error: wrong: 1 macros, 2 ICWs: WRONG
// WRONG-NEXT:   error: output 0 (%1) holds [[0, 0, 0], [1, -1, 0], [0, 0, 0]], but its goal is [[0, 0, 0], [0, -1, 1], [0, 0, 0]]

// CLOBBER:      error: clobber: 3 macros, 6 ICWs: WRONG
// CLOBBER-NEXT:   ok: symbolic: every output value holds exactly its goal
// CLOBBER-NEXT:   error: registers: after instruction 1 `%2 = add %0, %1` (add(A, A, B)), register A should hold %0 = [[1]] but holds [[0, 1, 0], [0, 1, 0], [0, 0, 0]]

// BUS:      error: bus: 1 macros, 2 ICWs: WRONG
// BUS-NEXT:   error: output 0 (B) holds [[0, 0, 0], [0, 0, 0], [0, 1, 0]], but its goal is [[0, 1, 0], [0, 0, 0], [0, 0, 0]]
