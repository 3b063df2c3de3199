"""One Chinese term per concept, as the glossary (book/appendix/glossary.md) renders it: the Chinese edition's
catalogs (the pages' prose and every sentence the package computes) and the data's Chinese names never use a
variant the glossary does not.

Each rule names the glossary's term, the variants that drifted into the edition before (a board called 主板,
"motherboard", beside the glossary's HGX 基板; token beside 词元), and where the glossary uses the term. A unit
(tokens/s), a glossary link's English target (``{term}`... <tokens per second>```), a placeholder and code are
not prose and are left out.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from babel.messages import pofile

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "book" / "appendix" / "glossary.md"
CATALOGS = sorted([*(ROOT / "book" / "locales" / "zh_CN" / "LC_MESSAGES").rglob("*.po"),
                   *(ROOT / "src" / "multigpu" / "book" / "locales" / "zh_CN" / "LC_MESSAGES").glob("*.po")])
#: The glossary page's own catalog keeps each entry's English definition on purpose.
ENGLISH_ON_PURPOSE = {"glossary.po"}
#: Not prose: a glossary link's target, a placeholder, inline code, a unit of tokens per second.
NOT_PROSE = re.compile(r"<[^<>]*>|\{[^{}]*\}|`[^`]*`|\btokens?\s*/\s*s\b")
#: term -> (the variants it replaces, the glossary text that uses it)
RULES = {
    "基板": (re.compile(r"主板"), "HGX 基板"),
    "词元": (re.compile(r"\btokens?\b", re.IGNORECASE), "每输出词元时间"),
    "归约": (re.compile(r"规约"), "全归约"),
    "集合通信": (re.compile(r"聚合通信"), "集合通信"),
}


def chinese_texts() -> list[tuple[str, str]]:
    """(where, text) for every Chinese message of the catalogs and every Chinese name of the data files."""
    found = []
    for path in CATALOGS:
        with path.open("rb") as handle:
            catalog = pofile.read_po(handle)
        for message in catalog:
            if message.id and isinstance(message.string, str) and message.string:
                found.append((f"{path.name}: {str(message.id)[:40]!r}", message.string))
    data = ROOT / "src" / "multigpu" / "data"
    for name, column in (("systems.csv", "name_zh"), ("cost_workloads.csv", "title_zh")):
        with (data / name).open(encoding="utf-8") as handle:
            found += [(f"{name}: {row['id']}", row[column]) for row in csv.DictReader(handle) if row[column]]
    return found


@pytest.fixture(scope="module")
def texts() -> list[tuple[str, str]]:
    return chinese_texts()


def test_the_rules_follow_the_glossary():
    glossary = GLOSSARY.read_text(encoding="utf-8")
    for term, (_variants, used) in RULES.items():
        assert term in used and used in glossary, f"the glossary does not render {term} as in '{used}'"


@pytest.mark.parametrize("term", RULES)
def test_the_chinese_edition_uses_the_glossary_s_term(texts, term):
    variants = RULES[term][0]
    drifted = [where for where, text in texts
               if where.split(":")[0] not in ENGLISH_ON_PURPOSE and variants.search(NOT_PROSE.sub(" ", text))]
    assert not drifted, f"{term} written another way in {len(drifted)} places: {drifted[:5]}"


def test_the_check_sees_the_catalogs_and_a_drift():
    assert len(CATALOGS) >= 20
    assert RULES["基板"][0].search(NOT_PROSE.sub(" ", "在 HGX H200 主板上"))
    assert not RULES["词元"][0].search(NOT_PROSE.sub(" ", "每用户 30 tokens/s，{term}`词元 <tokens>`"))
