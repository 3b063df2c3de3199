"""The book as a two-hour training session (issue 43): each chapter states its share of the time, reading and
exercises apart, and the shares fill the session, in both editions."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("*.ipynb"))
SESSION_MIN = 120
EN = re.compile(r"In a two-hour session this chapter takes about (\d+) minutes: (\d+) to read and (\d+) for the "
                r"exercises\.")
ZH = re.compile(r"在两小时的课程中，本章约占 (\d+) 分钟：阅读 (\d+) 分钟，练习 (\d+) 分钟。")


def _budget(pattern: re.Pattern[str], text: str, where: str) -> tuple[int, int, int]:
    found = pattern.findall(" ".join(text.split()))
    assert len(found) == 1, f"{where}: {len(found)} time budgets"
    return tuple(int(n) for n in found[0])


def test_every_chapter_states_its_share_of_a_two_hour_session():
    budgets = []
    for path in CHAPTERS:
        markdown = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
        total, read, work = _budget(EN, markdown, path.name)
        assert read + work == total, path.name
        budgets.append(total)
    assert len(budgets) == 5 and sum(budgets) == SESSION_MIN


def test_the_chinese_edition_states_the_same_budgets():
    for path in CHAPTERS:
        markdown = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
        catalog = (ROOT / "book/locales/zh_CN/LC_MESSAGES/book/chapters" / f"{path.stem}.po").read_text("utf-8")
        joined = "".join(re.findall(r'^(?:msgid |msgstr )?"(.*)"$', catalog, flags=re.M))
        assert _budget(ZH, joined, path.name) == _budget(EN, markdown, path.name)
