"""Bias and ReLU after a superpixel kernel (Cain-Java's `bias` and `activation`), verified bit for bit."""

import numpy as np
import pytest

import cain
from cain.diagnostics import CainError
from cain.frontend.java_json import parse_filter as parse_json
from cain.frontend.kernel import parse_filter


@pytest.mark.parametrize("tile", ["2 2", "4 4", "1 1"])
def test_bias_and_relu_are_verified_on_the_tile_grid(tile):
    text = f"option mode = superpixel\noption tile = {tile}\noption bias = -3\noption activation = relu\noutput D = [1 -1]\n"
    result = cain.compile(text, budget=60)
    program = result.superpixel
    assert program is not None and program.superpixel.bias == (-3,) and program.superpixel.relu == (True,)
    images = np.random.default_rng(1).integers(0, 1 << min(program.superpixel.bits, 8), size=(1, 2, 6, 6))
    got = program.run(images.astype(np.uint64))[0].astype(np.int64)
    want = program.expected(images.astype(np.uint64))[0].astype(np.int64)
    assert (got[..., :, :-1] == want[..., :, :-1]).all()
    half = 1 << (program.superpixel.bits - 1)
    assert (want < half).all()  # no negative value survives the ReLU


def test_a_bias_is_in_the_kernel_units():
    filt = parse_filter("option mode = superpixel\noption bias = 1/2\noutput B = 1/2 [1 1]", "k.cain")
    assert filt.superpixel is not None and filt.depth == 1 and filt.superpixel.bias == (1,)
    with pytest.raises(CainError, match="must be a whole number"):
        parse_filter("option mode = superpixel\noption bias = 1/4\noutput B = 1/2 [1 1]", "k.cain")
    with pytest.raises(CainError, match="unknown activation 'tanh'"):
        parse_filter("option mode = superpixel\noption activation = tanh\noutput B = [1 1]", "k.cain")


def test_cain_java_bias_and_relu_keys_are_read(tmp_path):
    text = (
        '{"mode": "superpixel", "filter": {"0:A": {"array": [[1, 1]]}},\n'
        '"registerAllocator": {"name": "linearScan", "availableRegisters": [["A"]], "initialRegisters": ["0:A"]},\n'
        '"pairGen": {"width": 2, "height": 2, "bitOrder": [[[1, 2], [4, 3]]],\n'
        '  "bias": {"unitBit": 2, "weights": [-1.5], "biasReg": "B", "inRegisters": ["0:A"], "outRegisters": ["0:C"]},\n'
        '  "activation": {"name": "relu", "registers": ["0:A"]}}}'
    )
    sp = parse_json(text, "extras.json").superpixel
    assert sp is not None and sp.bias == (-3,) and sp.relu == (True,)
    path = tmp_path / "extras.json"
    path.write_text(text)
    result = cain.compile(str(path), budget=60)
    assert "then 0:A: + -3 and ReLU (negative -> 0)" in result.c
