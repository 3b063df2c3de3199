"""The claims appendix (book/appendix/claims-check.ipynb) agrees with the CLI, and its helpers work.

The notebook is committed executed; these tests read its stored outputs (no kernel), so that a notebook
left stale after a change to a check fails here as well as under nbval.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from multigpu.book import app_claims, glue, lang, plotting
from multigpu.cli.app import main
from multigpu.evidence import claims
from multigpu.evidence.claims import rules
from multigpu.market import prices

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "appendix" / "claims-check.ipynb"
IDS = [f"C{i:02d}" for i in range(1, 28)]


@pytest.fixture(scope="module")
def cli_rows() -> list[dict]:
    """The claims command's JSON, run in this process (its searches from the package's memo; the entry point
    itself is test_cli's)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["claims", "--format", "json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def stored() -> dict:
    """The executed notebook's claim sections (by id; English, and Chinese under "zh") and glued counts."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    sections, glued = {}, {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            markdown = data.get("text/markdown", "")
            edition = re.match(r'<div class="mg-lang-(\w+)"', markdown)
            if edition:
                parts = re.split(r"^(?=#+ C\d\d · )", markdown, flags=re.M)[1:]
                found = {re.match(r"#+ (C\d\d)", part).group(1): part for part in parts}
                if edition.group(1) == "en":
                    sections.update(found)
                else:
                    sections.setdefault(edition.group(1), {}).update(found)
            record = data.get("application/papermill.record/text/plain")
            if record is not None:
                glued[output["metadata"]["scrapbook"]["name"]] = record
    return {"sections": sections, "glued": glued, "notebook": notebook}


def _unescape(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def test_cli_gives_a_verdict_for_all_27_claims(cli_rows):
    assert [row["id"] for row in cli_rows] == IDS
    assert all(row["verdict"] in claims.VERDICTS for row in cli_rows)


def test_notebook_has_one_section_per_claim_in_id_order(stored):
    assert [key for key in stored["sections"] if key != "zh"] == IDS
    assert list(stored["sections"]["zh"]) == IDS  # the Chinese edition has every claim too


def test_chinese_sections_quote_the_article_and_give_the_verdict_in_chinese(cli_rows, stored):
    explained = {v.id: v.explanation for v in claims.check_all()}
    for row in cli_rows:
        text = _unescape(stored["sections"]["zh"][row["id"]])
        assert text.startswith(f"#### {row['id']} · {claims.seed_claims()[row['id']]['claim_zh']}"), row["id"]
        with lang.using("zh"):
            assert f"**{lang.label(row['verdict'])}**" in text, row["id"]
            chinese = glue.say(explained[row["id"]])  # the explanation, rendered from its finding
        assert chinese in text and chinese != row["explanation"], row["id"]
        assert sorted(re.findall(r"\d+", chinese)) == sorted(re.findall(r"\d+", row["explanation"])), row["id"]
        assert "判定依据：" in text and "推导过程见" in text, row["id"]


def test_notebook_sections_match_the_cli(cli_rows, stored):
    for row in cli_rows:
        text = _unescape(stored["sections"][row["id"]])
        value = app_claims.format_value(row["model_value"], row["unit"])
        assert f"**Verdict:** **{lang.label(row['verdict'], 'en')}**" in text, row["id"]
        assert f"**Article:** {row['seed_value']}" in text, row["id"]
        assert f"**Model or catalogue:** {value}" in text, row["id"]
        assert row["explanation"] in text, row["id"]
        assert f" <{'../' + row['chapter'].removeprefix('book/')}>`" in text, row["id"]  # a {doc} cross-reference
        assert claims.seed_claims()[row["id"]]["claim_zh"] in text, row["id"]


def test_glued_counts_match_the_cli(cli_rows, stored):
    glued = stored["glued"]
    assert int(glued["n_claims"]) == len(cli_rows) == 27
    counts = pd.Series([row["verdict"] for row in cli_rows]).value_counts()
    for key, verdict in (("holds", "holds"), ("caveat", "holds-with-caveat"), ("misleading", "misleading"),
                         ("wrong", "wrong"), ("nc", "not-checkable")):
        assert int(glued[f"n_{key}"]) == int(counts.get(verdict, 0)), verdict


def test_notebook_renders_markdown_output_as_myst():
    # so that the chapter links in the generated sections are checked cross-references, not raw .ipynb hrefs
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert notebook.metadata["mystnb"]["render_markdown_format"] == "myst"


def test_not_checkable_is_only_for_claims_with_a_missing_input():
    assert rules.not_checkable_problems(claims.check_all()) == []


def test_not_checkable_rule_catches_misuse():
    base = dict(seed_value="costs 50 % more", unit="-", explanation="e", chapter="book/chapters/04-cost-benefit")
    missing = rules.needs("a price file with comparable offers", False)
    _, with_missing = rules.judge(missing)
    _, all_there = rules.judge(rules.needs("a price file with comparable offers", True), rules.fact("f", True))
    good = claims.Verdict(id="C24", verdict="not-checkable", model_value="", rule=with_missing, **base)
    assert rules.not_checkable_problems([good]) == []
    unexplained = claims.Verdict(id="C24", verdict="not-checkable", model_value="", rule=all_there, **base)
    with_number = claims.Verdict(id="C24", verdict="not-checkable", model_value=1.5, rule=with_missing, **base)
    judged_anyway = claims.Verdict(id="C24", verdict="holds", model_value=1.5, rule=with_missing, **base)
    assert len(rules.not_checkable_problems([unexplained])) == 1
    assert len(rules.not_checkable_problems([with_number])) == 1
    assert len(rules.not_checkable_problems([judged_anyway])) == 1


def test_table_counts_and_chapter_crosstab_agree():
    verdicts = [claims.Verdict(id=i, verdict=v, seed_value="1", model_value=1.0, unit="x", explanation="e",
                               chapter=ch)
                for i, v, ch in (("C01", "holds", "book/chapters/01-nvlink-generations"),
                                 ("C02", "wrong", "book/chapters/01-nvlink-generations"),
                                 ("C05", "misleading", "book/chapters/02-nvswitch-topology"))]
    table = app_claims.claims_table(verdicts)
    assert list(table["claim_zh"]) == [claims.seed_claims()[i]["claim_zh"] for i in ("C01", "C02", "C05")]
    counts = app_claims.verdict_counts(table).set_index("verdict")["claims"]
    assert list(counts.index) == list(claims.VERDICTS) and counts.sum() == 3 and counts["not-checkable"] == 0
    by = app_claims.verdicts_by_chapter(table, {"book/chapters/01-nvlink-generations": "One"})
    assert list(by.index) == ["One", "book/chapters/02-nvswitch-topology"]
    assert list(by["total"]) == [2, 1] and by.loc["One", "wrong"] == 1


def test_chapter_titles_come_from_the_notebooks():
    titles = app_claims.chapter_titles(["book/chapters/02-nvswitch-topology"], ROOT)
    assert titles == {"book/chapters/02-nvswitch-topology": "NVSwitch topology"}


def test_claim_markdown_escapes_and_links():
    row = {"id": "C26", "claim_en": "a *bold* [claim]", "claim_zh": "中文", "seed_value": "<= 10B",
           "model_value": "on-demand: <= 1.2", "unit": "$ billion", "verdict": "holds",
           "explanation": "costs $5_000", "chapter": "book/chapters/04-cost-benefit"}
    text = app_claims.claim_markdown(row, "Cost-benefit", "../chapters/04-cost-benefit.ipynb")
    assert text.startswith("#### C26 · a \\*bold\\* \\[claim\\]")
    assert "\\<= 10B" in text and "\\$5\\_000" in text and "> 中文" in text
    assert text.endswith("{doc}`Cost-benefit <../chapters/04-cost-benefit>`.")


@pytest.mark.parametrize(("value", "unit", "text"), [
    (2016, "year", "2016 year"), (14.88, "x", "14.88 x"), (259.2, "TB/s", "259.2 TB/s"),
    (1 / 3, "x", "0.333333 x"), ("2018; 16 GPUs", "", "2018; 16 GPUs"),
    ("2018; 16 GPUs", "year; GPUs", "2018; 16 GPUs (units: year; GPUs)")])
def test_format_value(value, unit, text):
    assert app_claims.format_value(value, unit) == text


def test_verdict_figure_draws_one_bar_set_per_verdict_present():
    frame = pd.DataFrame({"holds": [2, 0], "holds-with-caveat": [1, 3], "misleading": [0, 1], "wrong": [0, 0],
                          "not-checkable": [0, 0], "total": [3, 4]}, index=["A", "B"])
    fig, ax = plotting.figure("t", "claims (count)", "chapter", source="test")
    app_claims.plot_verdicts_by_chapter(ax, frame)
    assert len(ax.containers) == 3  # verdicts no claim has are not drawn
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["holds", "holds, with a caveat", "misleading"]  # names for people
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_stored_price_stamp_is_the_packaged_files(stored):
    # the page states the price file its C24 and C26 verdicts used; stored with the packaged one
    notebook = stored["notebook"]
    stamps = [output["data"]["application/papermill.record/text/markdown"]
              for cell in notebook.cells for output in cell.get("outputs", [])
              if output.get("metadata", {}).get("scrapbook", {}).get("name") == "price_stamp"]
    assert stamps == [prices.default_table().stamp_markdown()]
