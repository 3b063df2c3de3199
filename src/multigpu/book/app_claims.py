"""Appendix, claims check: the verdicts as a table, a figure and one markdown section per claim."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu.evidence import claims

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



def plot_verdicts_by_chapter(ax, frame: pd.DataFrame) -> None:
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
                label=verdict)
        for yi, x0, value in zip(y, left, values):
            if value:
                ax.text(x0 + value / 2, yi, f"{int(value)}", ha="center", va="center", fontsize=8,
                        color="#ffffff" if verdict == "wrong" else "#000000",
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": color, "edgecolor": "none"})
        left = left + values
    ax.set_yticks(y, list(frame.index), fontsize=8)
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, max(left.max(), 1) * 1.05)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, title="verdict", title_fontsize=8)



def _md(text: object) -> str:
    """Text escaped for Markdown (no emphasis, links, HTML or maths by accident)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))



def format_value(value: float | str, unit: str) -> str:
    """A model value with its unit, as text: a number (up to 6 significant digits) followed by its unit;
    a text value (several numbers, each with its own unit) followed by ``(units: ...)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return f"{value} (units: {unit})" if unit else str(value)
    text = str(int(value)) if float(value).is_integer() else f"{float(value):.6g}"
    return f"{text} {unit}".strip()



def claim_markdown(row: Mapping[str, object], chapter_title: str, link: str, level: int = 4) -> str:
    """One claim's section as Markdown: heading ``C05 · claim``, the Chinese quote, the article's and the
    model's value, the verdict, the explanation, and a link (``link``, relative to the page) to the chapter."""
    lines = [
        f"{'#' * level} {row['id']} · {_md(row['claim_en'])}",
        "",
        f"> {_md(row['claim_zh'])}",
        "",
        f"- **Article:** {_md(row['seed_value'])}",
        f"- **Model or catalogue:** {_md(format_value(row['model_value'], str(row['unit'])))}",
        f"- **Verdict:** **{row['verdict']}**",
        "",
        _md(row["explanation"]),
        "",
        f"The work is shown in [{_md(chapter_title)}]({link}).",
    ]
    return "\n".join(lines)



def not_checkable_problems(verdicts: Sequence[claims.Verdict]) -> list[str]:
    """Verdicts that break the rule for ``not-checkable``: used only where the claim has no number to
    check (no digit in the article's value, a model value that is not a number), and the explanation says
    why ("because" or "no number"). Returns one message per problem (empty if none)."""
    problems = []
    for v in verdicts:
        if v.verdict != "not-checkable":
            continue
        if re.search(r"\d", v.seed_value):
            problems.append(f"{v.id}: not-checkable, but the article's value has a number: {v.seed_value!r}")
        if isinstance(v.model_value, (int, float)) and not isinstance(v.model_value, bool):
            problems.append(f"{v.id}: not-checkable, but the model gives a number: {v.model_value!r}")
        if not re.search(r"\bbecause\b|\bno number\b", v.explanation):
            problems.append(f"{v.id}: not-checkable without saying why ('because' or 'no number')")
    return problems
