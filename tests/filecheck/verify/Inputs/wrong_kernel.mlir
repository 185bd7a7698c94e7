scamp5.kernel @wrong(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("dx" -> "B" goal #goal.goal<[[0, 0, 0], [0, -1, 1], [0, 0, 0]]> error 0 weights [[0, 0, 0], [0, -1, 1], [0, 0, 0]])] {
  %1 = scamp5.subx %0, %0 west : !scamp5.areg<A>, !scamp5.areg<A> -> !scamp5.areg<B>
  scamp5.output %1 : !scamp5.areg<B>
}
