// Pinned registers: the input arrives in D and the output is computed straight into C (no mov);
// a halving whose result must stay in its operand's register uses diva.
// RUN: cain-opt %s -p regalloc | filecheck %s

scamp5.kernel @pinned(%0: !scamp5.areg) depth 1 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "D"] outputs [("out" -> "C" goal #goal.goal<[[0, 1, 0], [0, 1, 0], [0, 0, 0]]> error 0 weights 1/2 [[0, 1, 0], [0, 1, 0], [0, 0, 0]])] {
  %1 = scamp5.div %0 : !scamp5.areg -> !scamp5.areg
  %2 = scamp5.movx %1 north : !scamp5.areg -> !scamp5.areg
  %3 = scamp5.add %1, %2 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  scamp5.output %3 : !scamp5.areg
}

// CHECK:      scamp5.kernel @pinned(%0: !scamp5.areg<D>) {{.*}} attributes {macros = 3 : i64, icws = 9 : i64} {
// CHECK-NEXT:   %1 = scamp5.div %0 scratch B : !scamp5.areg<D> -> !scamp5.areg<A>
// CHECK-NEXT:   %2 = scamp5.movx %1 north : !scamp5.areg<A> -> !scamp5.areg<B>
// CHECK-NEXT:   %3 = scamp5.add %1, %2 : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   scamp5.output %3 : !scamp5.areg<C>

scamp5.kernel @halve(%0: !scamp5.areg) depth 1 registers ["A", "B", "C"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "A" goal #goal.goal<[[1]]> error 0 weights 1/2 [[1]])] {
  %1 = scamp5.div %0 : !scamp5.areg -> !scamp5.areg
  scamp5.output %1 : !scamp5.areg
}

// CHECK:      scamp5.kernel @halve(%0: !scamp5.areg<A>) depth 1 registers ["A", "B", "C"]
// CHECK-NEXT:   %1 = scamp5.diva %0 scratch B, C : !scamp5.areg<A> -> !scamp5.areg<A>
// CHECK-NEXT:   scamp5.output %1 : !scamp5.areg<A>
