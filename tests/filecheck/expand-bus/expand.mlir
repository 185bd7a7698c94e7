// expand-bus turns every macro into its bus micro-ops (reference/scamp5.md section 4) and records
// the macro and ICW counts on the kernel; the result still verifies.
// RUN: cain-opt %s -p expand-bus | filecheck %s
// RUN: cain-opt %s -p expand-bus,verify | cain-opt | filecheck %s

scamp5.kernel @k(%0: !scamp5.areg<A>) depth 1 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 0, 0], [0, 1, 0], [0, -1, 1]]> error 0 weights 1/2 [[0, 0, 0], [0, 1, 0], [0, -1, 1]])] {
  %1 = scamp5.div %0 scratch C : !scamp5.areg<A> -> !scamp5.areg<B>
  %2 = scamp5.mov2x %1 east south : !scamp5.areg<B> -> !scamp5.areg<D>
  %3 = scamp5.subx %1, %2 south : !scamp5.areg<B>, !scamp5.areg<D> -> !scamp5.areg<E>
  %4 = scamp5.neg %3 : !scamp5.areg<E> -> !scamp5.areg<C>
  %5 = scamp5.add %4, %1 : !scamp5.areg<C>, !scamp5.areg<B> -> !scamp5.areg<B>
  scamp5.output %5 : !scamp5.areg<B>
}

// CHECK:      scamp5.kernel @k(%0: !scamp5.areg<A>) {{.*}} attributes {macros = 5 : i64, icws = 13 : i64} {
// CHECK-NEXT:   scamp5.bus2 B, C, A {macro = "div(B, C, A)"}
// CHECK-NEXT:   scamp5.bus NEWS, A, C
// CHECK-NEXT:   scamp5.bus A, NEWS, B
// CHECK-NEXT:   scamp5.bus2 B, C, A
// CHECK-NEXT:   scamp5.bus B, C
// CHECK-NEXT:   scamp5.bus XW, B {macro = "mov2x(D, B, east, south)"}
// CHECK-NEXT:   scamp5.bus D, XS
// CHECK-NEXT:   scamp5.bus XN, B {macro = "subx(E, B, south, D)"}
// CHECK-NEXT:   scamp5.bus E, NEWS, D
// CHECK-NEXT:   scamp5.bus NEWS {macro = "neg(C, E)"}
// CHECK-NEXT:   scamp5.bus C, NEWS, E
// CHECK-NEXT:   scamp5.bus NEWS, C, B {macro = "add(B, C, B)"}
// CHECK-NEXT:   scamp5.bus B, NEWS
// CHECK-NEXT:   scamp5.output
// CHECK-NEXT: }
