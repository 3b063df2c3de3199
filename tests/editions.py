"""Test helper: the checks each page's two editions share. A page module computes every text fact twice, in
English as ``name`` and in Chinese as ``name_zh``; the page's Chinese catalog cites the ``_zh`` twins."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from babel.messages import pofile

ROOT = Path(__file__).resolve().parents[1]
CHINESE = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CITATION = re.compile(r"\{glue:(\w+)\}`([^`:]+)")


def catalog(page: str) -> Path:
    """The Chinese catalog of a book page (``page``: its path under ``book/`` without suffix, "chapters/..."."""
    return ROOT / "book" / "locales" / "zh_CN" / "LC_MESSAGES" / "book" / f"{page}.po"


def catalog_citations(page: str) -> list[tuple[str, str]]:
    """Every ``{glue:role}`name``` the translations of a page's catalog cite: (role, name)."""
    with catalog(page).open("rb") as handle:
        translated = " ".join(m.string for m in pofile.read_po(handle) if m.id and m.string)
    return _CITATION.findall(translated)


def text_names(facts: Mapping[str, Any]) -> set[str]:
    """The names of the English text facts (strings whose name has no ``_zh``)."""
    return {name for name, value in facts.items() if isinstance(value, str) and not name.endswith("_zh")}


def check_chinese_twins(facts: Mapping[str, Any], required: Iterable[str] = (), data: Iterable[str] = ()) -> None:
    """Each English text fact has a Chinese twin holding the same numbers (and CNY amounts beside its USD ones),
    written in Chinese unless both are empty or the fact is data (``data``: names, ids, refs, the same in both);
    every ``_zh`` fact is text."""
    names = text_names(facts)
    assert set(required) <= names, sorted(set(required) - names)
    for name in names:
        chinese = facts[f"{name}_zh"]
        assert bool(chinese) == bool(facts[name]), name
        if chinese and name not in data:
            assert CHINESE.search(chinese), (name, chinese)
        # the Chinese edition gives money in CNY first, the USD amount beside it, and declares the rate it converts
        # at ("1 USD = 6.7063 CNY"): the CNY amounts and the declaration's 1 are extra
        own = re.sub(r"¥[\d,.]+|\b1 USD = ", "", chinese)
        # "per 1M output tokens" is 每百万输出词元: the 1 of a unit's name is no figure
        english = re.sub(r"\bper 1M\b", "per M", facts[name])
        assert sorted(NUMBER.findall(own)) == sorted(NUMBER.findall(english)), (name, chinese)
    assert not [name for name in facts if name.endswith("_zh") and not isinstance(facts[name], str)]


def check_catalog_cites_twins(facts: Mapping[str, Any], page: str, english: Iterable[str] | None = None,
                              neutral: Iterable[str] = ()) -> None:
    """The page's Chinese cites, as Markdown, the ``_zh`` twin of each English text fact (``english``: those
    the English page cites; default: all of them) and, by their own name, numbers and ``neutral`` facts."""
    neutral = set(neutral)
    cited = catalog_citations(page)
    assert cited, f"{page}: the catalog cites no fact"
    for role, name in cited:
        assert name in facts, name
        assert (role == "md") == (name.endswith("_zh") or name in neutral), (role, name)
    english = text_names(facts) if english is None else set(english)
    assert {name for role, name in cited if role == "md"} == {f"{n}_zh" for n in english - neutral} | neutral


def in_chinese(label_columns: Any, column: str, text: str) -> str:
    """A translated column's cell (``text``, as the frame holds it: a finding's sentence keeps its values) as the
    Chinese table shows it: by the column's own function where the page maps its columns to one
    (``label_columns`` of :mod:`multigpu.book.tables`), else as a message."""
    from multigpu.book import lang

    translate = label_columns[column] if isinstance(label_columns, Mapping) else lang.label
    with lang.using("zh"):
        return text if text in ("", "—") else str(translate(text))


def stored_pages(notebook: Path) -> tuple[list[str], list[str]]:
    """The HTML outputs stored in an executed notebook, each checked to hold both editions (an English div,
    then a Chinese one), and those that are figures, each with its Chinese source line ("来源")."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    pages = [o["data"]["text/html"] for c in cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "text/html" in o.get("data", {})]
    for page in pages:
        assert page.startswith('<div class="mg-lang-en"') and '<div class="mg-lang-zh" lang="zh-CN">' in page
    figures = [p for p in pages if "mg-figure" in p]
    assert all("来源" in p for p in figures)
    return pages, figures
