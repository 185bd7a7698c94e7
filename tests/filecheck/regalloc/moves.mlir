// Two outputs holding one value need a copy: regalloc adds a mov and updates the macro count.
// RUN: cain-opt %s -p regalloc,verify | filecheck %s

scamp5.kernel @twice(%0: !scamp5.areg) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [
    ("left" -> "B" goal #goal.goal<[[0, 0, 0], [1, 0, 0], [0, 0, 0]]> error 0 weights [[0, 0, 0], [1, 0, 0], [0, 0, 0]]),
    ("copy" -> "C" goal #goal.goal<[[0, 0, 0], [1, 0, 0], [0, 0, 0]]> error 0 weights [[0, 0, 0], [1, 0, 0], [0, 0, 0]])
] {
  %1 = scamp5.movx %0 west : !scamp5.areg -> !scamp5.areg
  scamp5.output %1, %1 : !scamp5.areg, !scamp5.areg
}

// CHECK:      scamp5.kernel @twice(%0: !scamp5.areg<A>) {{.*}} outputs [
// CHECK-NEXT:     ("left" -> "B" goal #goal.goal<[[0, 0, 0], [1, 0, 0], [0, 0, 0]]> error 0 weights [[0, 0, 0], [1, 0, 0], [0, 0, 0]]),
// CHECK-NEXT:     ("copy" -> "C" goal #goal.goal<[[0, 0, 0], [1, 0, 0], [0, 0, 0]]> error 0 weights [[0, 0, 0], [1, 0, 0], [0, 0, 0]])
// CHECK-NEXT: ] attributes {macros = 2 : i64, icws = 4 : i64} {
// CHECK-NEXT:   %1 = scamp5.movx %0 west : !scamp5.areg<A> -> !scamp5.areg<B>
// CHECK-NEXT:   %2 = scamp5.mov %1 : !scamp5.areg<B> -> !scamp5.areg<C>
// CHECK-NEXT:   scamp5.output %1, %2 : !scamp5.areg<B>, !scamp5.areg<C>
