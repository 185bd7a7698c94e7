// bus-synth lowers an allocated macro kernel straight to bus micro-ops: the halving is one bus2 (the div
// macro spends 5 ICWs), the two-step shift writes a neighbour's NEWS and reads another's, values stay
// negated, and the last sum reads three registers and NEWS in one ICW: 4 ICWs against expand-bus's 13.
// The kernel records both counts; the result parses back and verifies.
// RUN: cain-opt %s -p bus-synth | filecheck %s
// RUN: cain-opt %s -p bus-synth | cain-opt -p verify | filecheck %s
// RUN: cain-opt %s -p 'bus-synth{max-bus2=1}' | filecheck %s
// RUN: not cain-opt %s -p 'bus-synth{max-bus2=0}' 2>&1 | filecheck %s --check-prefix=CAP
// RUN: not cain-opt %s -p expand-bus,bus-synth 2>&1 | filecheck %s --check-prefix=TWICE

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 1 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 0, 0], [0, 1, 0], [0, -1, 1]]> error 0 weights 1/2 [[0, 0, 0], [0, 1, 0], [0, -1, 1]])] {
  %1 = scamp5.div %0 scratch C : !scamp5.areg<A> -> !scamp5.areg<B>
  %2 = scamp5.mov2x %1 east south : !scamp5.areg<B> -> !scamp5.areg<D>
  %3 = scamp5.subx %1, %2 south : !scamp5.areg<B>, !scamp5.areg<D> -> !scamp5.areg<E>
  %4 = scamp5.neg %3 : !scamp5.areg<E> -> !scamp5.areg<C>
  %5 = scamp5.add %4, %1 : !scamp5.areg<C>, !scamp5.areg<B> -> !scamp5.areg<B>
  scamp5.output %5 : !scamp5.areg<B>
}

// CHECK:      scamp5.kernel @k(%0: !scamp5.areg<A>) {{.*}} attributes {macros = 5 : i64, icws = 4 : i64, bus2 = 1 : i64, bus3 = 0 : i64, expansion_icws = 13 : i64} {
// CHECK-NEXT:   scamp5.bus2 C, NEWS, A
// CHECK-NEXT:   scamp5.bus XN, C
// CHECK-NEXT:   scamp5.bus A, XE
// CHECK-NEXT:   scamp5.bus B, C, A, NEWS
// CHECK-NEXT:   scamp5.output
// CHECK-NEXT: }

// CAP: error: bus-synth: kernel @k: no program found with at most 0 bus2/bus3 micro-ops (the macros' expansion has 2); raise max-bus2
// TWICE: error: bus-synth: kernel @k is already at bus level (use bus-synth instead of expand-bus)
