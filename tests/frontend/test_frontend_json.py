"""JSON filter configs (the Java tool's format): same filters as the kernel language, located errors."""

import dataclasses
import json
import re
from fractions import Fraction as F
from pathlib import Path
from random import Random

import pytest

from cain.cli import main
from cain.diagnostics import CainError
from cain.frontend import java_json
from cain.frontend import kernel as kernel_language
from cain.model.filter import Filter
from cain.model.goal import Goal

EXAMPLES = Path(__file__).parents[2] / "examples"
JSON_EXAMPLES = EXAMPLES / "json"

BASE = {
    "name": "t",
    "maxApproximationDepth": 4,
    "maxApproximationError": 0,
    "3d": False,
    "filter": {"A": {"depth": -4, "array": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}},
    "availableRegisters": ["A", "B", "C", "D", "E", "F"],
    "initialRegisters": ["A"],
}


def config(**changes) -> str:
    """BASE with top-level keys replaced (a value of None removes the key), one key per line."""
    data = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    return "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()) + "\n}\n"


def parse(text: str, overrides=None) -> Filter:
    return java_json.parse_filter(text, "t.json", overrides)


def error_of(text: str, overrides=None) -> CainError:
    with pytest.raises(CainError) as info:
        parse(text, overrides)
    return info.value


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def renamed(json_filter: Filter, cain_filter: Filter) -> Filter:
    """`json_filter` with the `.cain` filter's kernel and channel names (a JSON config names kernels and
    channels by their registers)."""
    assert [k.name for k in json_filter.kernels] == [k.register for k in json_filter.kernels]
    assert [c for c, _ in json_filter.inputs] == [r for _, r in json_filter.inputs]
    kernels = tuple(
        dataclasses.replace(k, name=c.name)
        for k, c in zip(json_filter.kernels, cain_filter.kernels, strict=True)
    )
    inputs = tuple((c, r) for (_, r), (c, _) in zip(json_filter.inputs, cain_filter.inputs, strict=True))
    return dataclasses.replace(json_filter, kernels=kernels, inputs=inputs)


# -- the same filters as the kernel language -------------------------------------------------------


@pytest.mark.parametrize("name", ["analognet2", "gauss3x3", "gauss5x5_3x3", "sobel", "rgb_luma_edge"])
def test_json_and_cain_examples_give_equal_filters(name):
    path = JSON_EXAMPLES / f"{name}.json"
    from_json = java_json.parse_filter(path.read_text(), str(path))
    from_cain = kernel_language.parse_filter((EXAMPLES / f"{name}.cain").read_text(), f"{name}.cain")
    assert renamed(from_json, from_cain) == from_cain


def test_every_json_example_parses_and_lowers():
    paths = sorted(JSON_EXAMPLES.glob("*.json"))
    assert len(paths) >= 4
    for path in paths:
        module = java_json.lower_source(path.read_text(), str(path))
        module.verify()


def test_the_java_tools_layouts():
    # registers at the top level, pairGen with string configGetter (older) ...
    older = parse(
        config(pairGen={"name": "Scamp5", "configGetter": "Threshold", "ops": "basic", "threshold": 10})
    )
    # ... or in registerAllocator, with ops inside a configGetter object (newer)
    newer = parse(
        config(
            availableRegisters=None,
            initialRegisters=None,
            registerAllocator={
                "name": "linearScan",
                "availableRegisters": ["A", "B", "C"],
                "initialRegisters": ["A"],
            },
            pairGen={"name": "Scamp5AnalogueAtomGoal", "configGetter": {"name": "Threshold", "ops": "basic"}},
        )
    )
    assert older.instruction_set == newer.instruction_set == "basic"
    assert older.registers == ("A", "B", "C", "D", "E", "F") and newer.registers == ("A", "B", "C")
    assert older.kernels == newer.kernels and older.depth == newer.depth == 4


def test_weights_are_array_times_scale_times_two_to_the_depth():
    kernel = {"scale": 0.5, "depth": -1, "array": [[1, 2, 0.5]]}
    f = parse(config(filter={"B": kernel}, maxApproximationDepth=8))
    assert f.kernels[0].weights == (((F(1, 4), F(1, 2), F(1, 8)),),)
    assert f.depth == 3 and f.kernels[0].goal == Goal({(-1, 0, 0): 2, (0, 0, 0): 4, (1, 0, 0): 1})
    # a kernel may be a bare array; decimals are read exactly as written
    bare = parse(config(filter={"B": [[0.1]]}, maxApproximationDepth=8, maxApproximationError=0.01))
    assert bare.kernels[0].weights == (((F(1, 10),),),)
    assert bare.kernels[0].error == abs(F(1, 10) - F(bare.kernels[0].goal.total, 2**bare.depth))


def test_row_zero_is_north_and_even_sizes_centre_as_the_java_tool():
    f = parse(config(filter={"A": [[1, 2], [3, 4]]}))
    # x = column - width // 2, y = -(row - height // 2): the centre is below and right of the middle
    assert f.kernels[0].goal == Goal({(-1, 1, 0): 1, (0, 1, 0): 2, (-1, 0, 0): 3, (0, 0, 0): 4})


def test_innermost_arrays_are_channels():
    text = config(initialRegisters=["A", "B"], filter={"C": [[[1, 2], 3, [0, 4]]]})
    f = parse(text)
    assert f.inputs == (("A", "A"), ("B", "B"))
    assert f.kernels[0].weights == (((F(1), F(3), F(0)),), ((F(2), F(0), F(4)),))
    assert f.kernels[0].goal == Goal({(-1, 0, 0): 1, (-1, 0, 1): 2, (0, 0, 0): 3, (1, 0, 1): 4})


def test_3d_innermost_arrays_are_centred():
    # with "3d": true entry k of an innermost array of length n is channel k - n // 2
    f = parse(config(initialRegisters=["A", "B"], filter={"C": [[[0, 1, 2]]]}, **{"3d": True}))
    assert f.kernels[0].goal == Goal({(0, 0, 0): 1, (0, 0, 1): 2})
    e = error_of(config(initialRegisters=["A", "B"], filter={"C": [[[5, 1, 2]]]}, **{"3d": True}))
    assert "entry 1 is channel -1" in e.message and '"3d": false' in e.message


def test_overrides_replace_the_files_settings():
    text = config(maxApproximationDepth=3, maxApproximationError=0.5)
    assert parse(text).depth == 3
    f = parse(text, {"max_depth": 6, "max_error": 0, "registers": ("A", "B"), "instruction_set": "basic"})
    assert f.depth == 4 and f.registers == ("A", "B") and f.instruction_set == "basic"
    assert "--registers" in error_of(text, {"registers": "A,NEWS"}).message


def test_defaults_and_name():
    text = config(name=None, maxApproximationDepth=None, maxApproximationError=None, availableRegisters=None)
    f = java_json.parse_filter(text, "dir/my filter.json")
    assert f.name == "my_filter" and f.depth == 4
    assert f.registers == ("A", "B", "C", "D", "E", "F") and f.instruction_set == "all"
    assert parse(config(name="Multiple Sobel")).name == "Multiple_Sobel"


def test_search_settings_are_checked():
    run_config = {"searchTime": 60000, "timeOut": True, "workers": 4, "traversalAlgorithm": "SOT"}
    assert parse(config(runConfig=run_config)) == parse(config())
    text = config(runConfig={**run_config, "workers": "four"})
    e = error_of(text)
    assert e.message == "'workers' must be an integer, not the string \"four\""
    assert e.location.line == line_of(text, "runConfig")
    e = error_of(config(runConfig={"searchTimeMs": 5}))
    assert "unknown key 'searchTimeMs' in 'runConfig'" in e.message and "searchTime" in e.message


# -- errors with locations ------------------------------------------------------------------------


def test_syntax_errors_point_at_the_character():
    text = '{\n  "filter": {"A": [[1, 2 1]]},\n  "initialRegisters": ["A"]\n}\n'
    e = error_of(text)
    assert e.message == "JSON syntax error: expecting ',' delimiter"
    assert (e.location.line, e.location.column) == (2, 26)
    assert str(e).endswith('  "filter": {"A": [[1, 2 1]]},\n' + " " * 25 + "^")
    assert "syntax error" in error_of('{"filter": {}').message
    assert error_of("").message.startswith("the file is empty")
    nan = error_of('{"filter": {"A": [[NaN]]}, "initialRegisters": ["A"]}')
    assert "'NaN' is not a number" in nan.message and nan.location.column == 20


@pytest.mark.parametrize(
    ("change", "needle", "message"),
    [
        ({"filterz": 1}, '"filterz"', "unknown key 'filterz' in the config (known keys: name, id"),
        ({"filter": None}, "{", "the config has no 'filter'"),
        ({"initialRegisters": None}, "{", "the config has no 'initialRegisters'"),
        (
            {"maxApproximationDepth": "3"},
            '"maxApproximationDepth"',
            "'maxApproximationDepth' must be an integer",
        ),
        ({"maxApproximationDepth": 1.5}, '"maxApproximationDepth"', "must be an integer, not the number 1.5"),
        ({"maxApproximationDepth": -1}, '"maxApproximationDepth"', "max_depth must be an integer >= 0"),
        ({"maxApproximationError": -0.5}, '"maxApproximationError"', "max_error must be at least 0"),
        ({"3d": 1}, '"3d"', "'3d' must be true or false, not the number 1"),
        ({"availableRegisters": ["A", "A"]}, '"availableRegisters"', "register A is listed twice"),
        ({"availableRegisters": ["A", "NEWS"]}, '"availableRegisters"', "NEWS is reserved"),
        (
            {"availableRegisters": ["A", 2]},
            '"availableRegisters"',
            "every entry of 'availableRegisters' must be a s",
        ),
        ({"initialRegisters": ["G"]}, '"initialRegisters"', "input register 'G' is not in the register file"),
        ({"initialRegisters": []}, '"initialRegisters"', "'initialRegisters' is empty; name at least one"),
        (
            {"filter": {"G": [[1]]}},
            '"filter"',
            "output register 'G' is not in the register file (A B C D E F)",
        ),
        ({"filter": {}}, '"filter"', "the filter has no kernels"),
        ({"filter": {"A": [[0, 0]]}}, '"filter"', "kernel 'A' is empty"),
        (
            {"filter": {"A": [[1, 2], [3]]}},
            '"filter"',
            "ragged array: row 2 of kernel 'A' has 1 entry but row 1",
        ),
        ({"filter": {"A": []}}, '"filter"', "the array of kernel 'A' is empty"),
        (
            {"filter": {"A": [[1, "2"]]}},
            '"filter"',
            "a weight of kernel 'A' must be a number, not the string \"2\"",
        ),
        (
            {"filter": {"A": [[[1, 2]]]}},
            '"filter"',
            "this weight is for channel 2, but there are only 1 input",
        ),
        ({"filter": {"A": {"depth": -1.5, "array": [[1]]}}}, '"filter"', "'depth' must be an integer"),
        ({"filter": {"A": {"depth": -2}}}, '"filter"', "kernel 'A' has no 'array' (the weights); add it"),
        ({"filter": {"A": {"array": [[1]], "dept": 1}}}, '"filter"', "unknown key 'dept' in kernel 'A'"),
        (
            {"filter": {"A": 3}},
            '"filter"',
            "kernel 'A' must be an object {...} or an array [...], not the number 3",
        ),
        (
            {"pairGen": {"ops": "fancy"}},
            '"pairGen"',
            "unknown instruction set 'fancy' in 'ops' (choose from basic, all)",
        ),
        ({"pairGen": {"name": "Scamp5DigitalAtomGoal"}}, '"pairGen"', "Cain compiles for SCAMP-5's analogue"),
        (
            {"pairGen": {"configGetter": "Greedy"}},
            '"pairGen"',
            "'configGetter' is the string \"Greedy\"; the old",
        ),
        ({"goalSystem": "BankedKernel3D"}, '"goalSystem"', 'Cain reads only "Atom"'),
        ({"verifier": 3}, '"verifier"', "'verifier' must be a string"),
    ],
)
def test_errors_name_the_mistake_and_its_line(change, needle, message):
    text = config(**change)
    e = error_of(text)
    assert message in e.message
    assert e.location is not None and e.location.file == "t.json"
    assert e.location.line == line_of(text, needle)
    assert e.location.text == text.splitlines()[e.location.line - 1]


def test_errors_point_at_the_offending_value():
    text = '{"filter": {"A": [[1, 2, 1],\n                  [2, 4]]},\n "initialRegisters": ["A"]}'
    e = error_of(text)
    assert (e.location.line, e.location.column) == (2, 19) and "ragged array: row 2" in e.message
    text = '{"filter": {"A": [[1]]},\n "initialRegisters": ["A"],\n "filter": {"B": [[1]]}}'
    e = error_of(text)
    assert e.message == "key 'filter' is given twice (first on line 1); remove one"
    assert (e.location.line, e.location.column) == (3, 2)
    text = '{"filter": {"A": [[1]]},\n "initialRegisters": ["A", "Q"]}'
    e = error_of(text)
    assert (e.location.line, e.location.column) == (2, 28) and "input register 'Q'" in e.message
    text = '{"filter": {"A": [[1]]},\n "initialRegisters": ["A", "XN", "A"]}'
    e = error_of(text)
    assert (e.location.line, e.location.column) == (2, 28) and "XN is reserved" in e.message
    text = '{"filter": {"A": [[1]]},\n "initialRegisters": ["A", "B", "A"]}'
    e = error_of(text)
    assert (e.location.line, e.location.column) == (2, 33)
    assert e.message == "'initialRegisters': register A is listed twice"


def test_approximation_errors_name_the_json_keys():
    text = config(filter={"A": [[0.1, 0.3]], "B": [[0.2]]}, maxApproximationDepth=2)
    e = error_of(text)
    assert "maxApproximationError = 0: at maxApproximationDepth = 2" in e.message
    assert "kernel 'A' contributes" in e.message
    assert e.location.line == line_of(text, "maxApproximationError")
    e = error_of(config(filter={"A": [[0.01]]}, maxApproximationError=0.02))
    assert "kernel 'A' rounds to zero at depth 0" in e.message


def test_mangled_configs_only_give_located_errors():
    """Random edits of a valid config: each is read or rejected with a `CainError` at a line of the file."""
    original = (JSON_EXAMPLES / "sobel.json").read_text()
    rng = Random(7)
    alphabet = '{}[]",:0123456789-.eE AtrufalsNn\n'
    for _ in range(400):
        text = list(original)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text))
            kind = rng.random()
            if kind < 0.4:
                del text[i]
            elif kind < 0.7:
                text.insert(i, rng.choice(alphabet))
            else:
                text[i] = rng.choice(alphabet)
        mangled = "".join(text)
        try:
            java_json.parse_filter(mangled, "m.json")
        except CainError as e:
            assert e.location is not None and 1 <= e.location.line <= mangled.count("\n") + 1, (mangled, e)


# -- cain-opt --------------------------------------------------------------------------------------


def test_cain_opt_reads_json_configs(capsys):
    path = JSON_EXAMPLES / "gauss3x3.json"
    assert main([str(path), "--max-depth", "5"]) == 0
    out = capsys.readouterr().out
    assert "goal.filter @gauss3x3 depth 4" in out and 'goal.kernel "A" -> "A"' in out
    bad = Path(__file__).parents[1] / "filecheck" / "frontend-json" / "Inputs" / "ragged.json"
    assert main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:" in err and "ragged array" in err


def test_language_doc_json_section_is_real(capsys, monkeypatch):
    root = Path(__file__).parents[2]
    doc = (root / "docs" / "language.md").read_text()
    section = doc[doc.index("## JSON filter configs") :]
    (example,) = re.findall(r"```json\n(.*?)```", section, flags=re.DOTALL)
    f = java_json.parse_filter(example, "doc.json")
    sobel = kernel_language.parse_filter((EXAMPLES / "sobel.cain").read_text(), "sobel.cain")
    assert f.name == "sobel" and [k.register for k in f.kernels] == ["B", "C"]
    assert f.final_goals() == sobel.final_goals()
    (shell,) = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    command, *expected = shell.splitlines()
    monkeypatch.chdir(root)
    assert main(command.removeprefix("$ cain-opt ").split()) == 1
    assert capsys.readouterr().err.splitlines() == expected


def test_escaped_strings_keep_positions():
    text = '{"name": "a\\"b\\u00e9 c\\\\", "filter": {"A": [[1]]}, "initialRegisters": ["A"], "filter": 1}'
    e = error_of(text)
    assert (
        e.message.startswith("key 'filter' is given twice")
        and e.location.column == text.rindex('"filter"') + 1
    )
    assert parse(text.removesuffix(', "filter": 1}') + "}").name == "a_b__c_"
