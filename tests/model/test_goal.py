"""The goal representation: canonical form, arithmetic, translation and matrices."""

from cain.model.goal import Goal

GAUSS = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]


def test_canonical_form_merges_and_drops_zeros():
    g = Goal([((0, 0, 0), 2), ((1, 0, 0), 1), ((0, 0, 0), -2)])
    assert g == Goal({(1, 0, 0): 1})
    assert hash(g) == hash(Goal({(1, 0, 0): 1}))
    assert not Goal({(0, 0, 0): 0})


def test_matrix_orientation_row0_is_north_column0_is_west():
    g = Goal.from_matrices([[[0, 5, 0], [0, 0, 0], [7, 0, 0]]])
    assert g.as_dict() == {(0, 1, 0): 5, (-1, -1, 0): 7}
    assert g.matrices() == [[[0, 5, 0], [0, 0, 0], [7, 0, 0]]]


def test_even_sized_matrix_centre_is_below_right_of_middle():
    g = Goal.from_matrices([[[1, 2], [3, 4]]])
    assert g.as_dict() == {(-1, 1, 0): 1, (0, 1, 0): 2, (-1, 0, 0): 3, (0, 0, 0): 4}


def test_arithmetic_and_totals():
    g = Goal.from_matrices([GAUSS])
    assert g.total == 16
    assert (g - g) == Goal()
    assert (-g).total == 16 and (-g).count((0, 0, 0)) == -4
    assert g.scaled(2).halved() == g
    assert Goal({(0, 0, 0): 3}).halved() is None


def test_shift_moves_every_atom():
    g = Goal.from_matrices([GAUSS])
    moved = g.shifted((1, -1))
    assert moved.count((1, -1, 0)) == 4
    assert moved.shifted((-1, 1)) == g
    assert moved.bounds() == (0, 2, -2, 0)


def test_multichannel_matrices():
    g = Goal({(0, 0, 1): -1, (1, 0, 0): 2})
    assert g.channels == 2
    assert g.matrices() == [[[0, 0, 0], [0, 0, 2], [0, 0, 0]], [[0, 0, 0], [0, -1, 0], [0, 0, 0]]]
