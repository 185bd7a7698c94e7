// A program longer than emit{max-icws} is printed as a sequence of SDK kernels in one function, each within
// the limit and moved to the heap once recorded; the header says their ICWs and what the host must leave
// free of the SDK's ICW stack. Cuts fall between macros (after expand-bus, never inside an expansion).
// RUN: cain-opt %s -p 'regalloc,emit{max-icws=8}' | filecheck %s
// RUN: cain-opt %s -p 'regalloc,expand-bus,emit{max-icws=8}' | filecheck %s --check-prefix=BUS
// RUN: cain-opt %s -p regalloc,emit | filecheck %s --check-prefix=WHOLE
// RUN: not cain-opt %s -p 'regalloc,emit{max-icws=4}' 2>&1 | filecheck %s --check-prefix=SHORT

scamp5.kernel @"box 1x2"(%0: !scamp5.areg) depth 1 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("pair" -> "B" goal #goal.goal<[[0, 0, 0], [2, -1, 0], [0, 0, 0]]> error 1/10 weights 1/10 [[10, -5, 1]])] {
  %1 = scamp5.div %0 : !scamp5.areg -> !scamp5.areg
  %2 = scamp5.addx %1, %1 west : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %3 = scamp5.movx %1 east : !scamp5.areg -> !scamp5.areg
  %4 = scamp5.sub %3, %2 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %5 = scamp5.neg %4 : !scamp5.areg -> !scamp5.areg
  %6 = scamp5.add %5, %3 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  %7 = scamp5.sub %6, %1 : !scamp5.areg, !scamp5.areg -> !scamp5.areg
  scamp5.output %7 : !scamp5.areg
}

// CHECK:      * 8 macro instructions, 19 ICWs (bus micro-operations)
// CHECK-NEXT: * outputs exact but in the array's outermost ring of pixels (values moved off the array read 0)
// CHECK-NEXT: * run as 3 SDK kernels of at most 8 ICWs each (max-icws), one after the other:
// CHECK-NEXT: *   [[ICWS:[0-9]+, [0-9]+, [0-9]+]] ICWs; the registers keep their values between kernels
// CHECK:      * (move_to_heap): none stays on the SDK's 1024-ICW stack, but recording the longest needs
// CHECK:      */
// CHECK-NEXT: void box_1x2(void) {
// CHECK-NEXT:     // kernel 1 of 3: {{[0-9]+}} ICWs
// CHECK-NEXT:     scamp5_kernel_begin();
// CHECK-NEXT:         scamp5_kernel_api::move_to_heap(true);
// CHECK-NEXT:         div(C, B, A);
// CHECK:          scamp5_kernel_end();
// CHECK-NEXT:     // kernel 2 of 3: {{[0-9]+}} ICWs; live from before: {{[A-F ]+}}
// CHECK-NEXT:     scamp5_kernel_begin();
// CHECK-NEXT:         scamp5_kernel_api::move_to_heap(true);
// CHECK:          // kernel 3 of 3:
// CHECK:              sub(B, A, C);
// CHECK-NEXT:     scamp5_kernel_end();
// CHECK-NEXT: }

// BUS:      void box_1x2(void) {
// BUS-NEXT:     // kernel 1 of 3: {{[0-9]+}} ICWs
// BUS-NEXT:     scamp5_kernel_begin();
// BUS-NEXT:         scamp5_kernel_api::move_to_heap(true);
// BUS-NEXT:         bus2(C, B, A);              // div(C, B, A)
// BUS:          scamp5_kernel_end();
// BUS-NEXT:     // kernel 2 of 3:
// BUS-NEXT:     scamp5_kernel_begin();
// BUS-NEXT:         scamp5_kernel_api::move_to_heap(true);
// BUS-NEXT:         bus({{.*}} // {{.*}}

// WHOLE-NOT:  move_to_heap
// WHOLE-NOT:  run as
// WHOLE:      void box_1x2(void) {
// WHOLE-NEXT:     scamp5_kernel_begin();

// SHORT: error: emit: kernel @box 1x2: no kernel of at most 4 ICWs can end at ICW {{[0-9]+}}: a macro's expansion, or a stretch of micro-ops that keeps a value in NEWS, is longer than that; raise max-icws
