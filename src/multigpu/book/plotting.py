"""One house style for every figure of the book.

Every figure has a title, axis labels with units, and a source line; lines
differ in colour *and* in line style and marker, so they read in grey-scale
print. SVG output is byte-stable between runs (fixed hash salt, no date), and
a CJK font is registered when the system has one, so Chinese labels draw
without missing-glyph warnings.

Use::

    fig, ax = plotting.figure("All-reduce time", "message size (bytes)",
                              "time (µs)", source="model: multigpu.comm.collectives")
    ax.plot(...)
    plotting.show(fig)          # in a notebook: a deterministic inline SVG
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from itertools import cycle
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

#: Okabe-Ito colours, ordered so that neighbours differ in lightness (grey-scale print).
COLORS = ["#000000", "#E69F00", "#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 3))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
HATCHES = ["", "///", "...", "xxx", "\\\\\\", "ooo", "+++", "---"]

#: Where Debian's CJK font packages put their files (the Makefile installs fonts-wqy-microhei).
CJK_FONT_FILES = [
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
]
SVG_SALT = "multigpu"


def cjk_font() -> str | None:
    """Register the first CJK font found on the system; return its family name (None if none)."""
    for path in CJK_FONT_FILES:
        if Path(path).exists():
            font_manager.fontManager.addfont(path)
            return font_manager.FontProperties(fname=path).get_name()
    return None


def apply_style() -> None:
    """Set the house style in matplotlib's rcParams (idempotent)."""
    families = ["DejaVu Sans"] + ([cjk_font()] if cjk_font() else [])
    plt.rcParams.update({
        "figure.figsize": (7.0, 4.2),
        "figure.dpi": 100,
        "font.family": families,  # a list, so that matplotlib falls back glyph by glyph
        "font.size": 10,
        "axes.titlesize": 12,
        "axes.grid": True,
        "grid.color": "#d0d0d0",
        "grid.linewidth": 0.6,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": cycler(color=COLORS) + cycler(linestyle=LINESTYLES) + cycler(marker=MARKERS),
        "lines.linewidth": 1.8,
        "lines.markersize": 5,
        "legend.frameon": False,
        "svg.fonttype": "path",
        "svg.hashsalt": SVG_SALT,
        "savefig.bbox": "tight",
    })


def figure(title: str, xlabel: str, ylabel: str, source: str, *,
           ncols: int = 1, nrows: int = 1, figsize: tuple[float, float] | None = None) -> tuple[Figure, object]:
    """A new figure in the house style, with title, axis labels and a source line.

    ``xlabel`` and ``ylabel`` should name the unit, e.g. ``"message size (bytes)"``.
    With more than one panel the axes come back as a flat array, row by row, sharing the labels.
    """
    for name, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel), ("source", source)):
        if not text or not text.strip():
            raise ValueError(f"a figure needs a {name}")
    apply_style()
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=True)
    if nrows > 1:
        axes = axes.ravel()
    fig.suptitle(title, fontsize=13)  # regular weight: the CJK fallback font has no bold
    for ax in (axes if ncols * nrows > 1 else [axes]):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    fig.text(0.01, -0.02, f"Source: {source}", fontsize=7.5, color="#444444", ha="left", va="top")
    return fig, axes


def hatches() -> Iterator[str]:
    """Bar hatches that tell bars apart in grey-scale print."""
    return cycle(HATCHES)


def to_svg(fig: Figure) -> str:
    """The figure as SVG text, byte-identical between runs (no date, fixed ids)."""
    apply_style()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def save(fig: Figure, path: str | Path) -> Path:
    """Write the figure as a deterministic SVG file and close it."""
    path = Path(path)
    path.write_text(to_svg(fig), encoding="utf-8")
    plt.close(fig)
    return path


def show(fig: Figure) -> None:
    """Display the figure inline (notebooks) as a deterministic SVG, then close it."""
    from IPython.display import SVG, display

    display(SVG(to_svg(fig)))
    plt.close(fig)
