"""Superpixel options of the kernel language and Cain-Java's superpixel JSON configs."""

from pathlib import Path

import pytest

from cain.diagnostics import CainError
from cain.frontend.java_json import parse_filter as parse_json
from cain.frontend.kernel import parse_filter

EXAMPLES = Path(__file__).parents[2] / "examples" / "json" / "superpixel"


def test_defaults_are_a_4x4_tile_of_16_bits_in_a_snake():
    filt = parse_filter("option mode = superpixel\noutput B = [1 1]", "k.cain")
    sp = filt.superpixel
    assert sp is not None and filt.encoding is None
    assert (sp.layout.width, sp.layout.height, sp.bits) == (4, 4, 16)
    assert sp.layout.banks[0][:5] == ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3))
    assert sp.input_banks == (0,) and sp.output_banks == (0,)


def test_options_set_tile_banks_order_bits_and_banks_of_inputs_and_outputs():
    text = (
        "option mode = superpixel\noption tile = 2 4\noption banks = 2\noption bits = 3\n"
        "option input_banks = 1\noption output_banks = 0 1\noutput B = [1 1]\noutput C = [1; 1]"
    )
    sp = parse_filter(text, "k.cain").superpixel
    assert sp is not None and sp.bits == 3 and len(sp.layout.banks) == 2
    assert sp.input_banks == (1,) and sp.output_banks == (0, 1)
    hil = parse_filter(
        "option mode = superpixel\noption tile = 8\noption order = hilbert\noutput B = [1]", "k"
    )
    assert hil.superpixel is not None and hil.superpixel.bits == 64


@pytest.mark.parametrize(
    "options, message",
    [
        ("option tile = 3 4", "powers of 2 from 1 to 64, not .3 4."),
        ("option banks = 3", "do not split a tile 4 rows high"),
        ("option bits = 17", "does not fit a bank of 16 PEs"),
        ("option order = zigzag", "unknown bit order 'zigzag'"),
        ("option output_banks = 1", "output_banks needs one bank"),
        ("option input_banks = 0 0", "input_banks needs one bank"),
    ],
)
def test_bad_superpixel_options_are_clear_errors(options, message):
    with pytest.raises(CainError, match=message):
        parse_filter(f"option mode = superpixel\n{options}\noutput B = [1 1]", "k.cain")


def test_superpixel_options_need_the_mode():
    with pytest.raises(CainError, match="option tile is for superpixels"):
        parse_filter("option tile = 4 4\noutput B = [1 1]", "k.cain")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_cain_java_superpixel_config_is_read(path):
    filt = parse_json(path.read_text(), str(path))
    sp = filt.superpixel
    assert sp is not None and len(filt.kernels) == 1
    assert filt.kernels[0].name == "0:A"
    if path.stem == "boxSmallSuperPixel":
        assert sp.input_banks == (1,) and sp.output_banks == (0,) and sp.bits == 4 and filt.depth == 1


def _config(bit_order: str, registers: str = '"0:A"', extra: str = "") -> str:
    return (
        '{"mode": "superpixel", "filter": {' + registers + ': {"array": [[1, 1]]}},\n'
        '"registerAllocator": {"name": "linearScan", "availableRegisters": [["A"]], "initialRegisters": ["0:A"]},\n'
        '"pairGen": {"width": 2, "height": 2, ' + extra + '"bitOrder": ' + bit_order + "}}"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (
            _config("[[[1, 2], [4, 3]]]", '"2:A"'),
            "output register '2:A' is not \"bank:REG\" with a bank from 0 to 0",
        ),
        (_config("[[[1, 2], [4, 3]]]", '"A"'), 'is not "bank:REG"'),
        (_config("[[[1, 3], [4, 2]]]"), "bit 2 is not next to bit 1"),
        (_config("[[[1, 2], [4, 3]]]", extra='"colour": 1, '), "unknown key 'colour' in 'pairGen'"),
        (_config('[[["a", 2], [4, 3]]]'), "an entry of 'bitOrder' must be an integer"),
        (_config("[[[1.5, 2], [4, 3]]]"), "an entry of 'bitOrder' must be an integer"),
    ],
)
def test_bad_superpixel_configs_are_located_errors(text, message):
    with pytest.raises(CainError, match=message):
        parse_json(text, "bad.json")
