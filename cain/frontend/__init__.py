"""Front ends: text in, `Filter` out (the `.cain` kernel language and the Java tool's JSON configs).

Each reader has `parse_filter(text, filename, overrides) -> Filter` and `lower_source(...) -> ModuleOp`
(the filter as goal IR)."""

from types import ModuleType

from cain.frontend import java_json, kernel

READERS: dict[str, ModuleType] = {"cain": kernel, "json": java_json}
"""File extension -> the reader of such files."""
