"""User-facing errors: a message with an optional source location, printed without a traceback."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    column: int
    text: str = ""
    """The offending source line, shown under the message with a caret."""


class CainError(Exception):
    """A mistake in the user's input or request. `cain-opt` prints it and exits with status 1."""

    def __init__(self, message: str, location: Location | None = None):
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        loc = self.location
        if loc is None:
            return f"error: {self.message}"
        text = f"{loc.file}:{loc.line}:{loc.column}: error: {self.message}"
        if loc.text:
            text += f"\n{loc.text}\n{' ' * (loc.column - 1)}^"
        return text
