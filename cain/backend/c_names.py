"""Names and frames in the emitted C: a filter's name made a C/C++ identifier (SCAMP-5 programs are C++), and
the function and SDK kernel blocks every mode's C is printed in."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
        "_Bool",
        "_Complex",
        "_Imaginary",
    ]
)
"""The reserved words of C and C++, which a function cannot be named."""


def c_identifier(name: str) -> str:
    """`name` as a C identifier: other characters become `_`, a leading digit gets a `_` before it, and a
    reserved word one after it (a filter named `long` gives `long_`)."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII)
    if not ident or ident[0].isdigit():
        return f"_{ident}"
    return f"{ident}_" if ident in KEYWORDS else ident


def c_function(name: str, header: Sequence[str], body: Sequence[str]) -> str:
    """The C function of filter `name`: `header` as its comment, then the lines of `body`."""
    comment = ["/*", *(f" * {line}".rstrip() for line in header), " */"]
    return "\n".join([*comment, f"void {c_identifier(name)}(void) {{", *body, "}"])


def sdk_kernel(lines: Iterable[object]) -> list[str]:
    """One SDK kernel: `lines` between `scamp5_kernel_begin()` and `scamp5_kernel_end()`."""
    return ["    scamp5_kernel_begin();", *(f"        {line}" for line in lines), "    scamp5_kernel_end();"]
