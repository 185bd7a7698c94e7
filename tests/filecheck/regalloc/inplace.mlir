// regalloc reuses a dying operand's register for the result (add(B, C, B)), computes the output
// directly into its pinned register A, and gives each div its scratch register.
// RUN: cain-opt %s -p regalloc | filecheck %s
// RUN: cain-opt %s -p regalloc,verify | filecheck %s

scamp5.kernel @gauss3(%0: !scamp5.areg) depth 4 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "A" goal #goal.goal<[[1, 2, 1], [2, 4, 2], [1, 2, 1]]> error 0 weights 1/16 [[1, 2, 1], [2, 4, 2], [1, 2, 1]])] {
  %1 = scamp5.div %0 : !scamp5.areg -> !scamp5.areg
  %2 = scamp5.div %1 : !scamp5.areg -> !scamp5.areg
  %3 = scamp5.div %2 : !scamp5.areg -> !scamp5.areg
  %4 = scamp5.div %3 : !scamp5.areg -> !scamp5.areg
  %5 = scamp5.movx %4 south : !scamp5.areg -> !scamp5.areg
  %6 = scamp5.add %4, %5 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %7 = scamp5.movx %6 north : !scamp5.areg -> !scamp5.areg
  %8 = scamp5.add %6, %7 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %9 = scamp5.movx %8 east : !scamp5.areg -> !scamp5.areg
  %10 = scamp5.add %8, %9 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %11 = scamp5.movx %10 west : !scamp5.areg -> !scamp5.areg
  %12 = scamp5.add %10, %11 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  scamp5.output %12 : !scamp5.areg
}

// CHECK:      scamp5.kernel @gauss3(%0: !scamp5.areg<A>) {{.*}} attributes {macros = 12 : i64, icws = 36 : i64} {
// CHECK-NEXT:   %1 = scamp5.div %0 scratch C : !scamp5.areg<A> -> !scamp5.areg<B>
// CHECK-NEXT:   %2 = scamp5.div %1 scratch A : !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   %3 = scamp5.div %2 scratch A : !scamp5.areg<C> -> !scamp5.areg<B>
// CHECK-NEXT:   %4 = scamp5.div %3 scratch A : !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   %5 = scamp5.movx %4 south : !scamp5.areg<C> -> !scamp5.areg<B>
// CHECK-NEXT:   %6 = scamp5.add %4, %5 : !scamp5.areg<C>, !scamp5.areg<B> -> !scamp5.areg<B>
// CHECK-NEXT:   %7 = scamp5.movx %6 north : !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   %8 = scamp5.add %6, %7 : !scamp5.areg<B>, !scamp5.areg<C> -> !scamp5.areg<B>
// CHECK-NEXT:   %9 = scamp5.movx %8 east : !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   %10 = scamp5.add %8, %9 : !scamp5.areg<B>, !scamp5.areg<C> -> !scamp5.areg<B>
// CHECK-NEXT:   %11 = scamp5.movx %10 west : !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   %12 = scamp5.add %10, %11 : !scamp5.areg<B>, !scamp5.areg<C> -> !scamp5.areg<A>
// CHECK-NEXT:   scamp5.output %12 : !scamp5.areg<A>
// CHECK-NEXT: }
