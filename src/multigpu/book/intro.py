"""The introduction's answer: five computed lines and the decision table (:mod:`multigpu.evidence.answer`).

The introduction is an executed page: the notebook calls :func:`facts` and :func:`decision_frame` with the
build's price table, so that its summary and table follow the model and the prices like every chapter.
"""

from __future__ import annotations

import math

import pandas as pd

from multigpu.book.glue import Facts
from multigpu.comm.calibration import Calibration
from multigpu.evidence import answer, guide
from multigpu.hardware import catalog
from multigpu.market.prices import PriceTable

#: Column headers of the decision table as the reader sees them.
LABELS = {"title": "Workload", "break_even": "Break-even premium (%)", "charged": "Premium charged (%)",
          "verdict": "Verdict", "confidence": "Confidence", "chapter": "Where the work is shown"}
#: The chapter titles the table links to, by page.
PAGES = {"chapters/03-communication-bottlenecks": "Chapter 3", "chapters/04-cost-benefit": "Chapter 4"}


def decision(table: PriceTable, cal: Calibration | None = None) -> pd.DataFrame:
    """:func:`multigpu.evidence.answer.decision_table` for the build's price table."""
    return answer.decision_table(table, cal)


def _premium(value: float) -> str:
    if math.isinf(value):
        return "unbounded"
    return "—" if math.isnan(value) else f"{value:.0f}"


def decision_frame(decided: pd.DataFrame) -> pd.DataFrame:
    """The decision table as the introduction shows it: one row per workload, premiums rounded to whole per
    cent ("unbounded" where the PCIe system cannot run the workload, "—" where the file prices no pair), and
    the page that shows the work (``chapter``, its title, and ``href``, its address relative to the intro)."""
    return pd.DataFrame({"title": decided["title"], "break_even": decided["break_even_premium_pct"].map(_premium),
                         "charged": decided["charged_premium_pct"].map(_premium), "verdict": decided["verdict"],
                         "confidence": decided["confidence"],
                         "chapter": decided["chapter"].map(lambda page: PAGES.get(page, page)),
                         "href": decided["chapter"] + ".html"})


def facts(decided: pd.DataFrame, table: PriceTable, cal: Calibration | None = None) -> Facts:
    """The introduction's prose values: ``answer_1`` .. ``answer_5`` (:func:`multigpu.evidence.answer.summary`,
    Markdown), ``rule`` (the decision rule in words), ``nvlink_name`` and ``pcie_name`` (the compared systems),
    ``price_stamp`` (the price file), and ``no_pair_note`` (a sentence when the file prices no pair, else
    empty)."""
    lines = answer.summary(decided, guide.training_size_lines(table, cal))
    first = decided.iloc[0]
    out: Facts = {f"answer_{i}": line for i, line in enumerate(lines, start=1)}
    out.update(rule=answer.RULE[0].upper() + answer.RULE[1:] + ".",
               nvlink_name=catalog.system(first["nvlink_system"]).name,
               pcie_name=catalog.system(first["pcie_system"]).name, price_stamp=table.stamp_markdown(),
               no_pair_note=("" if first["charged_pairs"] else
                             "The price file rents no such pair from one provider, so the premium charged is "
                             "shown as — and no verdict is priced."))
    return out
