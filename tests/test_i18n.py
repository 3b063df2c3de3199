"""The Chinese edition's catalogs (multigpu.book.i18n): complete, and faithful to the MyST markup of the English.

The templates are regenerated from the pages (a gettext build that executes nothing, a few seconds), so prose
added to any page without its translation fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages import pofile

from multigpu.book import i18n

#: Roles and markup a translation must keep byte for byte: computed values, citations, page links, maths, URLs.
KEPT = re.compile(r"\{(?:glue:\w+|cite|doc|ref|numref|eq|download)\}`[^`]*`|\$[^$]+\$|\]\([^)]*\)")
TERM = re.compile(r"\{term\}`([^`]*)`")


def _target(term: str) -> str:
    """The glossary entry a ``{term}`` role links to: ``text <target>`` or the text itself."""
    found = re.search(r"<([^>]+)>\s*$", term)
    return found.group(1) if found else term


def catalogs() -> list[Path]:
    return sorted(i18n.CATALOGS.rglob("*.po"))


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> Path:
    return i18n.templates(tmp_path_factory.mktemp("gettext"))


def test_every_message_of_every_page_is_translated(templates):
    assert list(templates.rglob("*.pot")), "the gettext build wrote no templates"
    gaps = i18n.gaps(templates)
    assert not gaps, f"{len(gaps)} untranslated: " + "; ".join(f"{g.page} ({g.why}): {g.msgid[:50]!r}"
                                                             for g in gaps[:10])


def test_a_missing_or_fuzzy_message_is_reported(templates, tmp_path):
    """The check can fail: an empty catalog folder lacks every message, and a fuzzy entry counts as a gap."""
    assert len(i18n.gaps(templates, tmp_path)) > 100
    page = next(templates.rglob("*.pot"))
    with page.open("rb") as handle:
        catalog = pofile.read_po(handle)
    message = next(m for m in catalog if m.id)
    message.string, message.flags = "译文", {"fuzzy"}
    target = tmp_path / page.relative_to(templates).with_suffix(".po")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle:
        pofile.write_po(handle, catalog)
    gaps = [g for g in i18n.gaps(templates, tmp_path) if g.msgid == message.id]
    assert [g.why for g in gaps] == ["fuzzy"]


@pytest.mark.parametrize("path", catalogs(), ids=lambda p: p.stem)
def test_translations_keep_the_markup(path):
    """Each translation keeps the English message's glue values, citations, page links, maths and URLs, and
    links the same glossary entries (its text may be Chinese: ``{term}`张量并行 <tensor parallelism>```)."""
    with path.open("rb") as handle:
        messages = [m for m in pofile.read_po(handle) if m.id and m.string]
    assert messages
    for m in messages:
        assert sorted(KEPT.findall(m.id)) == sorted(KEPT.findall(m.string)), m.id[:80]
        assert sorted(map(_target, TERM.findall(m.id))) == sorted(map(_target, TERM.findall(m.string))), m.id[:80]


def test_numbers_stay_numbers():
    """70B stays 70B: no translation rewrites a number of the English into Chinese numerals (亿, 万)."""
    for path in catalogs():
        with path.open("rb") as handle:
            for m in pofile.read_po(handle):
                if m.id and m.string:
                    assert not re.search(r"\d+\s*[亿万]", m.string) or re.search(r"\d+\s*[亿万]", m.id), m.id[:80]
