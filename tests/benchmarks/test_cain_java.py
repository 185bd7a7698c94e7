"""The Cain-Java side of the suite, without Java: its configs read back as the same filters, its printed
report and C code read as a verified `Program`, and a missing build is a reason, not a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import cain_java, suite
from cain.backend.verify import VerificationError, verify_for_filter
from cain.frontend.java_json import parse_filter as parse_json
from cain.frontend.kernel import parse_filter

SOBEL = parse_filter(
    "filter sobel\ninput A\noutput gx -> A = 1/8 [1 0 -1; 2 0 -2; 1 0 -1]\n"
    "output gy -> B = 1/8 [1 2 1; 0 0 0; -1 -2 -1]\n",
    "sobel.cain",
)

REPORT = """\
Approximation Depth     : 3
Found new Plan (id:0): Length: 13 (10) | max-Circuit-Depth: 8 | Cost: 13
Worker 1 Finished:  Active: true,  Min Depth: 1,  Max Depth: 12,  PlansFound: 1, CacheHits: 82,  CacheChecks: 220,  Steals: 1, NodesExpanded: 137
Worker 0 Finished:  Active: true,  Min Depth: 1,  Max Depth: 12,  PlansFound: 3, CacheHits: 463,  CacheChecks: 905,  Steals: 0, NodesExpanded: 439
Plan: 0 Cost: 13 (length=13) (circuit-maxDepth=[7, 8]) found at 1146ms after locally searching 10 nodes
Plan: 1 Cost: 13 (length=13) (circuit-maxDepth=[8, 8]) found at 1192ms after locally searching 11 nodes
Plan: 2 Cost: 12 (length=12) (circuit-maxDepth=[8, 7]) found at 1654ms after locally searching 155 nodes
Best Plan:
length: 12 Cost: 12
/*Kernel Code!*/
/*Inputs in: [A]*/
scamp5_kernel_begin(); 
diva(A, B, C); 
diva(A, B, C); 
diva(A, B, C); 
neg(B, A); 
subx(C, A, west, B); 
subx(D, A, east, B); 
subx(B, B, south, A); 
movx(A, B, north); 
addx(C, C, D, south); 
addx(B, B, A, west); 
sub2x(A, B, east, east, B); 
sub2x(B, C, north, north, C); 
/*Null Instruction: [] <- [A, B]*/
scamp5_kernel_end(); 
"""
"""Cain-Java's report of the Sobel pair (examples/recommendedAnalogue.json, 3 s, 2 workers), shortened."""


def test_configs_read_back_as_the_suite_filters():
    entries = {f.name: f for f in suite.build_suite()}
    for name in ("gauss5x5", "kirsch4", "mc3_blur", "box3x3_ninth", "roberts_pair"):
        filt = entries[name].load()
        config = cain_java.java_config(filt, seconds=60, workers=2)
        assert config["runConfig"]["searchTime"] == 60000 and config["runConfig"]["workers"] == 2
        assert config["pairGen"]["strategy"]["threshold"] == 10
        back = parse_json(json.dumps(config), f"{name}.json")
        assert back.depth == filt.depth
        assert [(k.register, k.goal) for k in back.kernels] == [(k.register, k.goal) for k in filt.kernels]
        assert [r for _, r in back.inputs] == [r for _, r in filt.inputs]
        assert back.registers == filt.registers and back.instruction_set == filt.instruction_set


def test_report_and_code_read_as_a_verified_program():
    out = cain_java.parse_output(REPORT)
    assert (out.length, out.depth, out.nodes) == (12, 3, 576)
    assert [(e["macros"], e["seconds"]) for e in out.events] == [(13, 1.146), (12, 1.654)]
    program = cain_java.program_from_c(out.code, SOBEL)
    assert program.macros == 12
    assert [i.macro for i in program.instrs[:4]] == ["diva", "diva", "diva", "neg"]
    assert program.instrs[4].directions == ("west",) and program.instrs[10].directions == ("east", "east")
    assert program.icws == 3 * 5 + 2 * 7 + 2 * 2
    assert verify_for_filter(program, SOBEL).ok


def test_code_that_computes_something_else_does_not_verify():
    wrong = REPORT.replace("movx(A, B, north)", "movx(A, B, south)")
    program = cain_java.program_from_c(cain_java.parse_output(wrong).code, SOBEL)
    with pytest.raises(VerificationError):
        verify_for_filter(program, SOBEL)


def test_code_outside_the_instruction_table_is_an_error():
    with pytest.raises(cain_java.CodeError, match="no macro"):
        cain_java.program_from_c("scamp5_kernel_begin(); blur(A, B); scamp5_kernel_end();", SOBEL)
    with pytest.raises(cain_java.CodeError, match="holds no value"):
        cain_java.program_from_c("add(B, A, E);", SOBEL)
    with pytest.raises(cain_java.CodeError, match="never sets"):
        cain_java.program_from_c("mov(C, A);", SOBEL)


def test_no_build_is_a_reason(tmp_path: Path):
    assert "no Cain-Java checkout" in cain_java.find_cain_java(None, "1g")
    reason = cain_java.find_cain_java(tmp_path, "1g")
    assert isinstance(reason, str) and "build.sh" in reason
