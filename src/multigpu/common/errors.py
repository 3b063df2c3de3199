"""The one error type for bad input, and how it is printed.

Every error a user can cause (a bad price file, an unknown system id, a layout
that does not divide) is an :class:`InputError`. The CLI prints it as one line,
``error: <file>:<line>: <what is wrong>``, and exits with status 2.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def lines(self, limit: int = 20) -> list[str]:
        """The problem as lines to print after ``error: `` (one here; several for :class:`InputErrors`)."""
        return [str(self)]


class InputErrors(InputError):
    """Several problems found in one pass over a file; behaves as the first of them (file, line, column),
    and :meth:`lines` lists them all."""

    def __init__(self, errors: Sequence[InputError]) -> None:
        flat = [e for error in errors for e in (error.errors if isinstance(error, InputErrors) else [error])]
        first = flat[0]
        super().__init__(first.message, first.file, first.line, first.column)
        self.errors = flat

    def __str__(self) -> str:
        more = len(self.errors) - 1
        return str(self.errors[0]) + (f" (and {more} more problem{'s' if more != 1 else ''})" if more else "")

    def lines(self, limit: int = 20) -> list[str]:
        """Up to ``limit`` problems, one line each, then a count of the rest."""
        shown = [str(e) for e in self.errors[:limit]]
        rest = len(self.errors) - limit
        return shown + ([f"... and {rest} more problem{'s' if rest != 1 else ''} in {self.file}"] if rest > 0 else [])


@dataclass(frozen=True)
class InputWarning:
    """Input that is valid but probably not what was meant: printed as ``warning: <file>:<line>: ...``
    on stderr by the CLI (exit status 0), shown as a note by the book."""

    message: str
    file: str | None = None
    line: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        return str(InputError(self.message, self.file, self.line, self.column))

