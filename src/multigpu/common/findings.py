"""Findings: what the evidence says, as a message id and typed values, never as a finished sentence.

A :class:`Finding` is a message, an English ``str.format`` template marked with :func:`msg` (the book's catalogs
extract it and translate it; its id is the English text), and the values its ``{fields}`` take. A value is typed:

- :class:`Number`: a number and the format spec it is shown with (the same in every language);
- an ``int`` or ``float``: formatted by the spec its field has in the message (``{pct:.0f}``);
- whichever spec shows a number, it is shown by :func:`multigpu.common.numtext.number_text`: a non-zero one that a
  fixed-point spec would print as zero (0.0 ms for 0.03 ms) to two significant figures instead, so that no sentence
  says 0 of what is not 0, and the spec ``sig3`` (:data:`~multigpu.common.numtext.ESTIMATE`) to three significant
  figures, for a model estimate;
- a ``str``: data (an id, a name, a year), shown as it is in every language;
- :class:`Numbers`: several numbers shown as one comma-separated list (the same in every language);
- :class:`Word`: a word of a fixed vocabulary (a pricing type, a kind of workload), translated like a message;
- :class:`Name`: a name from the data (a system's), shown by its name in the language where the data give one;
- :class:`Items`: a list of values, joined by the language's separator (the message ``", "`` or ``" and "``);
- a nested :class:`Finding`: rendered in the same language.

:meth:`Finding.render` makes the sentence in a language, given that language's translation of a message; the
command line renders English (``str(finding)``), the book each of its editions (:mod:`multigpu.book.lang`). Code
that needs a number reads it from :meth:`Finding.value`, never from the sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Union

from multigpu.common.numtext import number_text

class _Shown(float):
    """A float a message's own spec formats (``{ms:.1f}``) by :func:`number_text`."""

    def __format__(self, spec: str) -> str:
        return number_text(float(self), spec) if spec else format(float(self), spec)


def msg(template: str) -> str:
    """Mark ``template`` (a literal) as a message the book's catalogs translate; return it unchanged."""
    return template


@dataclass(frozen=True)
class Number:
    """A number and how it is shown: ``format(value, spec)`` ("g", ".1f", ".2f", ...)."""

    value: float
    spec: str = "g"

    def __str__(self) -> str:
        return number_text(self.value, self.spec)


@dataclass(frozen=True)
class Numbers:
    """Numbers shown as one list, ``", "``-separated, each with ``spec``."""

    values: tuple[float, ...]
    spec: str = "g"

    def __str__(self) -> str:
        return ", ".join(number_text(v, self.spec) for v in self.values)


@dataclass(frozen=True)
class Word:
    """A word of a fixed vocabulary, shown translated (its text is its message id)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Name:
    """A name from the data (a system's, say): shown by the name the data give it in the language where they
    give one (the book reads those into its catalogs), else as it is."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Items:
    """A list of values, shown joined by ``separator``, itself a message (``", "``, or ``" and "``)."""

    items: tuple[Value, ...]
    separator: str = ", "

    def __str__(self) -> str:
        return self.separator.join(str(item) for item in self.items)


Value = Union[Number, Numbers, Word, Name, Items, int, float, str, "Finding"]


def and_list(values: tuple[Value, ...]) -> Value:
    """``values`` as one list the way prose joins it: "a", "a and b", "a, b and c" (in each language)."""
    if len(values) == 1:
        return values[0]
    return Finding.of(msg("{first} and {last}"), first=Items(tuple(values[:-1])), last=values[-1])


def show(value: Value, translate: Callable[[str], str] = str) -> object:
    """``value`` as the language of ``translate`` shows it (see :meth:`Finding.render`); a plain ``int`` or
    ``float`` is left a number, for a format spec in the message (``{pct:.0f}``) to show."""
    if isinstance(value, Finding):
        return value.render(translate)
    if isinstance(value, Word):
        return translate(value.text)
    if isinstance(value, Name):
        try:
            return translate(value.text)
        except LookupError:  # the data give no name in this language
            return value.text
    if isinstance(value, Items):
        return translate(value.separator).join(str(show(item, translate)) for item in value.items)
    if isinstance(value, float) and not isinstance(value, bool):
        return _Shown(value)
    if isinstance(value, int):
        return value
    return str(value)


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
        return translate(self.message).format(**{name: show(value, translate) for name, value in self.values})

    def leaves(self) -> Iterator[tuple[str, Value]]:
        """Every value that is neither a finding nor a list, nested ones' included, as (field name, value)."""
        for name, value in self.values:
            yield from _leaves(name, value)

    def __str__(self) -> str:
        return self.render()


def _leaves(name: str, value: Value) -> Iterator[tuple[str, Value]]:
    if isinstance(value, Finding):
        yield from value.leaves()
    elif isinstance(value, Items):
        for item in value.items:
            yield from _leaves(name, item)
    else:
        yield name, value


class Sentence(str):
    """A finding's English text: a plain ``str`` wherever it goes (JSON, CSV, a table cell), that keeps the
    typed value it says (``value``: a :class:`Finding`, or a list of them), so another language can render the
    same values (:meth:`render`)."""

    value: Value

    def __new__(cls, value: Value) -> Sentence:
        sentence = super().__new__(cls, str(show(value)))
        sentence.value = value
        return sentence

    def render(self, translate: Callable[[str], str] = str) -> str:
        """The text in the language of ``translate`` (see :meth:`Finding.render`)."""
        return str(show(self.value, translate))

    def leaves(self) -> Iterator[tuple[str, Value]]:
        """Every value it shows that is neither a finding nor a list (see :meth:`Finding.leaves`)."""
        return _leaves("", self.value)

    def __reduce__(self) -> tuple:
        return (Sentence, (self.value,))


def say(message: str, **values: Value) -> Sentence:
    """The :class:`Sentence` of ``message`` (:func:`msg`) with ``values``: ``Sentence(Finding.of(...))``."""
    return Sentence(Finding.of(message, **values))
