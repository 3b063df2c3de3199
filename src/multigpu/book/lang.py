"""The languages of the book's computed text: one execution, every language.

A notebook runs once and its outputs serve both editions: a chapter module computes each piece of text once per
language, under :func:`using`, and the notebook shows all of them, wrapped by :func:`editions_html` in
``<div class="mg-lang-en">`` / ``<div class="mg-lang-zh">``; the site's style sheet shows each edition its own.

The Chinese comes from the package's own gettext catalogs, ``locales/zh_CN/LC_MESSAGES/*.po`` next to this
module (``multigpu.po`` for the shared helpers, one per page module: :func:`domain`), read with Babel when
first needed (no compiled ``.mo``). ``python -m multigpu.book.i18n update``
extracts the messages marked here from ``src/multigpu/book/*.py`` into it; ``check`` (and tests/test_i18n.py)
fails on a message that is missing, empty or fuzzy. Messages are ``str.format`` templates with named fields,
``_("grew {growth:.1f}x", growth=g)``, so a number is formatted by the same spec in every language.

- :func:`_` translates a literal message into the current language (English where it has no translation);
- :func:`N_` marks a literal for extraction and returns it unchanged (translate it later with :func:`label`);
- :func:`label` translates text that is not a literal here (a table header, a verdict word) and, outside
  English, raises LookupError where the catalog lacks it, so no English slips into the Chinese edition;
- a finding of the evidence layer (:mod:`multigpu.common.findings`) is rendered from the same catalogs
  (:func:`multigpu.book.glue.say`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import TypeVar

from babel.messages import pofile

T = TypeVar("T")

#: The book's languages, English first (the language the code and the catalogs' message ids are written in).
LANGUAGES = ("en", "zh")
#: The HTML ``lang`` of each language's part of an output (English: the page's own, so no attribute).
HTML_LANG = {"en": None, "zh": "zh-CN"}
#: The gettext locale of each translated language, and the catalog's domain (file name).
LOCALES = {"zh": "zh_CN"}
DOMAIN = "multigpu"
#: The catalogs' folder: ``<locale>/LC_MESSAGES/multigpu.po``.
LOCALE_DIR = Path(__file__).resolve().parent / "locales"
#: The functions whose first argument, a string literal, is a message (Babel's ``keywords``): the book's, and
#: :func:`multigpu.common.findings.msg`, which marks the messages of the evidence layer's findings.
KEYWORDS = {"_": None, "N_": None, "msg": None}
#: The catalog of the findings' messages (``msg`` in ``src/multigpu/evidence``).
FINDINGS = "findings"

_current: ContextVar[str] = ContextVar("multigpu_book_language", default="en")


def check(language: str) -> str:
    """``language`` if it is one of :data:`LANGUAGES`, else ValueError."""
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r}: expected one of {', '.join(LANGUAGES)}")
    return language


#: Modules with a catalog of their own (one per page: a chapter's text is translated in its own file); the
#: shared helpers' messages are in :data:`DOMAIN`.
PAGE_MODULES = ("ch0", "app_", "intro")


def domain(module: str) -> str:
    """The catalog (domain) of the messages of module ``module`` (a file stem such as ``ch03_bottlenecks``)."""
    return module if module.startswith(PAGE_MODULES) else DOMAIN


def catalog_path(language: str, name: str = DOMAIN) -> Path:
    """Where the catalog ``name`` of a translated ``language`` lives (``zh``: ``locales/zh_CN/LC_MESSAGES/``
    ``multigpu.po``, or ``<module>.po`` for a page module, :func:`domain`)."""
    return LOCALE_DIR / LOCALES[check(language)] / "LC_MESSAGES" / f"{name}.po"


@cache
def messages(language: str) -> dict[str, str]:
    """The translations of all ``language``'s catalogs, message id -> text; empty and fuzzy entries left out
    (English, or a language without catalogs: none). Read once; :func:`reload` forgets it."""
    if check(language) == "en":
        return {}
    out: dict[str, str] = {}
    for path in sorted(catalog_path(language).parent.glob("*.po")):
        with path.open("rb") as handle:
            catalog = pofile.read_po(handle)
        out.update({str(m.id): str(m.string) for m in catalog if m.id and m.string and not m.fuzzy})
    return out


def reload() -> None:
    """Forget the catalogs read so far (after writing one)."""
    messages.cache_clear()


def current() -> str:
    """The language text is computed in now ("en" unless inside :func:`using`)."""
    return _current.get()


@contextmanager
def using(language: str) -> Iterator[str]:
    """Compute text in ``language`` inside the ``with`` block (a context variable: threads and tasks keep their own)."""
    token = _current.set(check(language))
    try:
        yield language
    finally:
        _current.reset(token)


def per_language(make: Callable[[], T]) -> dict[str, T]:
    """``make()`` once in each language of :data:`LANGUAGES`, by language: ``{"en": ..., "zh": ...}``."""
    out = {}
    for language in LANGUAGES:
        with using(language):
            out[language] = make()
    return out


def _(message: str, **values: object) -> str:
    """``message`` (a literal: Babel extracts it) in the current language, then ``str.format(**values)`` where
    values are given. A message without a translation stays English (the catalog check reports it)."""
    text = messages(current()).get(message, message)
    return text.format(**values) if values else text


def N_(message: str) -> str:
    """Mark a literal as a message for extraction; return it untranslated (translate it with :func:`label`)."""
    return message


#: How English shows the ids that the data and the command line's JSON keep (the verdicts of the claim checks):
#: words for people, never a code with hyphens.
ENGLISH_NAMES = {"holds-with-caveat": "holds, with a caveat", "not-checkable": "cannot be checked"}


def label(text: str, language: str | None = None) -> str:
    """``text`` in ``language`` (default: the current one). English shows an id of :data:`ENGLISH_NAMES` by its
    name. Outside English its translation must exist: a LookupError names the text, which needs an
    ``N_("...")`` in src/multigpu/book and ``make i18n``."""
    language = check(language or current())
    if language == "en":
        return ENGLISH_NAMES.get(text, text)
    found = messages(language).get(text)
    if found is None:
        raise LookupError(f"no {language} translation of {text!r} in {catalog_path(language)}: mark it with "
                          "N_() in src/multigpu/book, run `make i18n` and translate it")
    return found


def text_width(text: str) -> int:
    """``text``'s width in half-width characters: a wide (CJK) character counts two, any other one."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def editions_html(parts: Mapping[str, str]) -> str:
    """One HTML output for every edition: each language's part in ``<div class="mg-lang-<language>">`` (with
    its ``lang``), in :data:`LANGUAGES` order; the site's style sheet shows a page the part in its language."""
    missing = [language for language in LANGUAGES if language not in parts]
    if missing:
        raise ValueError(f"no part for {', '.join(missing)}: an output for both editions needs every language")
    divs = []
    for language in LANGUAGES:
        attr = f' lang="{HTML_LANG[language]}"' if HTML_LANG[language] else ""
        divs.append(f'<div class="mg-lang-{language}"{attr}>{parts[language]}</div>')
    return "\n".join(divs)
