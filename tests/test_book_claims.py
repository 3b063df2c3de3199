"""The claims appendix's book module (multigpu.book.app_claims): the page's facts and sections follow the
price table the page passes down, checked on the packaged price file and on tests/data/prices/good.csv."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from glue_citations import roles
from matplotlib.figure import Figure

from multigpu.book import app_claims
from multigpu.evidence import claims
from multigpu.market import prices

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "prices" / "good.csv"
NOTEBOOK = ROOT / "book" / "appendix" / "claims-check.ipynb"
FILES = ("default", "good")


@pytest.fixture(scope="module")
def tables() -> dict[str, prices.PriceTable]:
    return {"default": prices.default_table(), "good": prices.load_table(GOOD)}


@pytest.fixture(scope="module")
def checked(tables) -> dict[str, object]:
    """The claims table of each price file, and the chapter titles."""
    frames = {name: app_claims.claims_table(claims.check_all(claims.Inputs(prices=table)))
              for name, table in tables.items()}
    return {"frames": frames, "titles": app_claims.chapter_titles(frames["default"]["chapter"], ROOT)}


def test_page_cites_the_facts_with_the_right_role(tables, checked):
    cited = roles(NOTEBOOK)
    facts = app_claims.price_facts(tables["default"]) | app_claims.verdict_facts(checked["frames"]["default"],
                                                                                 checked["titles"])
    assert set(facts) == set(cited)
    for name, value in facts.items():
        assert isinstance(value, str) if cited[name] == "md" else type(value) is int, name


def test_price_stamp_names_the_file(tables):
    stamps = {name: app_claims.price_facts(table)["price_stamp"] for name, table in tables.items()}
    for name in FILES:
        stamp = tables[name].stamp()
        assert f"`{stamp['name']}` (sha256 {stamp['sha256_12']}), {stamp['offers']} offers" in stamps[name]
    assert stamps["default"] != stamps["good"]


def test_verdict_counts_follow_the_price_file(checked):
    titles = checked["titles"]
    facts = {name: app_claims.verdict_facts(frame, titles) for name, frame in checked["frames"].items()}
    for name in FILES:
        frame, f = checked["frames"][name], facts[name]
        counts = frame["verdict"].value_counts()
        assert f["n_claims"] == len(frame) == 27
        for verdict, key in app_claims.VERDICT_KEYS.items():
            assert f[f"n_{key}"] == counts.get(verdict, 0)
        flagged = frame[frame["verdict"].isin(["misleading", "wrong"])]
        assert f["n_flagged"] == len(flagged) and f["flagged_ids"] == ", ".join(flagged["id"])
        per_chapter = flagged["chapter"].value_counts()
        assert f["worst_chapter_n"] == per_chapter.max()
        assert f["worst_chapter"] in {titles[doc] for doc, n in per_chapter.items() if n == per_chapter.max()}
        ch1 = frame[frame["chapter"] == app_claims.HARDWARE_CHAPTER]
        assert f["ch1_total"] == len(ch1)
        assert f["ch1_clean"] == ch1["verdict"].isin(["holds", "holds-with-caveat"]).sum()
    # C24 and C26 depend on the prices: good.csv has no same-provider pair (C24 not checkable)
    verdicts = {name: frame.set_index("id")["verdict"] for name, frame in checked["frames"].items()}
    assert verdicts["good"]["C24"] == "not-checkable" != verdicts["default"]["C24"]
    assert facts["good"]["n_nc"] == facts["default"]["n_nc"] + 1


def test_cost_sections_state_their_price_file(tables, checked):
    for name in FILES:
        sections = app_claims.claim_sections(checked["frames"][name], checked["titles"])
        by_id = {re.match(r"#### (C\d\d) · ", s).group(1): s for s in sections}
        assert list(by_id) == [f"C{i:02d}" for i in range(1, 28)]
        stamp = tables[name].stamp()
        for claim_id in ("C24", "C26"):
            assert f"{stamp['name']} (sha256 {stamp['sha256_12']})" in by_id[claim_id]
            assert by_id[claim_id].endswith("{doc}`Cost-benefit: when NVLink pays for itself "
                                            "<../chapters/04-cost-benefit>`.")


def test_verdict_facts_escape_markdown_and_break_ties_in_chapter_order():
    rows = (("C01", "holds", "book/chapters/01-nvlink-generations"),
            ("C02", "wrong", "book/chapters/01-nvlink-generations"),
            ("C10", "misleading", "book/chapters/03-communication-bottlenecks"))
    verdicts = [claims.Verdict(id=i, verdict=v, seed_value="1", model_value=1.0, unit="x", explanation="e",
                               chapter=ch) for i, v, ch in rows]
    frame = app_claims.claims_table(verdicts)
    titles = {"book/chapters/01-nvlink-generations": "One *star*",
              "book/chapters/03-communication-bottlenecks": "Three"}
    f = app_claims.verdict_facts(frame, titles)
    assert (f["ch1_clean"], f["ch1_total"], f["n_flagged"], f["worst_chapter_n"]) == (1, 2, 2, 1)
    assert f["worst_chapter"] == "One \\*star\\*" and f["flagged_ids"] == "C02, C10"
    assert (f["n_holds"], f["n_wrong"], f["n_misleading"], f["n_caveat"], f["n_nc"]) == (1, 1, 1, 0, 0)


@pytest.mark.parametrize(("docname", "page", "link"), [
    ("book/chapters/04-cost-benefit", "book/appendix/claims-check", "../chapters/04-cost-benefit.ipynb"),
    ("book/chapters/01-nvlink-generations", "book/intro", "chapters/01-nvlink-generations.ipynb")])
def test_chapter_link_is_relative_to_the_page(docname, page, link):
    assert app_claims.chapter_link(docname, page) == link


def test_overview_table_names_the_chapters(checked):
    overview = app_claims.overview_table(checked["frames"]["default"], checked["titles"])
    assert list(overview.columns) == ["verdict", "seed_value", "model_value", "unit", "chapter"]
    assert overview.index.name == "id" and overview.loc["C24", "chapter"] == "Cost-benefit: when NVLink pays for itself"


def test_verdict_figure(checked):
    frame = app_claims.verdicts_by_chapter(checked["frames"]["default"], checked["titles"])
    table = prices.default_table()
    fig = app_claims.figure_verdicts_by_chapter(frame, table)
    assert isinstance(fig, Figure)
    assert any("app_claims.verdicts_by_chapter" in t.get_text() for t in fig.texts)
    assert any(table.source_label() in t.get_text() for t in fig.texts)  # the cost claims' price file
    assert len(fig.axes[0].containers) == int((frame.drop(columns="total").sum() > 0).sum())
    plt.close(fig)
