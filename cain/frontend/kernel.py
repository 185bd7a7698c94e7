"""The `.cain` kernel language: parsed with lark (`kernel.lark`), checked, approximated into a `Filter`.

The language is described in docs/language.md. Every mistake in a kernel file is raised as a
`CainError` pointing at the offending line and column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, cast

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from xdsl.dialects.builtin import ModuleOp

from cain.diagnostics import CainError, Location
from cain.dialects.goal import filter_to_op
from cain.frontend.options import (
    CHECKS,
    DEFAULT_INPUT,
    DEFAULT_INSTRUCTION_SET,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_ERROR,
    MAX_EXPONENT,
    OPTIONS,
    OVERRIDE_KEYS,
    digital_encoding,
    n_entries,
    superpixel_encoding,
)
from cain.model.approx import ApproximationError, approximate, format_fraction
from cain.model.filter import Filter, Kernel
from cain.model.goal import Goal
from cain.model.isa import DEFAULT_REGISTERS

Weights = tuple[tuple[tuple[Fraction, ...], ...], ...]


@cache
def _parser() -> Lark:
    grammar = resources.files("cain").joinpath("frontend", "kernel.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


@dataclass(frozen=True)
class _Source:
    """The text being compiled, to turn lark positions into `Location`s."""

    filename: str
    lines: list[str]

    def at(self, item: Token | Tree | tuple[int, int] | None) -> Location | None:
        if item is None:
            return None
        line: int | None
        column: int | None
        if isinstance(item, tuple):
            line, column = item
        elif isinstance(item, Tree):
            if item.meta.empty:
                return None
            line, column = item.meta.line, item.meta.column
        else:
            line, column = item.line, item.column
        if line is None or column is None or line < 1:
            return None
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return Location(self.filename, line, column, text)

    def error(self, message: str, item: Token | Tree | tuple[int, int] | None = None) -> CainError:
        return CainError(message, self.at(item))


# -- syntax ----------------------------------------------------------------------------------------

_TERMINAL_WORDS = {
    "NAME": "a name",
    "SIGNED_NUMBER": "a number",
    "NUMBER": "a number",
    "SIGNED_INT": "an integer",
    "$END": "the end of the file",
}


def _describe_terminals(names: Sequence[str]) -> str:
    """Lark terminal names as the user would write them: `"["`, `a number`, `filter`..."""
    parser = _parser()
    words = set()
    for name in names:
        if name in _TERMINAL_WORDS:
            words.add(_TERMINAL_WORDS[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
        except KeyError:
            words.add(name)
            continue
        words.add(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
    ordered = sorted(words, key=lambda w: (not w.startswith("'"), w))
    if len(ordered) == 1:
        return ordered[0]
    return ", ".join(ordered[:-1]) + " or " + ordered[-1]


def _syntax_error(err: UnexpectedInput, source: _Source) -> CainError:
    if isinstance(err, UnexpectedCharacters):
        char = source.lines[err.line - 1][err.column - 1] if err.line <= len(source.lines) else "?"
        return source.error(f"syntax error: unexpected character '{char}'", (err.line, err.column))
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        expected = getattr(err, "expected", None) or ()
        line = len(source.lines)
        column = len(source.lines[-1]) + 1 if source.lines else 1
        return source.error(
            f"syntax error: unexpected end of file; expected {_describe_terminals(sorted(expected))}",
            (max(line, 1), column),
        )
    assert isinstance(err, UnexpectedToken)
    expected = sorted(err.accepts or err.expected)
    return source.error(
        f"syntax error: unexpected '{err.token}'; expected {_describe_terminals(expected)}", err.token
    )


def parse_tree(text: str, filename: str) -> Tree:
    """The lark parse tree of a kernel file; a `CainError` for a syntax error."""
    source = _Source(filename, text.splitlines())
    try:
        return _parser().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, source) from None


# -- values ----------------------------------------------------------------------------------------


def _parts(tree: Tree) -> list[Any]:
    """A tree's children; which are tokens, subtrees or None (an absent `[...]`) the grammar fixes."""
    return list(tree.children)


def _number(token: Token, source: _Source) -> Fraction:
    exponent = re.search(r"[eE]([+-]?\d+)$", str(token))
    if exponent and abs(int(exponent.group(1))) > MAX_EXPONENT:
        raise source.error(f"'{token}' is out of range (exponents up to {MAX_EXPONENT})", token)
    try:
        return Fraction(str(token))
    except (ValueError, ZeroDivisionError):
        raise source.error(f"'{token}' is not a number", token) from None


def _quotient(
    numerator: Any,
    denominator: Any,
    read: Callable[[Any, _Source], Fraction],
    source: _Source,
    message: str = "division by zero",
) -> Fraction:
    """`numerator / denominator`, each read with `read` (just the numerator when there is no
    denominator); a zero denominator is the error `message` at it."""
    value = read(numerator, source)
    if denominator is None:
        return value
    d = read(denominator, source)
    if d == 0:
        raise source.error(message, denominator)
    return value / d


def _ratio(numerator: Token, denominator: Token | None, source: _Source) -> Fraction:
    """An entry or option value: a number, or a number over a number."""
    return _quotient(numerator, denominator, _number, source)


def _entry(tree: Tree, source: _Source) -> Fraction:
    numerator, denominator = _parts(tree)
    return _ratio(numerator, denominator, source)


def _power(tree: Tree, source: _Source) -> Fraction:
    base_token, exponent = _parts(tree)
    base = _number(base_token, source)
    if exponent is None:
        return base
    if abs(int(exponent)) > MAX_EXPONENT:
        raise source.error(
            f"the power {base_token}^{exponent} is out of range (exponents up to {MAX_EXPONENT})", exponent
        )
    if base == 0 and int(exponent) < 0:
        raise source.error("zero to a negative power", base_token)
    return base ** int(exponent)


def _scale(tree: Tree | None, source: _Source) -> Fraction:
    """A matrix's scale (`1/16`, `2^-6`, `1/2^4`); 1 when there is none."""
    if tree is None:
        return Fraction(1)
    numerator, denominator = _parts(tree)
    return _quotient(numerator, denominator, _power, source, "division by zero in the scale")


def _matrix(tree: Tree, scale: Fraction, source: _Source) -> tuple[tuple[Fraction, ...], ...]:
    """A matrix of weights times `scale`; a ragged matrix is an error at its first short/long row."""
    row_trees = _parts(tree) if tree.data == "semicolon_matrix" else [_parts(r)[0] for r in _parts(tree)]
    row_trees = [r for r in row_trees if r is not None]
    rows = [tuple(scale * _entry(entry, source) for entry in _parts(row)) for row in row_trees]
    for i, (row, row_tree) in enumerate(zip(rows, row_trees, strict=True)):
        if len(row) != len(rows[0]):
            raise source.error(
                f"ragged matrix: row {i + 1} has {n_entries(len(row))} but row 1 has {n_entries(len(rows[0]))}; "
                "every row needs the same number of entries",
                row_tree,
            )
    return tuple(rows)


def _names(values: list[Tree], option: Token, source: _Source) -> list[str]:
    names = []
    for value in values:
        token = _parts(value)[0]
        if token.type != "NAME":
            raise source.error(f"option {option} expects names, not '{token}'", token)
        names.append(str(token))
    return names


def _single(values: list[Tree], option: Token, source: _Source) -> Tree:
    if len(values) != 1:
        raise source.error(f"option {option} takes one value, not {len(values)}", values[1])
    return values[0]


# -- the filter ------------------------------------------------------------------------------------


@dataclass
class _Output:
    name: Token
    register: Token
    weights: Weights
    """One matrix per input channel (zero for a channel the kernel does not mention)."""


def parse_filter(text: str, filename: str, overrides: Mapping[str, object] | None = None) -> Filter:
    """The filter a kernel file describes, with its goals approximated; `overrides` (keys `max_depth`,
    `max_error`, `registers`, `instruction_set`) replace the file's options, as on the command line."""
    return _reader(text, filename).read(overrides)


def parse_options(text: str, filename: str) -> dict[str, object]:
    """The options a kernel file sets, checked (those it does not set are absent, not defaulted)."""
    return _reader(text, filename).options(None)


def _reader(text: str, filename: str) -> _FilterReader:
    return _FilterReader(_Source(filename, text.splitlines()), parse_tree(text, filename))


class _FilterReader:
    """Checks a parse tree statement by statement and builds the `Filter`; every error is located."""

    def __init__(self, source: _Source, tree: Tree):
        self.source = source
        self.statements: dict[str, list[Tree]] = {
            kind: [] for kind in ("filter_stmt", "input_stmt", "output_stmt", "option_stmt")
        }
        for statement in tree.children:
            self.statements[statement.data].append(statement)
        self.option_at: dict[str, Tree] = {}
        self.registers: tuple[str, ...] = DEFAULT_REGISTERS

    def read(self, overrides: Mapping[str, object] | None) -> Filter:
        options = self.options(overrides)
        self.registers = cast(tuple[str, ...], options.get("registers", DEFAULT_REGISTERS))
        inputs = self.inputs()
        outputs = self.outputs(inputs)
        depth, goals, errors = self.approximate(
            outputs,
            cast(int, options.get("max_depth", DEFAULT_MAX_DEPTH)),
            cast(Fraction, options.get("max_error", DEFAULT_MAX_ERROR)),
        )
        kernels = tuple(
            Kernel(str(o.name), str(o.register), o.weights, g, e)
            for o, g, e in zip(outputs, goals, errors, strict=True)
        )
        instructions = str(options.get("instructions", DEFAULT_INSTRUCTION_SET))
        encoding = digital_encoding(options, len(inputs), self.source.error)
        sp = superpixel_encoding(options, len(inputs), len(kernels), self.source.error, depth)
        return Filter(self.name(), tuple(inputs), kernels, depth, self.registers, instructions, encoding, sp)

    def name(self) -> str:
        """The `filter` line's name, or else the file's stem."""
        statements = self.statements["filter_stmt"]
        if len(statements) > 1:
            raise self.source.error(
                "a file describes one filter; remove the second `filter` line", statements[1]
            )
        if statements:
            return str(_parts(statements[0])[0])
        stem = re.sub(r"\W", "_", Path(self.source.filename).stem)
        return stem if stem and not stem[0].isdigit() else f"filter_{stem}"

    def options(self, overrides: Mapping[str, object] | None) -> dict[str, object]:
        """The file's options, checked, then replaced by the command line's."""
        source = self.source
        options: dict[str, object] = {}
        for statement in self.statements["option_stmt"]:
            key, *values = _parts(statement)
            if key not in OPTIONS:
                raise source.error(f"unknown option '{key}' (known options: {', '.join(OPTIONS)})", key)
            if key in options:
                first = self.option_at[str(key)].meta.line
                raise source.error(f"option {key} is set twice (first on line {first})", key)
            try:
                options[str(key)] = CHECKS[str(key)](self.option_value(key, values))
            except ValueError as e:
                raise source.error(str(e), values[0]) from None
            self.option_at[str(key)] = statement
        for key, value in (overrides or {}).items():
            if value is None:
                continue
            if key not in OVERRIDE_KEYS:
                raise CainError(f"unknown override '{key}' (known: {', '.join(OVERRIDE_KEYS)})")
            option = OVERRIDE_KEYS[key]
            try:
                options[option] = CHECKS[option](value)
            except ValueError as e:
                raise CainError(f"--{key.replace('_', '-')}: {e}") from None
            self.option_at.pop(option, None)
        return options

    def option_value(self, key: Token, values: list[Tree]) -> object:
        """An option's value as written, before its check."""
        if key in ("registers", "dregs"):
            return _names(values, key, self.source)
        if key in ("adc", "dac"):  # a register, then numbers
            return [str(_parts(v)[0]) for v in values]
        if key in ("input_bits", "tile", "input_banks", "output_banks", "bias"):
            return [_ratio(*(*_parts(v), None)[:2], self.source) for v in values]
        token, denominator = (*_parts(_single(values, key, self.source)), None)[:2]
        if key == "instructions":
            return str(token)
        if key == "max_depth":
            if not re.fullmatch(r"[+-]?\d+", str(token)) or denominator is not None:
                raise self.source.error(f"max_depth must be an integer >= 0, not '{token}'", token)
            return int(str(token))
        return _ratio(token, denominator, self.source) if token.type == "SIGNED_NUMBER" else str(token)

    def check_register(self, register: Token | str, what: str, at: Token | Tree | None) -> None:
        if register not in self.registers:
            where = "`option registers = ...` or --registers"
            raise self.source.error(
                f"unknown register '{register}' for {what}: the register file is {' '.join(self.registers)} "
                f"(use one of those, or extend the register file with {where})",
                at,
            )

    def implicit_register(self, name: Token, what: str, example: str) -> None:
        """`input A` / `output A = ...` name register A: say how to write it when A is no register."""
        if name not in self.registers:
            raise self.source.error(
                f"{what} '{name}' names no register: `{what} {name}` is short for `{what} {name} -> {name}`, "
                f"but {name} is not in the register file ({' '.join(self.registers)}); write e.g. `{example}`",
                name,
            )

    def inputs(self) -> list[tuple[str, str]]:
        """(channel, register) in channel order; one channel in A when the file declares none."""
        inputs: list[tuple[str, str]] = []
        for statement in self.statements["input_stmt"]:
            for channel in _parts(statement):
                channel_name, register = _parts(channel)
                if register is None:
                    self.implicit_register(
                        channel_name, "input", f"input {channel_name} -> {self.registers[0]}"
                    )
                    register = channel_name
                for other, other_register in inputs:
                    if other == channel_name:
                        raise self.source.error(
                            f"input channel '{channel_name}' is declared twice", channel_name
                        )
                    if other_register == register:
                        raise self.source.error(
                            f"inputs '{other}' and '{channel_name}' both arrive in register {register}",
                            register,
                        )
                self.check_register(register, f"input '{channel_name}'", register)
                inputs.append((str(channel_name), str(register)))
        if not inputs:
            filter_line = self.statements["filter_stmt"][0] if self.statements["filter_stmt"] else None
            what = "the default input (declare one with `input NAME -> REGISTER`)"
            self.check_register(DEFAULT_INPUT, what, filter_line)
            inputs.append((DEFAULT_INPUT, DEFAULT_INPUT))
        return inputs

    def outputs(self, inputs: list[tuple[str, str]]) -> list[_Output]:
        """The output kernels with their registers and weights, checked."""
        source, statements = self.source, self.statements["output_stmt"]
        if not statements:
            raise source.error(
                "the filter has no output; add one, e.g. `output blur -> A = 1/16 [1 2 1; 2 4 2; 1 2 1]`",
                (max(len(source.lines), 1), 1) if source.lines else None,
            )
        if len(statements) > len(self.registers):
            raise source.error(
                f"{len(statements)} outputs need {len(statements)} registers but the register file has "
                f"{len(self.registers)} ({' '.join(self.registers)})",
                statements[len(self.registers)],
            )
        channels = {name: z for z, (name, _) in enumerate(inputs)}
        outputs: list[_Output] = []
        for statement in statements:
            name, register, weights = _parts(statement)
            if register is None:
                self.implicit_register(name, "output", f"output {name} -> {self.registers[0]} = ...")
                register = name
            for other in outputs:
                if other.name == name:
                    raise source.error(
                        f"output '{name}' is declared twice (first on line {other.name.line})", name
                    )
                if other.register == register:
                    raise source.error(
                        f"register {register} is already the output register of '{other.name}' (line "
                        f"{other.name.line}); every output needs a register of its own",
                        register,
                    )
            self.check_register(register, f"output '{name}'", register)
            by_channel = _weights(weights, channels, inputs, source)
            matrices = tuple(by_channel.get(z, ((Fraction(0),),)) for z in range(len(inputs)))
            if all(w == 0 for m in matrices for row in m for w in row):
                raise source.error(f"kernel '{name}' is empty (all its weights are zero)", name)
            outputs.append(_Output(name, register, matrices))
        return outputs

    def approximate(
        self, outputs: list[_Output], max_depth: int, max_error: Fraction
    ) -> tuple[int, list[Goal], list[Fraction]]:
        """The shared depth and each kernel's goal and error; located errors when there is none."""
        try:
            depth, goals, errors = approximate([o.weights for o in outputs], max_depth, max_error)
        except ApproximationError as e:
            at_max = e.errors
            worst = max(range(len(outputs)), key=lambda i: at_max[i])
            detail = (
                ""
                if len(outputs) == 1
                else (f" (kernel '{outputs[worst].name}' contributes {format_fraction(at_max[worst])})")
            )
            bound = self.option_at.get("max_error")
            raise self.source.error(
                e.message + detail, _parts(bound)[1] if bound is not None else outputs[worst].name
            ) from None
        for output, goal in zip(outputs, goals, strict=True):
            if not goal:
                raise self.source.error(
                    f"kernel '{output.name}' rounds to zero at depth {depth}: lower max_error so that its "
                    "weights survive the approximation",
                    output.name,
                )
        return depth, goals, errors


def _weights(tree: Tree, channels: dict[str, int], inputs: list[tuple[str, str]], source: _Source):
    """The weight matrices of one output, by channel index."""
    scale = _scale(_parts(tree)[0], source)
    if tree.data == "single_channel":
        if len(inputs) != 1:
            names = ", ".join(f"{n}: [...]" for n, _ in inputs)
            raise source.error(
                f"the filter has {len(inputs)} input channels; give one matrix per channel, e.g. {{ {names} }}",
                _parts(tree)[1],
            )
        return {0: _matrix(_parts(tree)[1], scale, source)}
    result: dict[int, tuple[tuple[Fraction, ...], ...]] = {}
    for entry in _parts(tree)[1:]:
        if entry is None:
            continue
        channel, channel_scale, matrix = _parts(entry)
        if channel not in channels:
            known = ", ".join(channels)
            raise source.error(f"unknown input channel '{channel}' (the inputs are {known})", channel)
        if channels[channel] in result:
            raise source.error(f"channel '{channel}' is given twice in this kernel", channel)
        result[channels[channel]] = _matrix(matrix, scale * _scale(channel_scale, source), source)
    return result


def lower_source(text: str, filename: str, overrides: Mapping[str, object] | None = None) -> ModuleOp:
    """A module holding the `goal.filter` of a kernel file."""
    return ModuleOp([filter_to_op(parse_filter(text, filename, overrides))])
