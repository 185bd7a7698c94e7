"""benchmarks.superpixel: its independent recheck, its fuzz cases and the hook for Cain-Java's counts."""

import random
from dataclasses import replace

import cain
from benchmarks.superpixel import fuzz_case, java_counts, kernel_file, recheck
from cain.model.dreg import Word


def test_fuzz_cases_pass_and_the_recheck_catches_a_broken_program(tmp_path):
    rng = random.Random(5)
    outcomes = [fuzz_case((i, kernel_file(rng, i), 80, None, 0))[0] for i in range(3)]
    assert set(outcomes) <= {"passed", "no fit"}
    result = cain.compile("option mode = superpixel\noption tile = 2 2\noutput B = [1 1]\n", budget=60)
    program = result.superpixel
    assert program is not None and recheck(program, 0)
    last = max(i for i, w in enumerate(program.items) if isinstance(w, Word) and w.kind in ("NOR", "OR"))
    assert not recheck(replace(program, items=program.items[:last] + program.items[last + 1 :]), 0)


def test_java_counts_are_empty_without_recorded_results(tmp_path):
    assert java_counts(tmp_path) == {}
