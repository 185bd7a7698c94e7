// Mistakes in JSON configs are reported at their line and column, with what to change.
// RUN: not cain-opt %S/Inputs/ragged.json 2>&1 | filecheck %s --check-prefix=RAGGED
// RUN: not cain-opt %S/Inputs/syntax.json 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not cain-opt %S/Inputs/unknown_key.json 2>&1 | filecheck %s --check-prefix=KEY
// RUN: not cain-opt %S/Inputs/bad_ops.json 2>&1 | filecheck %s --check-prefix=OPS
// RUN: not cain-opt %examples/json/gauss3x3.json --max-depth 2 2>&1 | filecheck %s --check-prefix=DEPTH

// RAGGED:      ragged.json:5:17: error: ragged array: row 2 of kernel 'A' has 2 entries but row 1 has 3 entries; every row needs the same number of entries
// RAGGED-NEXT: {{^}}                [2, 4],
// RAGGED-NEXT: {{^}}                ^

// SYNTAX:      syntax.json:2:26: error: JSON syntax error: expecting ',' delimiter
// SYNTAX-NEXT: {{^}}  "filter": {"A": [[1, 2 1]]},
// SYNTAX-NEXT: {{^}}                         ^

// KEY: unknown_key.json:4:37: error: unknown key 'threads' in 'runConfig' (known keys: searchTime, timeOut, workers,

// OPS: bad_ops.json:4:69: error: unknown instruction set 'fast' in 'ops' (choose from basic, all)

// DEPTH: gauss3x3.json:3:28: error: the kernels cannot be represented within maxApproximationError = 0: at --max-depth = 2 the total error is 3/4 (~0.75); raise --max-depth or maxApproximationError
