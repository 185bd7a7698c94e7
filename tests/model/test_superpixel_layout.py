"""The superpixel layouts and the pattern covers (cain.model.superpixel), checked against the simulator's
own reading of `scamp5_load_pattern`."""

import itertools

import numpy as np
import pytest

from cain.backend.dreg_sim import pattern_plane
from cain.model.dreg import Load
from cain.model.superpixel import (
    LayoutError,
    bit_order_layout,
    carry_flags,
    hilbert,
    load_arguments,
    pattern_cover,
    snake,
)


def _adjacent(bank):
    return all(abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1 for a, b in itertools.pairwise(bank))


@pytest.mark.parametrize("size", [1, 2, 4, 8])
def test_hilbert_visits_every_pe_once_each_next_to_the_last(size):
    layout = hilbert(size)
    (bank,) = layout.banks
    assert sorted(bank) == [(r, c) for r in range(size) for c in range(size)]
    assert bank[0] == (0, 0) and _adjacent(bank)


def test_snake_strips_are_boustrophedon_banks():
    layout = snake(4, 4, 2)
    assert layout.banks[0] == ((0, 0), (0, 1), (0, 2), (0, 3), (1, 3), (1, 2), (1, 1), (1, 0))
    assert layout.banks[1][0] == (2, 0) and layout.bits == 8
    assert layout.offset(0, 1) == (2, 0)


def test_java_bit_order_reads_row_zero_as_north():
    layout = bit_order_layout(
        4, 4, [[[1, 2, 0, 0], [4, 3, 0, 0], [0] * 4, [0] * 4], [[0, 0, 1, 2], [0, 0, 4, 3], [0] * 4, [0] * 4]]
    )
    assert layout.banks[0] == ((0, 0), (0, 1), (1, 1), (1, 0))
    assert layout.offset(1, 0) == (0, -2)


@pytest.mark.parametrize(
    "order, message",
    [
        ([[[1, 2], [3, 4]]], "bit 3 is not next to bit 2"),
        ([[[1, 2], [2, 0]]], "number its PEs 1 to"),
        ([[[1, 2, 3]]], "is not 2 rows of 2 entries"),
    ],
)
def test_bad_bit_orders_are_clear_errors(order, message):
    with pytest.raises(LayoutError, match=message):
        bit_order_layout(2, 2, order)


def test_banks_of_other_shapes_cannot_be_moved_between():
    layout = bit_order_layout(2, 2, [[[1, 2], [0, 0]], [[0, 0], [2, 1]]])
    with pytest.raises(LayoutError, match="not translates"):
        layout.offset(0, 1)


def _loaded(width, height, cubes, size=16):
    plane = np.zeros((size, size), dtype=bool)
    for cube in cubes:
        plane |= pattern_plane(Load("R5", *load_arguments(width, height, cube)), (size, size))
    return plane


@pytest.mark.parametrize("layout", [snake(4, 4), hilbert(4), snake(4, 4, 2), snake(2, 4, 4), hilbert(8)])
def test_carry_flag_covers_set_exactly_the_pes_that_need_them(layout):
    for bank in range(len(layout.banks)):
        for side, (ones, zeros) in carry_flags(layout, bank).items():
            if not ones:
                continue
            plane = _loaded(
                layout.width, layout.height, pattern_cover(layout.width, layout.height, ones, zeros)
            )
            for tile_r in (0, 1):
                for tile_c in (0, 1):
                    for r, c in ones:
                        assert plane[tile_r * layout.height + r, tile_c * layout.width + c], (side, r, c)
                    for r, c in zeros:
                        assert not plane[tile_r * layout.height + r, tile_c * layout.width + c], (side, r, c)


def test_one_pe_per_tile_is_one_load_with_columns_counted_from_the_east():
    others = {(r, c) for r in range(4) for c in range(4)} - {(0, 0)}
    (cube,) = pattern_cover(4, 4, {(0, 0)}, others)
    assert load_arguments(4, 4, cube)[:2] == (0, 3)  # column 0 (west) of a tile is address 3 (mod 4)
    plane = _loaded(4, 4, [cube], size=8)
    assert plane.sum() == 4 and plane[0, 0] and plane[4, 4]
