"""Chapter 5 (selection guide): its figures, drawn from :mod:`multigpu.evidence.guide`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from multigpu.book import plotting
from multigpu.compute import models
from multigpu.evidence import guide
from multigpu.hardware import catalog
from multigpu.market import recommend

#: Fill colour and hatch of each guide class: lightness differs, so the classes read in grey-scale print.
CLASS_STYLE = {"PCIe": ("#FFFFFF", ""), "NVLink bridge": ("#E69F00", "///"), "NVSwitch node": ("#56B4E9", "..."),
               "multi-node / NVL72": ("#0072B2", "xxx"), "none feasible": ("#BBBBBB", "")}



def _short_gpu(gpu_id: str) -> str:
    """A GPU's name without vendor, brand and memory size: 'H100 SXM5', 'RTX 4090', 'A100 PCIe'."""
    words = catalog.gpu(gpu_id).name.replace("GeForce ", "").replace("NVIDIA ", "").split(" (")[0].split()
    return " ".join(w for w in words if not w.upper().endswith("GB")) or gpu_id



def plot_decision_matrix(ax: Any, table: pd.DataFrame) -> None:
    """The decision matrix: model size (rows) x workload and pricing type (columns); each cell's fill and
    hatch is the guide class of the pick, its text the GPU and the number of instances."""
    from matplotlib.patches import Patch, Rectangle

    columns = list(dict.fromkeys(zip(table["kind"], table["pricing"])))
    model_ids = list(dict.fromkeys(table.sort_values("params_B", kind="stable")["model"]))
    cells = table.set_index(["model", "kind", "pricing"])
    for j, (kind, pricing) in enumerate(columns):
        for i, model_id in enumerate(model_ids):
            row = cells.loc[(model_id, kind, pricing)]
            color, hatch = CLASS_STYLE[row["guide_class"]]
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=color, hatch=hatch, edgecolor="black", linewidth=0.6))
            if row["guide_class"] != "none feasible":
                label = f"{_short_gpu(row['gpu'])}\nx{int(row['instances'])}"
            else:
                label = "none"
            dark = row["guide_class"] == "multi-node / NVL72"
            ax.text(j + 0.5, i + 0.5, label, ha="center", va="center", fontsize=7,
                    color="white" if dark else "black",
                    bbox=None if dark else {"facecolor": "white", "edgecolor": "none", "pad": 0.8, "alpha": 0.85})
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(model_ids), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))],
                  [f"{'train' if k == 'train' else 'serve'}\n{p}" for k, p in columns], fontsize=8)
    ax.set_yticks([i + 0.5 for i in range(len(model_ids))], [models.model(m).name.split(" (")[0] for m in model_ids],
                  fontsize=8)
    ax.grid(False)
    ax.tick_params(length=0)
    kinds = [k for k, _ in columns]
    if "train" in kinds and "serve" in kinds:
        ax.axvline(kinds.index("serve"), color="black", linewidth=2.0)
    present = [c for c in (*guide.CLASSES, "none feasible") if c in set(table["guide_class"])]
    ax.legend(handles=[Patch(facecolor=CLASS_STYLE[c][0], hatch=CLASS_STYLE[c][1], edgecolor="black", label=c)
                       for c in present], loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8,
              title="cheapest class", title_fontsize=8)



def plot_class_costs(ax: Any, frame: pd.DataFrame) -> None:
    """Against model size (log scale): each guide class's cheapest option over the cheapest option of any
    class (1 = the cheapest class), one line per class, from :func:`class_costs`; the smaller classes are
    drawn on top, so that a tie at 1 shows them."""
    floor = frame.groupby("model")["cost"].transform("min")
    frame = frame.assign(relative=frame["cost"] / floor)
    for i, cls in enumerate(guide.CLASSES):
        part = frame[frame["guide_class"] == cls].sort_values("params_B", kind="stable")
        if part.empty:
            continue
        ax.plot(part["params_B"], part["relative"], label=cls, color=plotting.COLORS[i * 2 % len(plotting.COLORS)],
                linestyle=plotting.LINESTYLES[i], marker=plotting.MARKERS[i], zorder=5 - i)
    ax.axhline(1.0, color="#444444", linewidth=0.8)
    ax.set_xscale("log")
    ax.legend(fontsize=8)



def plot_pareto(ax: Any, frame: pd.DataFrame, title: str, deadline_h: float | None = None,
                legend: bool = True) -> None:
    """Every option that runs, cost per job against hours (log-log), one marker per guide class; the Pareto
    front (:func:`multigpu.market.recommend.pareto`) as a step line; the deadline as a dashed line."""
    ran = frame.dropna(subset=["cost_usd", "time_h"])
    for i, cls in enumerate(guide.CLASSES):
        part = ran[ran["guide_class"] == cls]
        if part.empty:
            continue
        color = plotting.COLORS[i * 2 % len(plotting.COLORS)]
        ax.scatter(part["time_h"], part["cost_usd"], s=14, marker=plotting.MARKERS[i], facecolors="none",
                   edgecolors=color, linewidths=0.9, label=cls)
    front = recommend.pareto(ran).sort_values("time_h", kind="stable")
    ax.step(front["time_h"], front["cost_usd"], where="post", color="black", linewidth=1.2, label="Pareto front")
    if deadline_h is not None:
        ax.axvline(deadline_h, color="#444444", linestyle="--", linewidth=1.0, label="deadline")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    if legend:
        ax.legend(fontsize=7.5, loc="center left", bbox_to_anchor=(1.02, 0.5))
