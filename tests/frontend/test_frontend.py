"""The kernel language: parsing, checking, approximation, options, and error reports with locations."""

from fractions import Fraction as F
from pathlib import Path
from random import Random

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from cain.diagnostics import CainError
from cain.frontend.kernel import lower_source, parse_filter
from cain.model.goal import Goal

EXAMPLES = Path(__file__).parents[2] / "examples"


def parse(text: str, overrides=None, filename="test.cain"):
    return parse_filter(text, filename, overrides)


def error_of(text: str, overrides=None) -> CainError:
    with pytest.raises(CainError) as info:
        parse(text, overrides)
    return info.value


# -- examples -------------------------------------------------------------------------------------


def test_every_example_parses():
    names = sorted(p.stem for p in EXAMPLES.glob("*.cain"))
    for required in ["gauss3x3", "gauss5x5", "gauss5x5_3x3", "analognet2", "sobel", "laplacian", "box3x3"]:
        assert required in names
    for path in EXAMPLES.glob("*.cain"):
        f = parse_filter(path.read_text(), str(path))
        assert f.name == path.stem
        assert f.kernels and all(k.goal for k in f.kernels)
    assert any(len(parse_filter(p.read_text(), str(p)).inputs) > 1 for p in EXAMPLES.glob("*.cain"))


def test_table1_filters():
    f = parse_filter((EXAMPLES / "analognet2.cain").read_text(), "analognet2.cain")
    assert f.depth == 2 and f.inputs == (("A", "A"),)
    assert [k.register for k in f.kernels] == ["A", "B", "C"]
    assert f.final_goals() == [
        Goal.from_matrices([[[0, 0, 0], [-3, 1, 0], [-3, 0, 2]]]),
        Goal.from_matrices([[[-4, -1, 1], [-1, 2, 0], [1, 1, 0]]]),
        Goal.from_matrices([[[-1, 2, 0], [-1, 1, -3], [0, -3, 0]]]),
    ]
    assert f.initial_goals() == [Goal({(0, 0, 0): 4})]
    both = parse_filter((EXAMPLES / "gauss5x5_3x3.cain").read_text(), "gauss5x5_3x3.cain")
    assert both.depth == 6
    assert both.kernels[1].goal == Goal.from_matrices([[[4, 8, 4], [8, 16, 8], [4, 8, 4]]])
    assert both.kernels[0].goal.total == 66 and both.kernels[1].goal.total == 64  # as in the paper


# -- the language ---------------------------------------------------------------------------------


def test_row_zero_is_north_and_column_zero_is_west():
    f = parse("output corner -> A = [0 0 1; 0 0 0; 0 0 0]")
    assert f.kernels[0].goal == Goal({(1, 1, 0): 1})  # north-east
    f = parse("output corner -> A = [0 0 0; 0 0 0; 1 0 0]")
    assert f.kernels[0].goal == Goal({(-1, -1, 0): 1})  # south-west


def test_goal_computes_the_kernel_as_a_correlation():
    """Applying the goal / 2^d to an image equals correlating the written weights, within the error."""
    f = parse("output k -> A = 1/8 [1 -2 3; 0 5 -1]\noption max_error = 1/4")
    weights = np.array(f.kernels[0].weights[0], dtype=float)
    rng = np.random.default_rng(0)
    image = rng.uniform(-1, 1, (12, 12))
    rows, cols = weights.shape
    cy, cx = rows // 2, cols // 2
    p = (6, 6)  # image[row, col]; +y north is row - 1
    direct = sum(
        weights[r, c] * image[p[0] + (r - cy), p[1] + (c - cx)] for r in range(rows) for c in range(cols)
    )
    via_goal = sum(n * image[p[0] - y, p[1] + x] for (x, y, _), n in f.kernels[0].goal) / 2**f.depth
    assert abs(direct - via_goal) <= float(f.kernels[0].error) + 1e-12


def test_scale_forms_agree():
    forms = [
        "1/16 [1 2 1]",
        "2^-4 [1 2 1]",
        "1/2^4 * [1 2 1]",
        "[0.0625 0.125 0.0625]",
        "[1/16, 1/8, 1/16]",
        "0.5 [0.125 0.25 0.125]",
        "-1/16 [[-1, -2, -1]]",
        "2^2/2^6 [1 2 1]",
    ]
    filters = [parse(f"output k -> A = {form}") for form in forms]
    assert {f.kernels[0].weights for f in filters} == {(((F(1, 16), F(1, 8), F(1, 16)),),)}
    assert {f.depth for f in filters} == {4}


def test_negative_weights_and_scale():
    f = parse("output k -> A = -1/4 [1 -2]")
    assert f.kernels[0].weights == (((F(-1, 4), F(1, 2)),),)
    assert f.kernels[0].goal == Goal({(-1, 0, 0): -1, (0, 0, 0): 2})


def test_even_sizes_centre_below_right_of_the_middle():
    f = parse("output k -> A = [1 2; 3 4]")
    assert f.kernels[0].goal == Goal({(-1, 1, 0): 1, (0, 1, 0): 2, (-1, 0, 0): 3, (0, 0, 0): 4})


def test_kernels_of_different_sizes_and_comments():
    f = parse(
        """
        # a comment
        filter mixed   // another
        output small -> A = 1/2 [1]
        output big -> B = 1/4 [1 0 0 0 1;
                              0 0 0 0 0;
                              0 0 0 0 0;
                              0 0 0 0 0;
                              1 0 0 0 1]
        """
    )
    assert f.name == "mixed" and f.depth == 2
    assert f.kernels[0].goal == Goal({(0, 0, 0): 2})
    assert f.kernels[1].goal == Goal({(-2, 2, 0): 1, (2, 2, 0): 1, (-2, -2, 0): 1, (2, -2, 0): 1})


def test_several_input_channels():
    f = parse(
        """
        input red -> B, green -> A
        output mix -> C = 1/2 { green: [1 1], red: 1/2 [2] }
        output only_red -> D = { red: [1] }
        """
    )
    assert f.inputs == (("red", "B"), ("green", "A"))
    assert f.initial_goals() == [Goal({(0, 0, 0): 2}), Goal({(0, 0, 1): 2})]
    assert f.kernels[0].goal == Goal({(0, 0, 0): 1, (-1, 0, 1): 1, (0, 0, 1): 1})
    assert f.kernels[1].weights == (((F(1),),), ((F(0),),))
    assert f.kernels[1].goal == Goal({(0, 0, 0): 2})


def test_defaults():
    f = parse("output k -> B = [1]", filename="dir/my-kernel.cain")
    assert f.name == "my_kernel"
    assert f.inputs == (("A", "A"),)
    assert f.registers == ("A", "B", "C", "D", "E", "F")
    assert f.instruction_set == "all"
    assert parse("output B = [1]").kernels[0].register == "B"
    assert parse("input img\noutput k -> A = [1]\noption registers = img A").inputs == (("img", "img"),)


def test_options_and_overrides():
    text = """
    output k -> A = 1/3 [1]
    option max_depth = 4
    option max_error = 0.1
    option registers = A, B C
    option instructions = basic
    """
    f = parse(text)
    assert (f.depth, f.registers, f.instruction_set) == (2, ("A", "B", "C"), "basic")
    assert f.kernels[0].error == F(1, 12)
    g = parse(
        text, {"max_error": F(1, 100), "max_depth": 8, "registers": ("A", "E"), "instruction_set": "all"}
    )
    assert (g.depth, g.registers, g.instruction_set) == (6, ("A", "E"), "all")
    assert parse(text, {"max_error": "1/5", "max_depth": None}).depth == 1
    with pytest.raises(CainError, match="rounds to zero at depth 0"):
        parse(text, {"max_error": "1/2"})
    with pytest.raises(CainError, match="raise max_depth or max_error"):
        parse(text, {"max_depth": 1})
    with pytest.raises(CainError, match="--registers: register A is listed twice"):
        parse(text, {"registers": "A,A"})
    with pytest.raises(CainError, match="unknown override 'depth'"):
        parse(text, {"depth": 3})


def test_lower_source_builds_a_goal_module():
    from cain.dialects.goal import FilterOp, filter_from_op

    text = (EXAMPLES / "sobel.cain").read_text()
    module = lower_source(text, "sobel.cain", {})
    assert isinstance(module, ModuleOp)
    (op,) = module.ops
    assert isinstance(op, FilterOp)
    module.verify()
    assert filter_from_op(op) == parse_filter(text, "sobel.cain")


# -- errors ---------------------------------------------------------------------------------------

ERRORS = [
    ("output k -> A = [1 2 1; 2 4]", "ragged matrix: row 2 has 2 entries but row 1 has 3", 1, 25),
    ("output k -> G = [1]", "unknown register 'G' for output 'k'", 1, 13),
    ("input x -> Q\noutput k -> A = [1]", "unknown register 'Q' for input 'x'", 1, 12),
    ("output a -> A = [1]\noutput b -> A = [2]", "register A is already the output register of 'a'", 2, 13),
    ("output a -> A = [1]\noutput a -> B = [2]", "output 'a' is declared twice", 2, 8),
    ("output k -> A = [0 0; 0 0]", "kernel 'k' is empty", 1, 8),
    ("output k -> A = [1]\noption colour = red", "unknown option 'colour'", 2, 8),
    (
        "output k -> A = [1]\noption max_depth = 2\noption max_depth = 3",
        "option max_depth is set twice",
        3,
        8,
    ),
    ("output k -> A = [1]\noption max_depth = x", "max_depth must be an integer >= 0, not 'x'", 2, 20),
    ("output k -> A = [1]\noption max_error = -1", "max_error must be at least 0", 2, 20),
    ("output k -> A = [1]\noption registers = A 3", "option registers expects names, not '3'", 2, 22),
    ("output k -> A = [1]\noption registers = A B A", "register A is listed twice", 2, 20),
    (
        "output k -> A = [1]\noption instructions = all basic",
        "option instructions takes one value, not 2",
        2,
        27,
    ),
    ("output k -> A = 1/3 [1]\noption max_depth = 3", "at max_depth = 3 the total error is 1/24", 1, 8),
    ("output k -> A = [1]\noutput j -> B = [1]\noption registers = A", "2 outputs need 2 registers", 2, 1),
    ("input r -> A, g -> B\noutput k -> C = [1]", "give one matrix per channel", 2, 17),
    ("input r -> A, g -> B\noutput k -> C = { r: [1], r: [2] }", "channel 'r' is given twice", 2, 27),
    ("input r -> A, r -> B\noutput k -> C = { r: [1] }", "input channel 'r' is declared twice", 1, 15),
    (
        "input r -> A, g -> A\noutput k -> C = { r: [1] }",
        "inputs 'r' and 'g' both arrive in register A",
        1,
        20,
    ),
    ("filter a\nfilter b\noutput k -> A = [1]", "a file describes one filter", 2, 1),
    ("filter a", "the filter has no output", 1, 1),
    ("output k -> A = 1/0 [1]", "division by zero", 1, 19),
    ("output k -> A = [1/0]", "division by zero", 1, 20),
    ("output k -> A = [1]\noption registers = A NEWS", "NEWS is reserved", 2, 20),
    ("output k -> A = 1/1024 [1]\noption max_error = 0.01", "kernel 'k' rounds to zero at depth 0", 1, 8),
    ("input img\noutput k -> A = [1]", "input 'img' names no register", 1, 7),
    ("output blur = [1]", "write e.g. `output blur -> A = ...`", 1, 8),
    ("output k -> A = [1]\noption registers = A XN", "XN is reserved", 2, 20),
    ("output k -> A = [1 2", "syntax error: unexpected end of file", 1, 21),
    ("output k -> A [1]", "syntax error: unexpected '['; expected '='", 1, 15),
    ("output k -> A = [1 ? 2]", "syntax error: unexpected character '?'", 1, 20),
    ("input -> A", "syntax error: unexpected '->'; expected a name", 1, 7),
]


@pytest.mark.parametrize(("text", "message", "line", "column"), ERRORS)
def test_errors_point_at_the_mistake(text, message, line, column):
    err = error_of(text)
    assert message in err.message
    assert err.location is not None
    assert (err.location.file, err.location.line, err.location.column) == ("test.cain", line, column)
    assert err.location.text == text.splitlines()[line - 1]
    report = str(err).splitlines()
    assert report[0].startswith(f"test.cain:{line}:{column}: error: ")
    assert report[1] == text.splitlines()[line - 1]
    assert report[2] == " " * (column - 1) + "^"


def test_default_input_outside_register_file():
    err = error_of("filter f\noutput k -> B = [1]\noption registers = B C")
    assert "unknown register 'A' for the default input" in err.message


def test_mangled_examples_give_clear_errors_only():
    """Random edits of the examples either still compile or raise a located CainError, never another
    exception (which cain-opt would show as a traceback)."""
    rng = Random(1)
    texts = [p.read_text() for p in sorted(EXAMPLES.glob("*.cain"))]
    pieces = [
        *"[]{};:,/*^-+.0123456789 \n#ABCxyz=>",
        "->",
        "output ",
        "input ",
        "option ",
        "filter ",
        "max_depth",
        "registers",
        "1e400",
        "2^-99",
        "0/0",
        "2^99999",
        "1e99999999",
    ]
    errors = 0
    for _ in range(600):
        text = list(rng.choice(texts))
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(text))
            if rng.random() < 0.4:
                del text[pos]
            else:
                text.insert(pos, rng.choice(pieces))
        try:
            parse("".join(text))
        except CainError as e:
            errors += 1
            assert e.location is not None and e.location.line >= 1
    assert errors > 300
