"""Appendix, model validation: the predicted-against-measured figure of :mod:`multigpu.evidence.validation`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from multigpu.book import plotting
from multigpu.evidence import validation


def _scatter(ax, part: pd.DataFrame, style: int, label: str) -> None:
    color, marker = plotting.COLORS[style % 8], plotting.MARKERS[style % 8]
    for filled in (True, False):
        rows = part[(part["set"] == "fitted on") == filled]
        if len(rows):
            ax.scatter(rows["measured"], rows["predicted"], marker=marker, s=36, linewidths=1.2,
                       facecolors=color if filled else "none", edgecolors=color,
                       label=f"{label}, {'fitted on' if filled else 'not fitted on'}")



def _diagonal(ax, lo: float, hi: float) -> None:
    line = np.array([lo, hi])
    ax.plot(line, line, color="#444444", linewidth=1, linestyle="-", marker="")
    for factor in (0.9, 1.1):
        ax.plot(line, factor * line, color="#888888", linewidth=0.8, linestyle="--", marker="")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)



def plot_predicted_vs_measured(axes, table: pd.DataFrame | None = None, label_above_pct: float = 10.0) -> None:
    """Two panels of :func:`comparisons`, predicted against measured on log axes, with y = x (solid) and
    +-10 % (dashed): bandwidths (collectives and copies, GB/s) on the left, training iterations (s) on the
    right. Filled markers: a constant was fitted on the row; hollow: not. Rows off by more than
    ``label_above_pct`` are labelled with their ref."""
    table = validation.comparisons() if table is None else table
    left, right = axes
    bw = table[table["kind"] != "training"]
    groups = (("collectives, reference set", (bw["kind"] == "collective") & (bw["set"] != "out of sample")),
              ("copies, reference set", bw["kind"] == "copy"),
              ("collectives, out of sample", bw["set"] == "out of sample"))
    for style, (label, mask) in enumerate(groups):
        _scatter(left, bw[mask], style, label)
    train = table[table["kind"] == "training"]
    _scatter(right, train, 3, "training runs")
    for ax, part in ((left, bw), (right, train)):
        values = np.concatenate([part["measured"].to_numpy(), part["predicted"].to_numpy()])
        _diagonal(ax, values.min() / 1.6, values.max() * 1.6)
        far = part[part["error_pct"].abs() > label_above_pct].sort_values("measured")
        for j, row in enumerate(far.itertuples()):
            ax.annotate(row.ref, (row.measured, row.predicted), textcoords="offset points",
                        xytext=(6, -11 if j % 2 else 5), fontsize=7.5)
        ax.legend(fontsize=7, loc="lower right")
    left.set_title("collectives and copies", fontsize=10)
    right.set_title("training iterations (DGX A100 nodes)", fontsize=10)
    left.set_xlabel("measured (GB/s, log scale)")
    left.set_ylabel("predicted (GB/s, log scale)")
    right.set_xlabel("measured (s per iteration, log scale)")
    right.set_ylabel("predicted (s per iteration, log scale)")
