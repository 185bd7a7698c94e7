"""Counting Cain-Java's superpixel C without Java: ICWs, pattern loads, kernels and the suspected defects of
a fixed snippet in its style; and, where a Cain-Java build is found, one example run end to end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import cain_java
from benchmarks import superpixel_java as sp

CODE = """\
scamp5_kernel_begin(); 
/*Kernel Code!*/
/*/*SP movb(1.A, 1.C)*/ */
CLR(R[north], R[east], R[south], R[west]); 
SET(R[west], R[mask]); 
DNEWS0(R[scratch1], C); 
CLR(R[north], R[east], R[south], R[west]); 
SET(R[north], R[mask]); 
DNEWS0(R[scratch1], R[scratch1]); 
DNEWS0(R[masked], R[scratch1]); 
scamp5_kernel_end(); 
scamp5_select_pattern(0x00, 0x00, 0xfd, 0xfd); 
scamp5_kernel_begin(); 
NOT(R[mask], R[select]); 
MOV(R[masked], A); 
MOV(A, R[masked]); 
/*
/* Bit 1 */*/
scamp5_kernel_end(); 
scamp5_load_pattern(R[mask], 0x00, 0x01, 0xfc, 0xfc); 
scamp5_kernel_begin(); 
OR(R[scratch1], R[north], R[east], R[south], R[west]); 
NOR(R[north], C, A); 
NOT(B); 
where(A); 
MOV(R[masked], R[flag]); 
all(); 
scamp5_kernel_end(); 
scamp5_in(B, -128); 
scamp5_kernel_begin(); 
scamp5_kernel_end(); 
/* ops: 20, selects: 2, comments: 4, other: 8  */
"""

CONFIG = {
    "pairGen": {
        "width": 4,
        "height": 4,
        "northReg": "R[north]",
        "eastReg": "R[east]",
        "southReg": "R[south]",
        "westReg": "R[west]",
        "bitOrder": [
            [[1, 2, 0, 0], [4, 3, 0, 0], [0] * 4, [0] * 4],
            [[0, 0, 1, 2], [0, 0, 4, 3], [0] * 4, [0] * 4],
        ],
    }
}
PLAN = (
    "Best Plan: \n3: Step<0>{goalPair={T:SP Movxb (0, 1) (1 -> 0) => (ArrayGoal{bank=0})\nlength: 3 Cost: 9\n"
)


def test_count_code():
    count = sp.count_code(CODE)
    # 13 one-word DREG words, and NOT(B), the SDK's two-word in-place form
    assert (count.icws, count.pattern_loads, count.kernels, count.empty_kernels) == (15, 2, 4, 1)
    assert count.words == {"CLR": 2, "SET": 2, "DNEWS0": 3, "NOT": 3, "MOV": 3, "OR": 1, "NOR": 1}
    assert (count.load_pattern, count.select_pattern) == (1, 1)
    assert count.analogue == {"where": 1, "all": 1} and count.host == {"scamp5_in": 1}
    assert count.outside_kernel == [] and count.unknown == []


def test_defects_of_the_snippet():
    found = sp.defects(PLAN, CODE, CONFIG)
    assert found["stray_comment_ends"] == 2
    assert found["in_place_words"] == ["DNEWS0(R[scratch1], R[scratch1]);"]
    # bank 1 -> 0 is 2 PEs in -x, one tile 4 PEs in y; the C reads west once and north twice, where
    # Cain-Java's rule would read east twice and north four times
    (move,) = found["movxb"]
    assert move["bank_offset"] == [-2, 0] and move["pe_offset"] == [-2, 4]
    assert move["reads"] == ["west x1", "north x2"] and not move["matches_rule"]
    assert found["dreg_and_areg_names"] == ["A", "B"]


def test_words_outside_a_kernel_are_listed():
    count = sp.count_code("MOV(A, B); scamp5_kernel_begin(); FOO(A); scamp5_kernel_end();")
    assert count.outside_kernel == ["MOV(A, B);"] and count.unknown == ["FOO(A);"] and count.icws == 1


@pytest.mark.slow
def test_an_example_runs_when_java_is_built():
    checkout = os.environ.get(cain_java.ENVIRONMENT)
    tool = cain_java.find_cain_java(Path(checkout) if checkout else None, "2g")
    if isinstance(tool, str):
        pytest.skip(tool)
    example = Path(checkout) / "examples" / "SuperPixel-3-3-a.json"
    if not example.is_file():
        pytest.skip(f"no {example}: the superpixel examples are in Cain-Java from 3dc1981 on")
    run = sp.java_superpixel(example, seconds=1, workers=1, tool=tool)
    assert run.status == "ok", run.error
    assert run.icws + run.pattern_loads == run.java_ops and run.pattern_loads == run.java_selects
    assert run.cost > 0 and run.kernels > 0 and run.defects["stray_comment_ends"] > 0
