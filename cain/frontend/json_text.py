"""JSON read with every value's position, so that a config's reader can point at the offending key or value.

`JsonSource(filename, text).parse()` checks the syntax with the standard library (a located error at the
first mistake), then reads the document into `Node`s that remember where they start; numbers are exact
`Fraction`s as written."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from fractions import Fraction
from json.scanner import NUMBER_RE

from cain.diagnostics import CainError, Location
from cain.frontend.options import MAX_EXPONENT

# -- JSON values with their positions --------------------------------------------------------------


@dataclass
class Node:
    """A JSON value and where it starts; objects map keys to `Member`s, arrays hold `Node`s, numbers are
    exact `Fraction`s. The typed accessors are for values already checked with `expect`."""

    value: dict[str, Member] | list[Node] | str | bool | Fraction | None
    offset: int
    text: str = ""
    """The number as written (so `0.1` is read exactly as 1/10)."""

    @property
    def members(self) -> dict[str, Member]:
        assert isinstance(self.value, dict)
        return self.value

    @property
    def items(self) -> list[Node]:
        assert isinstance(self.value, list)
        return self.value

    @property
    def string(self) -> str:
        assert isinstance(self.value, str)
        return self.value

    @property
    def number(self) -> Fraction:
        assert isinstance(self.value, Fraction)
        return self.value


@dataclass
class Member:
    """A key of a JSON object, where the key starts, and its value."""

    key: str
    offset: int
    node: Node


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _string(text: str, offset: int) -> tuple[str, int]:
    """The JSON string starting at `offset` (its opening quote) and the offset after it."""
    match = _STRING.match(text, offset)
    assert match is not None
    return json.loads(match.group(0)), match.end()


@dataclass
class JsonSource:
    """The config text: turns offsets into `Location`s and reads JSON keeping positions."""

    filename: str
    text: str
    line_starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", self.text)]

    def at(self, where: Node | Member | int | None) -> Location | None:
        if where is None:
            return None
        offset = where if isinstance(where, int) else where.offset
        line = bisect_right(self.line_starts, offset)
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.text)
        return Location(self.filename, line, offset - start + 1, self.text[start:end].rstrip("\r\n"))

    def line(self, where: Node | Member) -> int:
        return bisect_right(self.line_starts, where.offset)

    def error(self, message: str, where: Node | Member | int | None = None) -> CainError:
        return CainError(message, self.at(where))

    def parse(self) -> Node:
        """The document as `Node`s; a `CainError` at the first syntax error."""
        try:
            json.loads(self.text, parse_constant=lambda name: None)
        except json.JSONDecodeError as e:
            message = e.msg[0].lower() + e.msg[1:]
            raise self.error(f"JSON syntax error: {message}", e.pos) from None
        except RecursionError:
            raise self.error("JSON syntax error: the document is nested too deeply", 0) from None
        node, end = self._value(self._skip(0))
        assert self._skip(end) == len(self.text)
        return node

    def _skip(self, offset: int) -> int:
        match = _WHITESPACE.match(self.text, offset)
        assert match is not None
        return match.end()

    def _value(self, offset: int) -> tuple[Node, int]:
        """The value at `offset` (the text is valid JSON: `json.loads` checked it)."""
        char = self.text[offset]
        if char == "{":
            members: dict[str, Member] = {}
            end = self._skip(offset + 1)
            if self.text[end] == "}":
                return Node(members, offset), end + 1
            while True:
                key_at = end
                key, end = _string(self.text, key_at)
                end = self._skip(self._skip(end) + 1)  # past the ':'
                node, end = self._value(end)
                if key in members:
                    raise self.error(
                        f"key '{key}' is given twice (first on line {self.line(members[key])}); remove one",
                        key_at,
                    )
                members[key] = Member(key, key_at, node)
                end = self._skip(end)
                if self.text[end] == "}":
                    return Node(members, offset), end + 1
                end = self._skip(end + 1)
        if char == "[":
            items: list[Node] = []
            end = self._skip(offset + 1)
            if self.text[end] == "]":
                return Node(items, offset), end + 1
            while True:
                node, end = self._value(end)
                items.append(node)
                end = self._skip(end)
                if self.text[end] == "]":
                    return Node(items, offset), end + 1
                end = self._skip(end + 1)
        if char == '"':
            string, end = _string(self.text, offset)
            return Node(string, offset), end
        for word, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, offset):
                return Node(value, offset), offset + len(word)
        for word in ("NaN", "Infinity", "-Infinity"):
            if self.text.startswith(word, offset):
                raise self.error(f"'{word}' is not a number; JSON configs need finite numbers", offset)
        match = NUMBER_RE.match(self.text, offset)
        assert match is not None
        return Node(_number(match.group(0), self, offset), offset, match.group(0)), match.end()


def _number(text: str, source: JsonSource, offset: int) -> Fraction:
    exponent = re.search(r"[eE]([+-]?\d+)$", text)
    if exponent and abs(int(exponent.group(1))) > MAX_EXPONENT:
        raise source.error(f"'{text}' is out of range (exponents up to {MAX_EXPONENT})", offset)
    return Fraction(text)


# -- checking values -------------------------------------------------------------------------------

_TYPE_WORDS = {
    "object": "an object {...}",
    "array": "an array [...]",
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
}


def describe(node: Node) -> str:
    """The value in words for error messages: `an object`, `the string "x"`, `the number 0.5`."""
    value = node.value
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    return f"the number {node.text}"


def _is(node: Node, kind: str) -> bool:
    value = node.value
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, Fraction)
    if kind == "integer":
        return isinstance(value, Fraction) and value.denominator == 1
    raise AssertionError(kind)


def expect(node: Node, kinds: str, what: str, source: JsonSource) -> None:
    """Raise unless `node` is one of `kinds` (`"string|object"`)."""
    options = kinds.split("|")
    if not any(_is(node, k) for k in options):
        wanted = " or ".join(_TYPE_WORDS[k] for k in options)
        raise source.error(f"{what} must be {wanted}, not {describe(node)}", node)
