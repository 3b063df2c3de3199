"""The one error type for bad input, and how it is printed.

Every error a user can cause (a bad price file, an unknown system id, a layout
that does not divide) is an :class:`InputError`. The CLI prints it as one line,
``error: <file>:<line>: <what is wrong>``, and exits with status 2.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class InputError(Exception):
    """Bad input: what is wrong, and where (file, line, column) when known."""

    message: str
    file: str | None = None
    line: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:"
            if self.line is not None:
                where += f"{self.line}:"
            where += " "
        what = self.message
        if self.column is not None:
            what = f"column '{self.column}': {what}"
        return f"{where}{what}"
