"""The ADC before and the DAC after a superpixel kernel, run with it in the DREG and ideal analogue
simulators and compared with the integer correlation on the tile grid."""

from dataclasses import replace

import numpy as np
import pytest

import cain
from cain.backend.adc_dac import Analogue, run_mixed
from cain.backend.superpixel import adc_images, dac_value, verify_superpixel
from cain.diagnostics import CainError
from cain.frontend.kernel import parse_filter
from cain.model.dreg import DREGS

KERNEL = "option mode = superpixel\noption tile = {tile}\noption adc = A {adc}\noption dac = B {dac}\noutput D = {k}\n"


def pipeline(program, tiles: np.ndarray, seed: int = 3) -> np.ndarray:
    """The DAC's register on every PE after the emitted items run on analogue tile values (one per tile,
    on each of its PEs), every other register random."""
    lay, rng = program.layout, np.random.default_rng(seed)
    shape = (tiles.shape[0], tiles.shape[1] * lay.height, tiles.shape[2] * lay.width)
    dregs = {r: rng.random(shape) < 0.5 for r in DREGS}
    analogue = {r: rng.uniform(-128, 128, shape) for r in ("A", "B", "C", "D", "E", "F", "NEWS")}
    analogue["A"] = np.repeat(np.repeat(tiles, lay.height, -2), lay.width, -1)
    run_mixed(program.items, dregs, analogue, rng)
    return analogue["B"]


@pytest.mark.parametrize(
    ("tile", "adc", "dac"), [("4 4", "8 1", "8 1"), ("2 2", "4", "4"), ("4 2", "6 0", "4 2")]
)
def test_identity_converts_back_exactly(tile, adc, dac):
    program = cain.compile(KERNEL.format(tile=tile, adc=adc, dac=dac, k="[1]"), budget=40).superpixel
    assert program is not None and program.superpixel.adc and program.superpixel.dac
    tiles, levels = adc_images(program.superpixel.adc, 1, 5, np.random.default_rng(0))
    got = pipeline(program, tiles[0])
    a, d = program.superpixel.adc, program.superpixel.dac
    value = (levels[0] + (1 << (a.bits - 1))) << a.unit  # the ADC's offset-binary bits
    window = (value >> d.unit) % (1 << d.bits)
    want = np.where(window >= 1 << (d.bits - 1), window - (1 << d.bits), window)
    lay = program.layout
    assert (got == np.repeat(np.repeat(want, lay.height, -2), lay.width, -1)).all()


def test_sobel_pipeline_is_the_integer_correlation():
    program = cain.compile(
        KERNEL.format(tile="4 4", adc="8 1", dac="8 1", k="[1 0 -1; 2 0 -2; 1 0 -1]"), budget=60
    )
    program = program.superpixel
    a, d = program.superpixel.adc, program.superpixel.dac
    tiles, levels = adc_images(a, 1, 8, np.random.default_rng(5))
    got = pipeline(program, tiles[0])
    want = dac_value(d, program.expected(((levels + 128) << 1).astype(np.uint64))[0])
    got = got[..., :: program.layout.height, :: program.layout.width]
    assert (got[..., 1:-1, 1:-1] == want[..., 1:-1, 1:-1]).all()
    assert np.abs(want).max() > 100  # the test reaches the DAC's upper bits


def test_a_wrong_converter_is_caught():
    program = cain.compile(KERNEL.format(tile="4 4", adc="8 1", dac="8 1", k="[1 1]"), budget=40).superpixel
    items = list(program.items)
    for bad in (-16, 4):  # a wrong ADC threshold, a wrong DAC weight
        k = next(
            i
            for i, it in enumerate(items)
            if isinstance(it, Analogue) and it.kind == "in" and it.value == bad
        )
        wrong = replace(program, items=[*items[:k], replace(items[k], value=bad - 1), *items[k + 1 :]])
        with pytest.raises(CainError, match="wrongly"):
            verify_superpixel(wrong)


def test_cain_java_adc_and_dac_keys_are_generated():
    result = cain.compile("examples/json/superpixel/SuperPixel-3-2-a-sobel.json", budget=60)
    sp = result.superpixel.superpixel
    assert (sp.adc.register, sp.adc.scratch, sp.adc.bits, sp.adc.unit) == ("A", "B", 8, 0)
    assert (sp.dac.register, sp.dac.bits, sp.dac.unit) == ("A", 8, 0)
    for call in ("scamp5_in(B, -128);", "where(A);", "FLAG);", "WHERE(R", "add(A, A, B);", "ALL();"):
        assert call in result.c
    assert "not generated" not in result.c


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("option adc = A 9\noutput D = [1]", "adc must be an analogue register"),
        ("option adc = G\noutput D = [1]", "adc must be an analogue register"),
        ("option adc = A 8 10\noutput D = [1]", "do not fit a bank of 16 bits"),
        ("option dac = A\noption analogue_scratch = A\noutput D = [1]", "cannot be analogue_scratch too"),
        ("option dac = A\noutput D = [1]\noutput E = [1 1]", "dac converts one kernel"),
    ],
)
def test_converter_options_are_checked(options, message):
    with pytest.raises(CainError, match=message):
        parse_filter(f"option mode = superpixel\n{options}\n", "k.cain")
