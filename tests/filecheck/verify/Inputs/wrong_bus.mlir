scamp5.kernel @bus(%0: !scamp5.areg<A>) depth 0 registers ["A", "B"] instructions "all" inputs ["image" -> "A"] outputs [("up" -> "B" goal #goal.goal<[[0, 1, 0], [0, 0, 0], [0, 0, 0]]> error 0 weights [[0, 1, 0], [0, 0, 0], [0, 0, 0]])] attributes {macros = 1 : i64} {
  scamp5.bus XN, A
  scamp5.bus B, NEWS
  scamp5.output
}
