"""Findings: what the evidence says, as a message id and typed values, never as a finished sentence.

A :class:`Finding` is a message, an English ``str.format`` template marked with :func:`msg` (the book's catalogs
extract it and translate it; its id is the English text), and the values its ``{fields}`` take. A value is typed:

- :class:`Number`: a number and the format spec it is shown with (the same in every language);
- an ``int``: shown as it is;
- a ``str``: data (an id, a name, a year), shown as it is in every language;
- :class:`Numbers`: several numbers shown as one comma-separated list (the same in every language);
- a nested :class:`Finding`: rendered in the same language.

:meth:`Finding.render` makes the sentence in a language, given that language's translation of a message; the
command line renders English (``str(finding)``), the book each of its editions (:mod:`multigpu.book.lang`). Code
that needs a number reads it from :meth:`Finding.value`, never from the sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Union


def msg(template: str) -> str:
    """Mark ``template`` (a literal) as a message the book's catalogs translate; return it unchanged."""
    return template


@dataclass(frozen=True)
class Number:
    """A number and how it is shown: ``format(value, spec)`` ("g", ".1f", ".2f", ...)."""

    value: float
    spec: str = "g"

    def __str__(self) -> str:
        return format(self.value, self.spec)


@dataclass(frozen=True)
class Numbers:
    """Numbers shown as one list, ``", "``-separated, each with ``spec``."""

    values: tuple[float, ...]
    spec: str = "g"

    def __str__(self) -> str:
        return ", ".join(format(v, self.spec) for v in self.values)


Value = Union[Number, Numbers, int, str, "Finding"]


@dataclass(frozen=True)
class Finding:
    """A message id (:func:`msg`) and the typed values of its fields, by name."""

    message: str
    values: tuple[tuple[str, Value], ...] = ()

    @classmethod
    def of(cls, message: str, **values: Value) -> Finding:
        """The finding of ``message`` with ``values`` (the template's fields, by name)."""
        return cls(message, tuple(values.items()))

    def value(self, name: str) -> Value:
        """The value of field ``name``."""
        return dict(self.values)[name]

    def render(self, translate: Callable[[str], str] = str) -> str:
        """The sentence in the language of ``translate`` (a message id -> its text in that language; the default
        keeps English): the translated template filled with each value as that language shows it."""
        shown = {name: value.render(translate) if isinstance(value, Finding) else str(value)
                 for name, value in self.values}
        return translate(self.message).format(**shown)

    def leaves(self) -> Iterator[tuple[str, Value]]:
        """Every value that is not a finding, nested ones' included, as (field name, value)."""
        for name, value in self.values:
            if isinstance(value, Finding):
                yield from value.leaves()
            else:
                yield name, value

    def __str__(self) -> str:
        return self.render()
