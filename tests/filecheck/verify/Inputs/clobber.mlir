scamp5.kernel @clobber(%0: !scamp5.areg<A>) depth 0 registers ["A", "B", "C", "D", "E", "F"] instructions "all" inputs ["image" -> "A"] outputs [("n" -> "C" goal #goal.goal<[[-1]]> error 0 weights [[-1]]), ("s" -> "A" goal #goal.goal<[[0, 1, 0], [0, 1, 0], [0, 0, 0]]> error 0 weights [[0, 1, 0], [0, 1, 0], [0, 0, 0]])] {
  %1 = scamp5.movx %0 north : !scamp5.areg<A> -> !scamp5.areg<B>
  %2 = scamp5.add %0, %1 : !scamp5.areg<A>, !scamp5.areg<B> -> !scamp5.areg<A>
  %3 = scamp5.neg %0 : !scamp5.areg<A> -> !scamp5.areg<C>
  scamp5.output %3, %2 : !scamp5.areg<C>, !scamp5.areg<A>
}
