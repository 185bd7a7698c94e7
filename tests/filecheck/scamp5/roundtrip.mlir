// Every scamp5 op prints in its custom syntax and parses back to the same IR.
// RUN: cain-opt %s | filecheck %s
// RUN: cain-opt %s | cain-opt | filecheck %s
// RUN: cain-opt %s --print-op-generic | cain-opt | filecheck %s

scamp5.kernel @ssa(%0: !scamp5.areg) depth 1 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 1, 0], [0, 0, 0], [0, 0, 0]]> error 0 weights 1/2 [[0, 1, 0], [0, 0, 0], [0, 0, 0]])] {
  %1 = scamp5.div %0 : !scamp5.areg -> !scamp5.areg
  %2 = scamp5.movx %1 north : !scamp5.areg -> !scamp5.areg
  scamp5.output %2 : !scamp5.areg
}

// CHECK:      scamp5.kernel @ssa(%0: !scamp5.areg) depth 1 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 1, 0], [0, 0, 0], [0, 0, 0]]> error 0 weights 1/2 [[0, 1, 0], [0, 0, 0], [0, 0, 0]])] {
// CHECK-NEXT:   %1 = scamp5.div %0 : !scamp5.areg -> !scamp5.areg
// CHECK-NEXT:   %2 = scamp5.movx %1 north : !scamp5.areg -> !scamp5.areg
// CHECK-NEXT:   scamp5.output %2 : !scamp5.areg
// CHECK-NEXT: }

scamp5.kernel @every(%a: !scamp5.areg<A>, %b: !scamp5.areg<B>) depth 2 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["x" -> "A", "y" -> "B"] outputs [("p" -> "A" goal #goal.goal<[[1]], [[0]]> error 1/4 weights 1/4 [[1]], [[0]]), ("q" -> "B" goal #goal.goal<[[0]], [[1]]> error 0 weights 1/4 [[0]], [[1]])] attributes {macros = 17 : i64} {
  %0 = scamp5.res : () -> !scamp5.areg<C>
  %1, %2 = scamp5.res2 : () -> !scamp5.areg<D>, !scamp5.areg<E>
  %3 = scamp5.mov %a : !scamp5.areg<A> -> !scamp5.areg<C>
  %4 = scamp5.movx %a east : !scamp5.areg<A> -> !scamp5.areg<A>
  %5 = scamp5.mov2x %4 north west : !scamp5.areg<A> -> !scamp5.areg<C>
  %6 = scamp5.add %5, %b : !scamp5.areg<C>, !scamp5.areg<B> -> !scamp5.areg<C>
  %7 = scamp5.add3 %6, %b, %1 : !scamp5.areg<C>, !scamp5.areg<B>, !scamp5.areg<D> -> !scamp5.areg<A>
  %8 = scamp5.addx %7, %b south : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %9 = scamp5.add2x %8, %b east east : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %10 = scamp5.sub %9, %b : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %11 = scamp5.subx %10, %b west : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %12 = scamp5.sub2x %11, %b north north : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %13 = scamp5.neg %12 : !scamp5.areg<A> -> !scamp5.areg<C>
  %14 = scamp5.divq %13 : !scamp5.areg<C> -> !scamp5.areg<A>
  %15 = scamp5.div %14 scratch C : !scamp5.areg<A> -> !scamp5.areg<D>
  %16 = scamp5.div4 %15 scratch C, E : !scamp5.areg<D> -> !scamp5.areg<A>
  %17 = scamp5.diva %16 scratch C, E : !scamp5.areg<A> -> !scamp5.areg<A>
  scamp5.output %17, %b : !scamp5.areg<A>, !scamp5.areg<B>
}

// CHECK:      scamp5.kernel @every(%a: !scamp5.areg<A>, %b: !scamp5.areg<B>) depth 2 {{.*}} inputs ["x" -> "A", "y" -> "B"] outputs [
// CHECK-NEXT:     ("p" -> "A" goal #goal.goal<[[1]]> error 1/4 weights 1/4 [[1]], [[0]]),
// CHECK-NEXT:     ("q" -> "B" goal #goal.goal<[[0]], [[1]]> error 0 weights 1/4 [[0]], [[1]])
// CHECK-NEXT: ] attributes {macros = 17 : i64} {
// CHECK-NEXT:   %0 = scamp5.res : () -> !scamp5.areg<C>
// CHECK-NEXT:   %1, %2 = scamp5.res2 : () -> !scamp5.areg<D>, !scamp5.areg<E>
// CHECK-NEXT:   %3 = scamp5.mov %a : !scamp5.areg<A> -> !scamp5.areg<C>
// CHECK-NEXT:   %4 = scamp5.movx %a east : !scamp5.areg<A> -> !scamp5.areg<A>
// CHECK-NEXT:   %5 = scamp5.mov2x %4 north west : !scamp5.areg<A> -> !scamp5.areg<C>
// CHECK-NEXT:   %6 = scamp5.add %5, %b : !scamp5.areg<C>, !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   %7 = scamp5.add3 %6, %b, %1 : !scamp5.areg<C>, !scamp5.areg<B>, !scamp5.areg<D> -> !scamp5.areg<A>
// CHECK-NEXT:   %8 = scamp5.addx %7, %b south : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
// CHECK-NEXT:   %9 = scamp5.add2x %8, %b east east : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
// CHECK-NEXT:   %10 = scamp5.sub %9, %b : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
// CHECK-NEXT:   %11 = scamp5.subx %10, %b west : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
// CHECK-NEXT:   %12 = scamp5.sub2x %11, %b north north : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
// CHECK-NEXT:   %13 = scamp5.neg %12 : !scamp5.areg<A> -> !scamp5.areg<C>
// CHECK-NEXT:   %14 = scamp5.divq %13 : !scamp5.areg<C> -> !scamp5.areg<A>
// CHECK-NEXT:   %15 = scamp5.div %14 scratch C : !scamp5.areg<A> -> !scamp5.areg<D>
// CHECK-NEXT:   %16 = scamp5.div4 %15 scratch C, E : !scamp5.areg<D> -> !scamp5.areg<A>
// CHECK-NEXT:   %17 = scamp5.diva %16 scratch C, E : !scamp5.areg<A> -> !scamp5.areg<A>
// CHECK-NEXT:   scamp5.output %17, %b : !scamp5.areg<A>, !scamp5.areg<B>
// CHECK-NEXT: }

scamp5.kernel @micro(%0: !scamp5.areg<A>) depth 0 registers ["A", "B"] instructions "all" inputs ["image" -> "A"] outputs [("out" -> "B" goal #goal.goal<[[0, 0, 0], [0, 0, 1], [0, 0, 0]]> error 0 weights [[0, 0, 0], [0, 0, 1], [0, 0, 0]])] attributes {macros = 1 : i64, icws = 2 : i64} {
  scamp5.bus XW, A {macro = "movx(B, A, east)"}
  scamp5.bus B, NEWS
  scamp5.bus2 A, B, NEWS, XN
  scamp5.bus3 A, B, NEWS, XE
  scamp5.bus NEWS, A, B, XS, XW
  scamp5.bus A
  scamp5.output
}

// CHECK:      scamp5.kernel @micro(%0: !scamp5.areg<A>) depth 0 registers ["A", "B"] {{.*}} attributes {macros = 1 : i64, icws = 2 : i64} {
// CHECK-NEXT:   scamp5.bus XW, A {macro = "movx(B, A, east)"}
// CHECK-NEXT:   scamp5.bus B, NEWS
// CHECK-NEXT:   scamp5.bus2 A, B, NEWS, XN
// CHECK-NEXT:   scamp5.bus3 A, B, NEWS, XE
// CHECK-NEXT:   scamp5.bus NEWS, A, B, XS, XW
// CHECK-NEXT:   scamp5.bus A
// CHECK-NEXT:   scamp5.output
// CHECK-NEXT: }
