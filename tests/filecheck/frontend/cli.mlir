// cain-opt's help, version and usage errors.
// RUN: cain-opt --help | filecheck %s --check-prefix=HELP
// RUN: cain-opt --version | filecheck %s --check-prefix=VERSION
// RUN: not cain-opt %examples/gauss3x3.cain -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not cain-opt %S/no-such-file.cain 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: cain-opt %examples/gauss3x3.cain | not cain-opt --max-depth 3 2>&1 | filecheck %s --check-prefix=IR-OVERRIDE
// RUN: not cain-opt %examples/gauss3x3.cain --max-depth=-2 2>&1 | filecheck %s --check-prefix=USAGE

// HELP:      usage: cain-opt
// HELP:      --pass-pipeline PASSES
// HELP:      kernel file options (override the file's `option` lines):
// HELP-NEXT:   --max-depth N
// HELP:        --max-error X
// HELP:        --registers A,B,...
// HELP:        --instruction-set basic|all
// HELP:      passes (run in the order given, e.g. --pass-pipeline=search,regalloc,emit):
// HELP:      pass options go in braces

// VERSION: cain-opt (xDSL 0.74.0)

// PASS: error: unknown pass 'no-such-pass' (available passes: convert-linalg-to-goal, search, regalloc, expand-bus, bus-synth, verify, digital, digital-plan, lower-dreg, emit)
// PASS-NOT: Traceback

// MISSING: error: cannot read '{{.*}}no-such-file.cain': no such file

// IR-OVERRIDE: error: --max-depth: only for kernel files (.cain, .json); IR input already holds its approximated goals

// USAGE: cain-opt: error: argument --max-depth: max_depth must be an integer >= 0, not '-2'
