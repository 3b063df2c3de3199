"""Appendix, claims check: the verdicts as a table, a figure, one markdown section per claim, and the
facts the page's prose cites, in both editions from one execution (:mod:`multigpu.book.lang`).

The Chinese sections give the claim as the article words it, the values, the verdict and what decided it: the
verdict's tests, each a finding of the evidence layer rendered from the catalogs (:func:`multigpu.book.glue.
render`); chapter titles come from each chapter's page catalog.

The page passes down the price table of the build (``inputs.price_table()``): the verdicts of C24 and
C26, their sections, the verdict counts and the price stamp follow it. Nothing here reads the environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from multigpu.book import claim_values, glue, i18n, lang, plotting, tables
from multigpu.book.glue import Facts
from multigpu.book.lang import N_, _
from multigpu.evidence import claims
from multigpu.market.prices import PriceTable

#: The chapter of hardware claims, whose clean record the page's prose cites.
HARDWARE_CHAPTER = "book/chapters/01-nvlink-generations"
#: Glue-name suffix of each verdict's count (``n_holds``, ``n_caveat``, ...).
VERDICT_KEYS = {"holds": "holds", "holds-with-caveat": "caveat", "misleading": "misleading", "wrong": "wrong",
                "not-checkable": "nc"}
#: The verdicts the page counts as flagged.
FLAGGED = ("misleading", "wrong")

#: Fill and hatch of each verdict in :func:`plot_verdicts_by_chapter` (grey-scale: light = holds).
VERDICT_STYLE: dict[str, tuple[str, str]] = {
    "holds": ("#ffffff", ""),
    "holds-with-caveat": ("#d9d9d9", "///"),
    "misleading": ("#969696", "..."),
    "wrong": ("#404040", "xxx"),
    "not-checkable": ("#f0f0f0", "\\\\\\"),
}



_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>$|{}])")



def claims_table(verdicts: Sequence[claims.Verdict] | None = None) -> pd.DataFrame:
    """One row per checked claim: the article's words and value beside the model's.

    Columns: ``id``, ``claim_en``, ``claim_zh`` (the quote, from ``data/claims.csv``),
    ``seed_value`` (the article's value, as text), ``model_value`` and ``unit`` (the model's or
    catalogue's value), ``verdict``, ``explanation``, ``chapter`` (the docname of the chapter
    that shows the work). ``verdicts`` defaults to :func:`multigpu.evidence.claims.check_all`.
    """
    verdicts = claims.check_all() if verdicts is None else verdicts
    seed = claims.seed_claims()
    rows = [{"id": v.id, "claim_en": seed[v.id]["claim_en"], "claim_zh": seed[v.id]["claim_zh"],
             "seed_value": v.seed_value, "model_value": v.model_value, "unit": v.unit, "verdict": v.verdict,
             "explanation": v.explanation, "chapter": v.chapter} for v in verdicts]
    return pd.DataFrame(rows, columns=["id", "claim_en", "claim_zh", "seed_value", "model_value", "unit",
                                       "verdict", "explanation", "chapter"])



def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Claims per verdict, in the order of :data:`multigpu.evidence.claims.VERDICTS` (zeros included).

    Columns: ``verdict``, ``claims`` (count), ``share_pct``.
    """
    counts = table["verdict"].value_counts()
    frame = pd.DataFrame({"verdict": list(claims.VERDICTS),
                          "claims": [int(counts.get(v, 0)) for v in claims.VERDICTS]})
    frame["share_pct"] = 100 * frame["claims"] / max(len(table), 1)
    return frame



def chapter_titles(docnames: Iterable[str], root: str | Path) -> dict[str, str]:
    """The title (first ``# `` heading) of each chapter, by docname, read from the notebooks under ``root``."""
    import nbformat

    titles = {}
    for docname in dict.fromkeys(docnames):
        path = Path(root) / f"{docname}.ipynb"
        notebook = nbformat.read(path, as_version=4)
        heading = next((line[2:].strip() for cell in notebook.cells if cell.cell_type == "markdown"
                        for line in cell.source.splitlines() if line.startswith("# ")), None)
        if heading is None:
            raise ValueError(f"{path}: no '# ' title heading")
        titles[docname] = heading
    return titles



def verdicts_by_chapter(table: pd.DataFrame, titles: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Claims per chapter (rows, in docname order) and verdict (columns, every verdict), plus ``total``.

    The index is the chapter's title where ``titles`` gives one, else its docname.
    """
    frame = pd.crosstab(table["chapter"], table["verdict"]).reindex(columns=list(claims.VERDICTS), fill_value=0)
    frame = frame.sort_index()
    frame["total"] = frame.sum(axis=1)
    if titles:
        frame.index = [titles.get(doc, doc) for doc in frame.index]
    frame.index.name = "chapter"
    frame.columns.name = None
    return frame



def plot_verdicts_by_chapter(ax: Axes, frame: pd.DataFrame) -> None:
    """Stacked horizontal bars of :func:`verdicts_by_chapter`: claims per chapter, by verdict.

    Grey fills from light (holds) to dark (wrong), each with its own hatch, so that they read in
    grey-scale print; verdicts no claim has are left out of the legend.
    """
    y = -np.arange(len(frame))
    left = np.zeros(len(frame))
    for verdict in claims.VERDICTS:
        values = frame[verdict].to_numpy(dtype=float)
        if not values.any():
            continue
        color, hatch = VERDICT_STYLE[verdict]
        ax.barh(y, values, left=left, height=0.6, color=color, hatch=hatch, edgecolor="#222222", linewidth=0.6,
                label=lang.label(verdict))
        for yi, x0, value in zip(y, left, values):
            if value:
                ax.text(x0 + value / 2, yi, f"{int(value)}", ha="center", va="center", fontsize=plotting.SMALL_PT,
                        color=plotting.text_color_on(color),  # its own solid box hides the hatching
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": color, "edgecolor": "none"})
        left = left + values
    ax.set_yticks(y, list(frame.index), fontsize=8)
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, max(left.max(), 1) * 1.05)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, title=_("verdict"), title_fontsize=8)



def _md(text: object) -> str:
    """Text escaped for Markdown (no emphasis, links, HTML or maths by accident)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))



def format_value(value: float | str, unit: str) -> str:
    """A model value with its unit, as text: a number (up to 6 significant digits) followed by its unit;
    a text value (several numbers, each with its own unit) followed by ``(units: ...)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return _("{value} (units: {unit})", value=value, unit=unit) if unit else str(value)
    text = str(int(value)) if float(value).is_integer() else f"{float(value):.6g}"
    return f"{text} {unit}".strip()



def claim_markdown(row: Mapping[str, object], chapter_title: str, link: str, level: int = 4,
                   verdict: claims.Verdict | None = None) -> str:
    """One claim's section as Markdown, in the current language: heading ``C05 · claim``, the article's and the
    model's value, the verdict, and a link (``link``, relative to the page) to the chapter.

    The verdict's explanation, rendered from its finding in the current language. English: the claim in English
    with the article's Chinese quote under it. Other languages: the claim as the article words it, and what
    decided the verdict, its tests' findings rendered from the catalogs (``verdict`` is needed)."""
    english = lang.current() == "en"
    heading = row["claim_en"] if english else row["claim_zh"]
    lines = [f"{'#' * level} {row['id']} · {_md(heading)}", ""]
    if english:
        lines += [f"> {_md(row['claim_zh'])}", ""]
    lines += [
        _("- **Article:** {value}", value=_md(claim_values.translate(row["seed_value"]))),
        _("- **Model or catalogue:** {value}", value=_md(format_value(claim_values.translate(row["model_value"]),
                                                                     str(claim_values.translate(row["unit"]))))),
        _("- **Verdict:** **{verdict}**", verdict=lang.label(str(row["verdict"]))),
        "",
    ]
    lines.append(_md(glue.say(verdict.explanation if verdict is not None else row["explanation"])))
    if not english:
        if verdict is None:
            raise ValueError(f"{row['id']}: the {lang.current()} section needs the verdict's tests")
        lines += ["", _("What decided it: {tests}", tests=glue.tests_markdown(verdict))]
    lines += ["", _("The work is shown in {link}.", link=doc_link(chapter_title, link))]
    return "\n".join(lines)


# ------------------------------------------------------------------ the page


def figure_verdicts_by_chapter(frame: pd.DataFrame, prices: PriceTable) -> Figure:
    """Figure, in the current language: :func:`plot_verdicts_by_chapter` of ``frame`` (:func:`verdicts_by_chapter`
    with the chapter titles of that language; claims, a count); its source line names ``prices``, the price
    file the cost claims (C24, C26) were checked with."""
    cost_claims = _("cost claims:")
    fig, ax = plotting.figure(
        _("The article's claims: verdicts by chapter"), _("claims (count)"), _("chapter that checks them"),
        source="multigpu.evidence.claims.check_all (python -m multigpu claims); "
               f"multigpu.book.app_claims.verdicts_by_chapter; {cost_claims} {prices.source_label()}",
        figsize=(6.8, 3.8))
    plot_verdicts_by_chapter(ax, frame)
    totals = frame[[v for v in claims.VERDICTS if v in frame.columns]].sum()
    counts = _(", ").join(_("{verdict} {n}", verdict=lang.label(v), n=int(n)) for v, n in totals.items() if n)
    return plotting.set_alt(fig, _("Stacked bar chart: {claims} claims of the article across {chapters} chapters, "
                                   "by verdict: {counts}.", claims=int(totals.sum()), chapters=len(frame),
                                   counts=counts))


def figures_verdicts_by_chapter(table: pd.DataFrame, titles: Mapping[str, str], prices: PriceTable) -> None:
    """Show :func:`figure_verdicts_by_chapter` in every edition, each with its language's chapter titles."""
    plotting.show_both(lambda: figure_verdicts_by_chapter(
        verdicts_by_chapter(table, titles_in(titles, lang.current())), prices))


def titles_in(titles: Mapping[str, str], language: str) -> dict[str, str]:
    """Chapter titles (by docname) in ``language``: each heading as its page's catalog translates it."""
    if language == "en":
        return dict(titles)
    locale = lang.LOCALES[language]
    return {doc: i18n.translate(title, locale, page=doc) for doc, title in titles.items()}


def overview_table(table: pd.DataFrame, titles: Mapping[str, str]) -> pd.DataFrame:
    """The page's overview, one row per claim indexed by id: verdict, the article's value, the model's value
    and its unit (as in :func:`claims_table`), and the title of the chapter that shows the work."""
    overview = table.assign(chapter=table["chapter"].map(lambda doc: titles.get(doc, doc)))
    return overview[["id", "verdict", "seed_value", "model_value", "unit", "chapter"]].set_index("id")


def doc_link(title: str, link: str) -> str:
    """A MyST cross-reference to the notebook ``link`` (relative, ``.ipynb``) that shows ``title``: the ``{doc}``
    role with an explicit title (a Markdown link to a notebook, inside a Markdown output, renders with no text)."""
    safe = str(title).replace("`", "'").replace("<", "(").replace(">", ")")
    return f"{{doc}}`{safe} <{link.removesuffix('.ipynb')}>`"


def chapter_link(docname: str, page: str = "book/appendix/claims-check") -> str:
    """The relative link from ``page`` (a docname) to the notebook of chapter ``docname``, e.g.
    ``../chapters/04-cost-benefit.ipynb`` from the claims page."""
    up = "../" * (len(PurePosixPath(page).parent.relative_to("book").parts))
    return f"{up}{PurePosixPath(docname).relative_to('book').as_posix()}.ipynb"


def claim_sections(table: pd.DataFrame, titles: Mapping[str, str],
                   verdicts: Mapping[str, claims.Verdict] | None = None) -> list[str]:
    """One Markdown section per claim of ``table`` (:func:`claim_markdown`) in the current language, in its
    order, each linking to the chapter that shows the work (:func:`chapter_link`); ``verdicts`` by id (needed
    outside English)."""
    local = titles_in(titles, lang.current())
    verdicts = verdicts or {}
    return [claim_markdown(row, local.get(row["chapter"], row["chapter"]), chapter_link(row["chapter"]),
                           verdict=verdicts.get(row["id"])) for row in table.to_dict("records")]


def show_claim_sections(table: pd.DataFrame, titles: Mapping[str, str],
                        verdicts: Mapping[str, claims.Verdict]) -> None:
    """Display every claim's section in every edition: one Markdown output per language, wrapped in its
    ``mg-lang-*`` div (raw HTML around the Markdown, so the site's style sheet shows each edition its own)."""
    from IPython.display import Markdown, display

    for language in lang.LANGUAGES:
        with lang.using(language):
            sections = claim_sections(table, titles, verdicts)
        attr = f' lang="{lang.HTML_LANG[language]}"' if lang.HTML_LANG[language] else ""
        display(Markdown(f'<div class="mg-lang-{language}"{attr}>\n\n' + "\n\n".join(sections) + "\n\n</div>"))


#: The page's table headers, as messages (:mod:`multigpu.book.tables` translates headers by them).
TABLE_HEADERS = (N_("Verdict"), N_("Claims"), N_("Share (%)"), N_("ID"), N_("Seed value"), N_("Model value"),
                 N_("Unit"), N_("Chapter"))
#: Columns whose cells are translated: the verdicts, the claims' values and units.
LABEL_COLUMNS = claim_values.label_columns("verdict")


def show_counts(table: pd.DataFrame) -> None:
    """The verdict counts (:func:`verdict_counts`) as one table per edition."""
    tables.show_table(verdict_counts(table).round(1), key=["verdict"], csv_name="claims-1", editions=True,
                      label_columns=LABEL_COLUMNS)


def show_overview(table: pd.DataFrame, titles: Mapping[str, str]) -> None:
    """The overview (:func:`overview_table`) once per edition, each with its language's chapter titles."""
    from IPython.display import HTML, display

    def one() -> str:
        frame = overview_table(table, titles_in(titles, lang.current())).reset_index()
        return tables.table_html(frame, key=["id"], csv_name="claims-2", label_columns=LABEL_COLUMNS)

    display(HTML(lang.editions_html(lang.per_language(one))))


def price_facts(prices: PriceTable) -> Facts:
    """The price file the page's price-dependent verdicts (C24, C26) used: ``price_stamp``, a Markdown
    sentence with its name, SHA-256 prefix, number of offers and the dates they were observed, in the current
    language."""
    return {"price_stamp": glue.say(prices.stamp_markdown())}


def verdict_facts(table: pd.DataFrame, titles: Mapping[str, str]) -> Facts:
    """The counts the page's prose cites, from :func:`claims_table` (claims, counts): ``n_claims``; per
    verdict ``n_holds``, ``n_caveat``, ``n_misleading``, ``n_wrong``, ``n_nc``; ``ch1_clean`` and
    ``ch1_total`` (chapter 1's claims that hold, with or without a caveat, and all of them); ``n_flagged``
    (misleading or wrong), ``flagged_ids`` (their ids, text), ``worst_chapter`` (the title of the chapter
    with most flagged claims, text; the first in chapter order on a tie) and ``worst_chapter_n``."""
    counts = verdict_counts(table).set_index("verdict")["claims"]
    by_chapter = verdicts_by_chapter(table, titles)
    out: Facts = {"n_claims": len(table)}
    out.update({f"n_{key}": int(counts[verdict]) for verdict, key in VERDICT_KEYS.items()})
    hardware = by_chapter.loc[titles.get(HARDWARE_CHAPTER, HARDWARE_CHAPTER)]  # titles in the page's language
    out["ch1_clean"] = int(hardware["holds"] + hardware["holds-with-caveat"])
    out["ch1_total"] = int(hardware["total"])
    flagged = by_chapter[list(FLAGGED)].sum(axis=1)
    out["n_flagged"] = int(flagged.sum())
    out["flagged_ids"] = _md(_(", ").join(table[table["verdict"].isin(FLAGGED)]["id"]))
    out["worst_chapter"] = _md(flagged.idxmax())
    out["worst_chapter_n"] = int(flagged.max())
    return out


def page_facts(table: pd.DataFrame, titles: Mapping[str, str], prices: PriceTable) -> Facts:
    """Every fact the page's prose cites, for both editions: :func:`verdict_facts` and :func:`price_facts`,
    the text ones also as ``<name>_zh`` (chapter titles from the Chinese catalogs, the Chinese price stamp)."""

    def text() -> Facts:
        facts = verdict_facts(table, titles_in(titles, lang.current())) | price_facts(prices)
        return {name: value for name, value in facts.items() if isinstance(value, str)}

    numbers = {name: value for name, value in verdict_facts(table, titles).items() if not isinstance(value, str)}
    return numbers | glue.per_language(text)
