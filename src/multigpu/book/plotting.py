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
    plotting.set_alt(fig, "All-reduce time against message size, 2 to 900 µs")
    plotting.show(fig)          # in a notebook: deterministic inline HTML around the SVG

For both editions from one execution, a function draws the figure with its words in the current language
(``lang._("...")``) and ``plotting.show_both(draw)`` shows one figure per language, each in its
``mg-lang-*`` div (:func:`multigpu.book.lang.editions_html`); every check below applies to each.

Readability is checked when a figure is shown: the book's text column is
:data:`COLUMN_PX` CSS pixels wide (1280 px window), a wider figure is shrunk
to fit, and :func:`show` refuses a figure whose smallest text would render
under :data:`MIN_TEXT_PX`. A phone gets its own drawing of every figure
(:func:`phone_layout`: :data:`PHONE_FIGWIDTH_IN` wide, panels stacked, titles
wrapped), which fits its column with the same floor; the site shows it below
:data:`PHONE_BREAKPOINT_PX` (``book/_ext/editions.py``). Text on a filled area is
black or white, whichever meets WCAG AA contrast (:func:`text_color_on`).
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import io
import math
import re
import textwrap
import warnings
from collections.abc import Callable, Iterator, Mapping
from itertools import cycle
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib import colors as mcolors  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib import transforms  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.axis import Axis  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from multigpu.book import lang  # noqa: E402
from multigpu.book.lang import _, text_width  # noqa: E402
from multigpu.common.numtext import ESTIMATE, number_text  # noqa: E402

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
#: Decimals kept in SVG coordinates (pt): 0.01 pt is far under a screen pixel at any zoom a reader uses.
SVG_DECIMALS = 2
_SVG_NUMBER = re.compile(r"-?\d+\.\d+")

#: Width of the book's text column (CSS px) in a 1280 px window (Jupyter Book 1.x, sphinx-book-theme).
COLUMN_PX = 688
#: The smallest text a figure may show, at its rendered size (CSS px): desktop column and phone alike.
MIN_TEXT_PX = 9.0
#: CSS pixels per point (1 pt = 1/72 in, 1 px = 1/96 in).
PX_PER_PT = 96 / 72
#: Default figure size (inches): 6.8 in plus the 0.1 in padding each side fits the column unshrunk.
FIGSIZE = (6.8, 4.2)
#: Font size (pt) of the smallest text the house style uses: tick labels of dense axes, annotations, legends.
SMALL_PT = 8.0
#: Font size (pt) of the source line under each figure.
SOURCE_PT = 8.0
#: Width (inches) of a figure's phone drawing: with the saved padding it is 384 CSS px, so in the 358 px column of a
#: 390 px phone its 8 pt text shows at 9.9 px, and at 9.1 px in the 328 px column of a 360 px one.
PHONE_FIGWIDTH_IN = 3.8
#: The text column (CSS px) of a 390 px wide phone (the article's 16 px padding each side).
PHONE_COLUMN_PX = 358
#: Windows narrower than this (CSS px) show the phone drawing; from here on the column (688 px) holds every
#: desktop drawing with its text above the floor.
PHONE_BREAKPOINT_PX = 720
#: Height (inches) of one panel of a phone drawing, at least and at most, and what its title, axis labels and
#: source line add.
PHONE_PANEL_IN = (2.3, 3.0)
PHONE_FRAME_IN = 1.3
#: A desktop row at least this high (inches) holds many categories (a dot per sweep): its phone panel keeps it.
PHONE_TALL_IN = 5.0
#: The most panels a phone drawing stacks in one column; a grid of more keeps two columns.
PHONE_STACKED_PANELS = 4
#: Font size (pt) of a figure's title (:func:`figure`).
TITLE_PT = 13
#: WCAG AA contrast for normal text (ratio).
MIN_CONTRAST = 4.5


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
        "figure.figsize": FIGSIZE,
        "figure.dpi": 100,
        "font.family": families,  # a list, so that matplotlib falls back glyph by glyph
        "font.size": 10,
        "axes.titlesize": 11,
        "legend.fontsize": 9,
        "legend.title_fontsize": 9,
        "axes.grid": True,
        "grid.color": "#d0d0d0",
        "grid.linewidth": 0.6,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": cycler(color=COLORS) + cycler(linestyle=LINESTYLES) + cycler(marker=MARKERS),
        "lines.linewidth": 1.8,
        "lines.markersize": 5,
        "legend.frameon": False,
        "svg.fonttype": "none",  # text as <text> (searchable, and a fraction of the bytes of glyph outlines)
        "svg.hashsalt": SVG_SALT,
        "savefig.bbox": "tight",
    })


_PHONE: list[bool] = []


@contextlib.contextmanager
def phone_layout() -> Iterator[None]:
    """Inside the block, :func:`figure` draws the phone variant: :data:`PHONE_FIGWIDTH_IN` wide, its panels in
    one column (two for a grid of more than :data:`PHONE_STACKED_PANELS`; the axes still come back as one flat
    array, in the same order), its title wrapped."""
    _PHONE.append(True)
    try:
        yield
    finally:
        _PHONE.pop()


def on_phone() -> bool:
    """Whether figures are being drawn for a phone (:func:`phone_layout`)."""
    return bool(_PHONE)


def phone_size(figsize: tuple[float, float], panels: int, rows: int) -> tuple[float, float]:
    """The phone drawing's size (inches) of a figure ``figsize`` wide and high on a desktop with ``panels``
    panels in ``rows`` rows: :data:`PHONE_FIGWIDTH_IN` wide, each panel three quarters as high as a desktop row,
    within :data:`PHONE_PANEL_IN` (a row of :data:`PHONE_TALL_IN` or more keeps its height), stacked, plus
    :data:`PHONE_FRAME_IN` for the title and the source line."""
    low, high = PHONE_PANEL_IN
    row = figsize[1] / rows
    panel = row if row >= PHONE_TALL_IN else min(high, max(low, 0.75 * row))
    return PHONE_FIGWIDTH_IN, round(panels * panel + PHONE_FRAME_IN, 2)


#: Gap (pt) between an axis's tick labels or label and a legend moved under it (:func:`phone_fit`).
LEGEND_GAP_PT = 4.0


def phone_fit(fig: Figure) -> Figure:
    """``fig``, drawn under :func:`phone_layout`, made to read in a phone's narrow panels: texts on the data kept
    out of the layout (a label that reaches past a narrow panel's edge would shrink it); panel titles and x
    labels wrapped to the room around the panel's centre, y labels to its height; long category labels on a y
    axis wrapped (:data:`PHONE_YLABEL_SHARE`); x tick labels that would run into each other turned upright;
    each panel's legend moved under the panel, below its x axis (the bottom row's under the figure), in one
    column unless its columns fit the figure's width (inside it would cover the data, beside it leave the panel
    no room), the figure made as much higher. Figure legends stay. The layout is
    then fixed (no layout engine), so the texts on the data count again for the saved extent. Returns ``fig``."""
    with warnings.catch_warnings():  # a layout before the labels wrap may not fit; the phone checks judge the last
        warnings.filterwarnings("ignore", message="constrained_layout not applied")
        return _phone_fit(fig)


def _phone_fit(fig: Figure) -> Figure:
    for ax in fig.axes:  # labels on the data (values by bars, notes) leave the panel's size to its axes
        for text in ax.texts:
            text.set_in_layout(False)
    renderer = _renderer(fig)
    changed = _upright_crowded_xtick_labels(fig, renderer)  # decided on one layout, before wrapped labels move it
    if _wrap_long_ytick_labels(fig, renderer):
        renderer = _renderer(fig)  # the panels' new widths
    if _wrap_centred(fig, lambda ax: [ax.xaxis.label]) or changed:
        renderer = _renderer(fig)  # the x axes' new heights, where the legends go under them
    fig = _legends_under(fig, renderer)
    _renderer(fig)  # laid out again, the legends out of the panels' way
    _wrap_centred(fig, lambda ax: [ax.title, ax._left_title, ax._right_title])
    for ax in fig.axes:  # a title's new lines take a little of the height: 0.9 of it
        if ax.yaxis.label.get_text():
            ax.yaxis.label.set_text(wrap_title(ax.yaxis.label.get_text(), 0.9 * ax.bbox.height / fig.dpi,
                                               ax.yaxis.label.get_fontsize()))
    _renderer(fig)  # the last layout, kept: the texts on the data count again for the saved extent
    fig.set_layout_engine("none")
    for ax in fig.axes:
        for text in ax.texts:
            text.set_in_layout(True)
    return fig


def _wrap_centred(fig: Figure, texts: Callable[[Axes], list[Text]]) -> bool:
    """Each panel's ``texts(ax)`` (its titles or x label, centred on it) wrapped to the room around its centre,
    within its grid column (the figure's last layout); whether any text changed."""
    changed = False
    for ax in fig.axes:
        spec = ax.get_subplotspec()
        columns = spec.get_gridspec().ncols if spec is not None else 1
        centre = (ax.bbox.x0 + ax.bbox.x1) / 2 / fig.dpi
        room = 0.9 * min(2 * min(centre, fig.get_figwidth() - centre), fig.get_figwidth() / columns)
        for text in texts(ax):
            wrapped = wrap_title(text.get_text(), room, text.get_fontsize()) if text.get_text() else ""
            if wrapped != text.get_text():
                text.set_text(wrapped)
                changed = True
    return changed


def _legends_under(fig: Figure, renderer) -> Figure:
    """Each panel's legend moved under the panel, below its x axis (the bottom row's under the figure), in one
    column unless its columns fit the figure's width, its labels wrapped to it; the figure made as much higher
    (positions from ``renderer``, the figure's last layout). Returns ``fig``."""
    added_in, footer_in = 0.0, 0.0
    shown = [ax for ax in fig.axes if ax.get_visible()]
    lowest = min((ax.bbox.y0 for ax in shown), default=0.0)
    for ax in fig.axes:
        old = ax.get_legend()
        if old is None or not old.get_visible():
            continue
        size = old.texts[0].get_fontsize() if old.texts else SMALL_PT
        kw = {"handles": old.legend_handles, "frameon": False,
              "labels": [wrap_title(t.get_text(), 0.8 * fig.get_figwidth(), size) for t in old.texts],
              "fontsize": size,
              "title": old.get_title().get_text() or None, "title_fontsize": old.get_title().get_fontsize()}
        old.remove()
        spec = ax.get_subplotspec()
        if ax.bbox.y0 <= lowest + 1 or (spec is not None and spec.get_gridspec().ncols > 1):
            footer_in += _legend_in_footer(fig, kw, old._ncols, footer_in, renderer)  # the bottom row's, or a grid's
            continue
        axis = ax.xaxis.get_tightbbox(renderer)
        under_px = ax.bbox.y0 - axis.y0 if axis is not None else 0.0  # tick labels and axis label
        below_pt = under_px * 72 / fig.dpi + LEGEND_GAP_PT
        under = transforms.offset_copy(ax.transAxes, fig, y=-below_pt, units="points")
        new = _widest_fitting(fig, lambda n: ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0),
                                                       bbox_transform=under, ncols=n, **kw), old._ncols, renderer)
        added_in += (new.get_window_extent(renderer).height / fig.dpi
                     + (below_pt + LEGEND_GAP_PT) / 72 - under_px / fig.dpi)
    height = fig.get_figheight() + added_in + footer_in  # the panels keep their height; the legends add theirs
    fig.set_figheight(height)
    if footer_in:
        fig.get_layout_engine().set(rect=(0, footer_in / height, 1, 1 - footer_in / height))
        if fig._supxlabel is not None:  # the grid's shared x label above the legends, not under them
            fig._supxlabel.set(y=footer_in / height, va="bottom")
            fig._supxlabel._autopos = False
    return fig


def _legend_in_footer(fig: Figure, kw: dict, ncols: int, above_in: float, renderer) -> float:
    """A legend (``ax.legend`` keywords ``kw``) at the foot of the figure, above ``above_in`` inches of legends
    already there, out of the layout (the caller keeps the layout above it); its height (inches) with a gap."""
    lift = transforms.offset_copy(fig.transFigure, fig, y=above_in * 72, units="points")
    legend = _widest_fitting(fig, lambda n: fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.0),
                                                       bbox_transform=lift, ncols=n, **kw), ncols, renderer)
    legend.set_in_layout(False)
    return legend.get_window_extent(renderer).height / fig.dpi + LEGEND_GAP_PT / 72


def _widest_fitting(fig: Figure, make: Callable[[int], Legend], ncols: int, renderer) -> Legend:
    """The legend ``make(ncols)``, or ``make(1)`` if that is wider than the figure (a legend's size needs no
    layout: ``renderer`` measures its text)."""
    legend = make(ncols)
    if ncols > 1 and legend.get_window_extent(renderer).width > fig.bbox.width:
        legend.remove()
        legend = make(1)
    return legend


#: The widest share of a phone drawing's width that a y axis's category labels may take before they wrap.
PHONE_YLABEL_SHARE = 0.38


def _wrap_long_ytick_labels(fig: Figure, renderer) -> bool:
    """Wrap each panel's y tick labels (categories: the bars of a horizontal bar chart) that take more than
    :data:`PHONE_YLABEL_SHARE` of the figure's width, at spaces, to that width, where each row has the height
    for the lines (extents from ``renderer``, the figure's last layout); whether any panel's were wrapped."""
    changed = False
    for ax in fig.axes:
        labels = [t for t in ax.get_yticklabels() if t.get_text() and t.get_visible()]
        widest = max((t.get_window_extent(renderer).width for t in labels), default=0.0)
        if widest <= PHONE_YLABEL_SHARE * fig.bbox.width:
            continue
        size = labels[0].get_fontsize()
        wrapped = [wrap_title(t.get_text(), PHONE_YLABEL_SHARE * fig.get_figwidth(), size)
                   for t in ax.get_yticklabels()]
        lines = max(w.count("\n") + 1 for w in wrapped)
        if lines * 1.2 * size * fig.dpi / 72 > ax.bbox.height / len(labels):  # no room for more lines a row
            continue
        if wrapped != [t.get_text() for t in ax.get_yticklabels()]:
            ax.set_yticks(ax.get_yticks(), wrapped)
            changed = True
    return changed


def _upright_crowded_xtick_labels(fig: Figure, renderer) -> bool:
    """Turn upright each panel's x tick labels when two neighbours would run into each other (extents from
    ``renderer``, the figure's last layout); whether any panel's were turned."""
    changed = False
    for ax in fig.axes:
        boxes = sorted((t.get_window_extent(renderer) for t in ax.get_xticklabels()
                        if t.get_text() and t.get_visible()), key=lambda b: b.x0)
        # judged at the width the panel gets once a legend beside it has moved under it: to the figure's edge
        wider = max(1.0, (fig.bbox.x1 - ax.bbox.x0) / ax.bbox.width) if ax.bbox.width > 0 else 1.0
        pairs = zip(boxes, boxes[1:])
        if any((b.x0 + b.x1 - a.x0 - a.x1) / 2 * wider < (a.width + b.width) / 2 + 1 for a, b in pairs):
            ax.tick_params(axis="x", labelrotation=90)
            changed = True
    return changed


def wrap_title(title: str, width_in: float, fontsize_pt: float = TITLE_PT) -> str:
    """``title`` broken at spaces (or after hyphens) into lines that fit ``width_in`` inches at ``fontsize_pt``
    (:func:`wrap_source`'s measure); a line break the title has is kept."""
    chars = max(16, int(width_in * 72 / (0.55 * fontsize_pt)))
    if "\n" in title:
        return "\n".join(wrap_title(line, width_in, fontsize_pt) for line in title.split("\n"))
    if text_width(title) <= chars:
        return title
    if text_width(title) == len(title):  # an id too long for a line breaks after a hyphen
        return "\n".join(textwrap.wrap(title, chars, break_long_words=False))
    return "\n".join(_wrap_units(title, chars))


#: Where text with CJK characters may break: between spaces, before and after each CJK character (closing
#: punctuation, up to two marks, stays with what it follows), after a hyphen.
_UNITS = re.compile(r"\s+|[\u2e80-\u9fff\uff00-\uffef\u3000-\u303f][，。、；：）》」％]{0,2}"
                    r"|[^\s\u2e80-\u9fff\uff00-\uffef\u3000-\u303f-]*-?[，。、；：）》」％]{0,2}")


def _wrap_units(text: str, chars: int) -> list[str]:
    """``text`` (with CJK characters) in lines of at most ``chars`` half-width characters, broken where
    :data:`_UNITS` allows (a unit wider than a line keeps a line of its own)."""
    lines = [""]
    for unit in (u for u in _UNITS.findall(text) if u):
        if text_width(lines[-1]) + text_width(unit) <= chars or not lines[-1].strip():
            lines[-1] += unit
        elif not unit.isspace():
            lines.append(unit)
    return [line.strip() for line in lines if line.strip()]


def figure(title: str, xlabel: str, ylabel: str, source: str, *, ncols: int = 1, nrows: int = 1,
           figsize: tuple[float, float] | None = None,
           phone_figsize: tuple[float, float] | None = None) -> tuple[Figure, object]:
    """A new figure in the house style, with title, axis labels and a source line.

    ``xlabel`` and ``ylabel`` should name the unit, e.g. ``"message size (bytes)"``; ``figsize`` is in inches
    (default :data:`FIGSIZE`, which the column shows unshrunk), ``phone_figsize`` the phone drawing's where
    :func:`phone_size` does not suit (a chart of many bars). The figure uses matplotlib's constrained
    layout, so that titles, axis labels and legends do not overlap. With more than one panel the axes come
    back as a flat array, row by row, sharing the labels; under :func:`phone_layout` they are one column. The
    source line, "Source: ..." in the current language
    (:mod:`multigpu.book.lang`), is wrapped to the figure's width; the other texts come translated.
    """
    for name, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel), ("source", source)):
        if not text or not text.strip():
            raise ValueError(f"a figure needs a {name}")
    apply_style()
    if on_phone():
        panels = nrows * ncols
        figsize = phone_figsize or phone_size(figsize or FIGSIZE, panels, nrows)
        ncols = 1 if panels <= PHONE_STACKED_PANELS else min(ncols, 2)
        nrows = -(-panels // ncols)
        if ncols > 1:  # a grid of many panels keeps two columns: one would be many screens high
            figsize = (figsize[0], round(figsize[1] - (panels - nrows) * (figsize[1] - PHONE_FRAME_IN) / panels, 2))
        title = wrap_title(title, figsize[0])
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=True, layout="constrained")
    fig.mg_phone = on_phone()  # a phone drawing (show_both keeps only such)
    if nrows > 1:
        axes = axes.ravel()
    fig.suptitle(title, fontsize=TITLE_PT)  # regular weight: the CJK fallback font has no bold
    if on_phone() and ncols > 1:  # a grid on a phone: the labels once, not under every small panel
        fig.supxlabel(xlabel, fontsize=plt.rcParams["axes.labelsize"])
        fig.supylabel(ylabel, fontsize=plt.rcParams["axes.labelsize"])
    else:
        for ax in (axes if ncols * nrows > 1 else [axes]):
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
    fig.text(0.01, -0.01, wrap_source(_("Source: {source}", source=source), fig.get_figwidth()), fontsize=SOURCE_PT,
             color="#444444", ha="left", va="top")
    return fig, axes


def _wrap_wide(clause: str, chars: int) -> list[str]:
    """``clause`` (with CJK text) broken at spaces into lines of at most ``chars`` half-width characters."""
    lines: list[str] = []
    for word in clause.split():
        if lines and text_width(lines[-1]) + 1 + text_width(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def wrap_source(text: str, width_in: float, fontsize_pt: float = SOURCE_PT) -> str:
    """``text`` broken into lines that fit ``width_in`` inches at ``fontsize_pt`` (about 0.55 em a character,
    a CJK character twice that), at "; " or "；" between clauses where it can (so that a file name and its
    hash stay on one line)."""
    chars = max(20, int(width_in * 72 / (0.55 * fontsize_pt)))
    lines: list[str] = []
    parts = re.split(r"(; |；)", text)
    for sep, clause in zip(["", *parts[1::2]], parts[0::2]):
        if lines and text_width(lines[-1]) + text_width(sep) + text_width(clause) <= chars:
            lines[-1] += sep + clause
            continue
        if lines:
            lines[-1] += sep.rstrip()
        if text_width(clause) == len(clause):
            lines += textwrap.wrap(clause, chars, break_long_words=False, break_on_hyphens=False)
        else:  # a phone's narrow lines also break between CJK characters
            lines += _wrap_units(clause, chars) if on_phone() else _wrap_wide(clause, chars)
    return "\n".join(lines)


def set_alt(fig: Figure, text: str) -> Figure:
    """Attach the figure's alt text (what it shows, for screen readers); :func:`show` uses it. Returns ``fig``."""
    if not text or not text.strip():
        raise ValueError("alt text must say what the figure shows")
    fig.mg_alt = " ".join(text.split())
    return fig


def get_alt(fig: Figure) -> str | None:
    """The alt text :func:`set_alt` attached to ``fig`` (None if none)."""
    return getattr(fig, "mg_alt", None)


def span(values, unit: str = "", fmt: str = ESTIMATE) -> str:
    """The range of finite ``values`` as alt-text words in the current language, e.g. ``"3 to 180 %"``,
    ``"70,800 to 178,000 µs"`` (one value: ``"3 %"``), each number formatted by ``fmt`` (default: a whole number
    as it is, any other to three significant figures, without exponent or trailing zeros; else as
    :func:`multigpu.common.numtext.number_text` formats it); ``unit`` comes translated."""
    finite = sorted(float(v) for v in values if v is not None and math.isfinite(float(v)))
    if not finite:
        return _("no finite values")
    lo, hi = _alt_number(finite[0], fmt), _alt_number(finite[-1], fmt)
    words = lo if lo == hi else _("{low} to {high}", low=lo, high=hi)
    return f"{words} {unit}".strip()


def _alt_number(value: float, fmt: str) -> str:
    """One number of :func:`span`: a count (a whole number) exactly, with separators, under the default ``fmt``."""
    if fmt != ESTIMATE:
        return number_text(value, fmt)
    if value.is_integer():
        return f"{int(value):,}"
    text = number_text(value, fmt)
    return text.rstrip("0").rstrip(".") if "." in text else text


def title_of(fig: Figure) -> str:
    """The figure's title (its suptitle), or "untitled figure"."""
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return title or "untitled figure"


# ------------------------------------------------------------------ readability: sizes, contrast, overlaps


def _renderer(fig: Figure, renderer=None):
    """``renderer`` if given, else lay the figure out and draw it once without rasterizing (extents only) and
    return the canvas's renderer (extents in device pixels). Pass one renderer to several checks to draw the
    figure only once."""
    if renderer is not None:
        return renderer
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


def drawn_texts(fig: Figure) -> list[Text]:
    """Every Text the figure draws with visible, non-empty text: titles, labels, the tick labels in view,
    legend entries, annotations and the source line; artists under an invisible parent are left out."""
    found: list[Text] = []

    def walk(artist: Artist) -> None:
        if not artist.get_visible():
            return
        if isinstance(artist, Axis):
            children = [artist.label, artist.offsetText]
            for tick in artist._update_ticks():
                children += [tick.label1, tick.label2]
        else:
            children = artist.get_children()
        if isinstance(artist, Text) and artist.get_text().strip():
            found.append(artist)
        for child in children:
            walk(child)

    walk(fig)
    return found


def natural_width_px(fig: Figure, renderer=None) -> float:
    """The figure's width as saved (tight bounding box plus padding), in CSS px at 100 % zoom."""
    renderer = _renderer(fig, renderer)
    pad = float(plt.rcParams["savefig.pad_inches"])
    return (fig.get_tightbbox(renderer).width + 2 * pad) * 96


def rendered_scale(fig: Figure, column_px: float = COLUMN_PX, renderer=None) -> float:
    """How much the page shrinks the figure in a column ``column_px`` wide: min(1, column / natural width)."""
    return min(1.0, column_px / natural_width_px(fig, renderer))


def min_text_pt(fig: Figure) -> float:
    """The smallest font size (pt) among the figure's drawn texts (:func:`drawn_texts`)."""
    sizes = [t.get_fontsize() for t in drawn_texts(fig)]
    if not sizes:
        raise ValueError(f"figure {title_of(fig)!r} draws no text")
    return min(sizes)


def min_text_px(fig: Figure, column_px: float = COLUMN_PX, renderer=None) -> float:
    """The figure's smallest text at its rendered size in the book's column (CSS px)."""
    return min_text_pt(fig) * PX_PER_PT * rendered_scale(fig, column_px, renderer)


def phone_min_width_px(fig: Figure, renderer=None) -> int:
    """The narrowest width (CSS px) at which the smallest text still renders at :data:`MIN_TEXT_PX`."""
    return math.ceil(MIN_TEXT_PX * natural_width_px(fig, renderer) / (min_text_pt(fig) * PX_PER_PT))


def tint(color, share: float) -> str:
    """``color`` (a matplotlib colour) mixed with white: ``share`` of the colour (0 to 1), as "#rrggbb"."""
    rgb = [share * c + (1 - share) for c in mcolors.to_rgb(color)]
    return mcolors.to_hex(rgb)


def _luminance(color) -> float:
    """WCAG relative luminance (0 black to 1 white) of a matplotlib colour (alpha ignored)."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in mcolors.to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(fg, bg) -> float:
    """WCAG contrast ratio (1 to 21) between two matplotlib colours; AA wants 4.5 for normal text."""
    light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_color_on(fill) -> str:
    """Black or white, whichever contrasts more with ``fill`` (a matplotlib colour): "#000000" or "#ffffff"."""
    return "#000000" if contrast_ratio("#000000", fill) >= contrast_ratio("#ffffff", fill) else "#ffffff"


def _filled(patch: Patch) -> bool:
    return patch.get_visible() and patch.get_fill() and mcolors.to_rgba(patch.get_facecolor())[3] > 0


def _inside(inner, outer) -> bool:
    return (outer.x0 <= inner.x0 + 0.5 and inner.x1 <= outer.x1 + 0.5
            and outer.y0 <= inner.y0 + 0.5 and inner.y1 <= outer.y1 + 0.5)


def _background(text: Text, patches: list[tuple[tuple, Patch]], renderer) -> Patch | None:
    """The topmost filled patch that holds ``text``'s whole extent (its own box first), or None."""
    own = text.get_bbox_patch()
    if own is not None and _filled(own):
        return own
    box = text.get_window_extent(renderer)
    holding = [(rank, p) for rank, p in patches if _inside(box, p.get_window_extent(renderer))]
    return max(holding, key=lambda item: item[0])[1] if holding else None


def _ranked_patches(fig: Figure) -> list[tuple[tuple, Patch]]:
    """The figure's filled patches with their drawing rank: figure, then axes backgrounds, then by z-order
    (legend frames at their legend's z-order); text boxes are left out (they belong to their text)."""
    boxes = {id(t.get_bbox_patch()) for t in fig.findobj(Text) if t.get_bbox_patch() is not None}
    frames = {id(leg.legendPatch): leg.get_zorder() for leg in fig.findobj(Legend)}
    axes_patches = {id(ax.patch) for ax in fig.axes}
    ranked = []
    for order, patch in enumerate(p for p in fig.findobj(Patch) if _filled(p) and id(p) not in boxes):
        level = 0 if patch is fig.patch else 1 if id(patch) in axes_patches else 2
        ranked.append(((level, frames.get(id(patch), patch.get_zorder()), order), patch))
    return ranked


def contrast_problems(fig: Figure, minimum: float = MIN_CONTRAST, renderer=None) -> list[str]:
    """Texts drawn on a filled area (bar, cell, box) whose contrast with it is under ``minimum`` (ratio), or
    that sit on a hatched fill: one message each (empty when every text reads)."""
    renderer = _renderer(fig, renderer)
    patches = _ranked_patches(fig)
    problems = []
    for text in drawn_texts(fig):
        fill = _background(text, patches, renderer)
        if fill is None:
            continue
        ratio = contrast_ratio(text.get_color(), fill.get_facecolor())
        if ratio < minimum:
            problems.append(f"{text.get_text()!r}: contrast {ratio:.2f} on {mcolors.to_hex(fill.get_facecolor())}")
        if fill.get_hatch():
            problems.append(f"{text.get_text()!r}: drawn on hatching {fill.get_hatch()!r}")
    return problems


def label_title_overlaps(fig: Figure, renderer=None) -> list[str]:
    """Axis labels and legends whose extent overlaps a title's (panel titles and the figure's), and titles that
    overlap each other (two panels' titles side by side): one message each."""
    renderer = _renderer(fig, renderer)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    labels = [(repr(a.label.get_text()), a.label) for ax in axes for a in (ax.xaxis, ax.yaxis)
              if a.label.get_visible() and a.label.get_text()]
    labels += [("legend", leg) for leg in fig.findobj(Legend) if leg.get_visible()]
    titles = [t for ax in axes for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
    titles += [fig._suptitle] if fig._suptitle is not None else []
    found = [f"{name} overlaps title {title.get_text()!r}" for name, label in labels for title in titles
             if label.get_window_extent(renderer).overlaps(title.get_window_extent(renderer))]
    return found + [f"title {a.get_text()!r} overlaps title {b.get_text()!r}"
                    for i, a in enumerate(titles) for b in titles[i + 1:]
                    if a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer))]


def points(ax, x, y, *, size_pt2: float = 14, **kw) -> None:
    """Markers alone at (``x``, ``y``), as ``ax.scatter(x, y, s=size_pt2)`` draws them (area in pt²), but as a
    line without a line: the SVG then holds one marker and a bare reference per point, a third of a scatter's
    bytes where a panel shows hundreds of points."""
    ax.plot(x, y, linestyle="none", marker=kw.pop("marker", "o"), markersize=math.sqrt(size_pt2),
            markeredgewidth=plt.rcParams["lines.linewidth"], **kw)


#: How much of its line's colour a prediction band keeps (:func:`band`): light enough that bands may overlap.
BAND_ALPHA = 0.14


def band(ax, x, low, high, color) -> None:
    """A model line's prediction interval: the region between ``low`` and ``high`` over ``x``, in a light wash of
    the line's ``color``, behind every line and marker (:func:`legend_with_band` names it)."""
    ax.fill_between(x, low, high, color=color, alpha=BAND_ALPHA, linewidth=0, zorder=0)


def legend_with_band(ax, label: str | None = None, **kw) -> Legend:
    """``ax.legend(**kw)`` with one last entry, a grey wash named ``label`` (default: the 90 % prediction
    interval that each line's band, :func:`band`, shows)."""
    handles, labels = ax.get_legend_handles_labels()
    swatch = Patch(facecolor="#000000", alpha=BAND_ALPHA, linewidth=0)
    return ax.legend([*handles, swatch], [*labels, label or _("90 % prediction interval of each line")], **kw)


def hatches() -> Iterator[str]:
    """Bar hatches that tell bars apart in grey-scale print."""
    return cycle(HATCHES)


def to_svg(fig: Figure) -> str:
    """The figure as SVG text, byte-identical between runs (no date, fixed ids), made compact
    (:func:`compact_svg`)."""
    apply_style()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return compact_svg(buffer.getvalue())


def compact_svg(svg: str) -> str:
    """Matplotlib's SVG with the bytes a reader never sees taken out: comments; coordinates (``d``, ``x``,
    ``y``, ``width``, ``height``, translations and rotations) to :data:`SVG_DECIMALS` decimals (pt); only ids something refers to, renamed
    short (``m0``, ``m1``, ...); SVG 2 ``href``; indentation; styles repeated on every marker
    (:func:`_uses_without_their_style`) and on every text (:func:`_one_font_family`)."""
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.S)
    svg = re.sub(r'(\s(?:d|x|y|width|height)=")([^"]*)"',
                 lambda m: m.group(1) + _SVG_NUMBER.sub(_svg_round, m.group(2)) + '"', svg)
    svg = re.sub(r"((?:translate|rotate)\()([^)]*)\)",
                 lambda m: m.group(1) + _SVG_NUMBER.sub(_svg_round, m.group(2)) + ")", svg)
    names: dict[str, str] = {}
    for ref in re.findall(r'(?:href="#|url\(#)([^")]+)', svg):
        names.setdefault(ref, f"m{len(names):x}")
    svg = re.sub(r'\sid="([^"]+)"', lambda m: f' id="{names[m.group(1)]}"' if m.group(1) in names else "", svg)
    svg = re.sub(r'(xlink:href="#|href="#|url\(#)([^")]+)', lambda m: m.group(1) + names[m.group(2)], svg)
    svg = svg.replace('xlink:href="', 'href="').replace(' transform="rotate(0)"', "")
    svg = re.sub(r' transform="rotate\(-?0 [^")]*\)"', "", svg)  # a rotation by 0 degrees
    svg = _uses_without_their_style(svg)
    svg = _one_font_family(svg)
    return re.sub(r"\n[ \t]+", "\n", svg)


def _uses_without_their_style(svg: str) -> str:
    """Each ``<use>`` without the ``style`` its definition already has (matplotlib repeats it on every marker
    and tick; the clone takes its definition's own style either way)."""
    defined = dict(re.findall(r'<path id="([^"]+)"[^>]*?\sstyle="([^"]*)"', svg, flags=re.S))
    return re.sub(r'(<use href="#([^"]+)"[^>]*?) style="([^"]*)"',
                  lambda m: m.group(1) if defined.get(m.group(2)) == m.group(3) else m.group(0), svg)


def _one_font_family(svg: str) -> str:
    """The text's commonest font family once, on the ``<svg>`` element, with a generic ``sans-serif`` after the
    house fonts for a reader who has neither; other families keep theirs, with the same fallback."""
    families = re.findall(r"font-family: ([^;\"]*)", svg)
    if not families:
        return svg
    common = max(sorted(set(families)), key=families.count)
    svg = re.sub(rf";? ?font-family: {re.escape(common)}(?=[;\"])", "", svg)
    svg = re.sub(r"(font-family: [^;\"]*)", r"\1, sans-serif", svg)
    svg = re.sub(r'style="; ?', 'style="', svg).replace(' style=""', "")
    return re.sub(r"<svg ", f'<svg style="font-family: {html.escape(common, quote=True)}, sans-serif" ', svg,
                  count=1)


def _svg_round(match: re.Match[str]) -> str:
    """One coordinate at :data:`SVG_DECIMALS` decimals, without trailing zeros (``-0`` as ``0``)."""
    text = f"{float(match.group(0)):.{SVG_DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def save(fig: Figure, path: str | Path) -> Path:
    """Write the figure as a deterministic SVG file and close it."""
    path = Path(path)
    path.write_text(to_svg(fig), encoding="utf-8")
    plt.close(fig)
    return path


def readability(fig: Figure) -> dict[str, object]:
    """All the checks after one drawing: ``min_text_px`` (CSS px in the column), ``phone_min_width_px``,
    ``contrast_problems`` and ``overlaps`` (lists of messages)."""
    renderer = _renderer(fig)
    return {"min_text_px": min_text_px(fig, renderer=renderer),
            "phone_min_width_px": phone_min_width_px(fig, renderer),
            "contrast_problems": contrast_problems(fig, renderer=renderer),
            "overlaps": label_title_overlaps(fig, renderer)}


def _inline_svg(svg: str, alt: str) -> str:
    """Matplotlib's SVG made fit to inline in HTML: no XML prolog, doctype or metadata; ids prefixed with a
    hash of the figure (unique on a page); fluid width; ``role="img"``, ``aria-label`` and ``<title>``."""
    svg = re.sub(r"<\?xml[^>]*>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    prefix = "mg" + hashlib.sha256(svg.encode("utf-8")).hexdigest()[:6]
    svg = re.sub(r'\bid="', f'id="{prefix}', svg)
    svg = svg.replace('href="#', f'href="#{prefix}').replace("url(#", f"url(#{prefix}")
    label = html.escape(alt, quote=True)
    own = re.match(r'<svg style="([^"]*)" ', svg)  # the font family (compact_svg)
    svg = re.sub(r'^<svg style="[^"]*" ', "<svg ", svg) if own else svg
    style = "display:block;width:100%;height:auto" + (f";{own.group(1)}" if own else "")
    svg, count = re.subn(r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
                         rf'<svg\1 width="100%" role="img" aria-label="{label}" style="{style}"', svg, count=1)
    if not count:
        raise ValueError("unexpected SVG header from matplotlib")
    return re.sub(r"(<svg[^>]*>)", rf"\1\n<title>{html.escape(alt)}</title>", svg, count=1)


def to_html(fig: Figure, alt: str | None = None, *, phone: Figure | None = None) -> str:
    """The figure as byte-stable HTML: ``<figure class="mg-figure">`` with its smallest text at the SVG's natural
    size (CSS px, before the page scales it) in ``data-min-text-px``, a sideways-scrolling box, and the inline
    SVG at most its natural width (CSS px) and at least the width (:func:`phone_min_width_px`) that keeps
    text at :data:`MIN_TEXT_PX` on a phone; the text shown is ``data-min-text-px`` x drawn / natural width.

    ``phone``, the same figure drawn under :func:`phone_layout`, follows in an inert ``<template
    class="mg-figure-phone">`` with its own ``data-min-text-px``, natural width (``data-max-width``) and
    narrowest width (``data-min-width``): a notebook shows the desktop drawing, and the book's build makes the
    two a ``<picture>`` that a window under :data:`PHONE_BREAKPOINT_PX` shows as the phone drawing.

    ``alt`` (else the figure's :func:`set_alt` text) is required; a figure whose smallest text renders under
    :data:`MIN_TEXT_PX` in the :data:`COLUMN_PX` column, or a phone drawing whose text does in the
    :data:`PHONE_COLUMN_PX` column, is refused (ValueError naming its title).
    """
    alt = get_alt(fig) if alt is None else alt
    if not alt or not alt.strip():
        raise ValueError(f"figure {title_of(fig)!r} needs alt text: show(fig, alt=...) or set_alt(fig, ...)")
    alt = " ".join(alt.split())
    svg, unscaled, natural, narrowest = _checked_svg(fig, COLUMN_PX, alt)
    page = (f'<figure class="mg-figure" data-min-text-px="{unscaled:.1f}" style="margin:0">\n'
            f'<div class="mg-figure-scroll" style="overflow-x:auto">\n'
            f'<div class="mg-figure-inner" style="width:100%;max-width:{math.ceil(natural)}px;'
            f'min-width:{narrowest}px">\n'
            f"{svg}</div>\n</div>\n")
    if phone is not None:
        svg, unscaled, natural, narrowest = _checked_svg(phone, PHONE_COLUMN_PX, alt, what="phone drawing of ")
        page += (f'<template class="mg-figure-phone" data-min-text-px="{unscaled:.1f}" '
                 f'data-max-width="{math.ceil(natural)}" data-min-width="{narrowest}">\n{svg}</template>\n')
    return page + "</figure>\n"


def _checked_svg(fig: Figure, column_px: float, alt: str, what: str = "") -> tuple[str, float, float, int]:
    """``fig`` as inline SVG (:func:`_inline_svg`) with its smallest text at natural size (CSS px, rounded down),
    its natural width (CSS px) and the narrowest width (CSS px) that keeps its text at :data:`MIN_TEXT_PX`;
    ValueError if its text renders under that floor in a ``column_px`` column."""
    svg = to_svg(fig)  # drawn once: the check reads the saved width, as :func:`rendered_scale` would measure it
    natural = float(re.search(r'viewBox="0 0 ([0-9.]+)', svg).group(1)) * PX_PER_PT  # as the browser sizes it
    text_px = min_text_pt(fig) * PX_PER_PT
    smallest = text_px * min(1.0, column_px / natural)
    if smallest < MIN_TEXT_PX:
        raise ValueError(f"{what}figure {title_of(fig)!r}: smallest text renders at {smallest:.1f} px in the "
                         f"{column_px:g} px column, under the {MIN_TEXT_PX:g} px floor")
    unscaled = math.floor(text_px * 10) / 10  # rounded down: never claims more than it has
    return _inline_svg(svg, alt), unscaled, natural, math.ceil(MIN_TEXT_PX * natural / unscaled)


def editions_html(figs: Mapping[str, Figure], phones: Mapping[str, Figure] | None = None) -> str:
    """One figure per language (``{"en": fig, "zh": fig}``, each with its own alt text) as one output for both
    editions: each :func:`to_html` (every check applies to each), with its phone drawing from ``phones`` where
    given, in its ``mg-lang-*`` div."""
    phones = phones or {}
    return lang.editions_html({language: to_html(fig, phone=phones.get(language)) for language, fig in figs.items()})


def draw_editions(draw: Callable[[], Figure]) -> dict[str, Figure]:
    """``draw()`` once per language of the book (:func:`multigpu.book.lang.using`), by language (under
    :func:`phone_layout`, with :func:`phone_fit`); if one fails, the figures drawn so far are closed."""
    figs: dict[str, Figure] = {}
    try:
        for language in lang.LANGUAGES:
            with lang.using(language):
                figs[language] = phone_fit(draw()) if on_phone() else draw()
    except BaseException:
        for fig in figs.values():
            plt.close(fig)
        raise
    return figs


def show(fig: Figure | Mapping[str, Figure], *, alt: str | None = None,
         phones: Mapping[str, Figure] | None = None) -> None:
    """Display the figure inline (notebooks) as :func:`to_html` (checks alt text and the text floor), then close
    it. ``alt`` defaults to the text attached with :func:`set_alt`; with neither, ValueError. A mapping of
    language to figure (:func:`draw_editions`) shows as :func:`editions_html`, with ``phones``, their phone
    drawings, every figure closed (no ``alt``: each figure carries its own)."""
    from IPython.display import HTML, display

    figs = dict(fig) if isinstance(fig, Mapping) else None
    if figs is not None and alt is not None:
        raise ValueError("a figure per language carries its own alt text (set_alt): show(figs) takes no alt")
    try:
        page = editions_html(figs, phones) if figs is not None else to_html(fig, alt=alt)
    finally:
        for each in [*(figs.values() if figs is not None else [fig]), *(phones or {}).values()]:
            plt.close(each)
    display(HTML(page))


def show_both(draw: Callable[[], Figure]) -> None:
    """Draw the figure in each language (``draw()`` reads :func:`multigpu.book.lang.current`), and again for a
    phone (:func:`phone_layout`), and display them as one output for both editions (:func:`show`). A figure
    that does not draw itself for a phone (made without :func:`figure` and not marked ``mg_phone``, as
    :func:`multigpu.book.diagrams.phone_figure` marks its own) has no phone drawing: on a phone it keeps its
    desktop width and scrolls."""
    figs = draw_editions(draw)
    try:
        with phone_layout():
            phones = draw_editions(draw)
    except BaseException:
        for fig in figs.values():
            plt.close(fig)
        raise
    if not all(getattr(fig, "mg_phone", False) for fig in phones.values()):  # not drawn for a phone
        for fig in phones.values():
            plt.close(fig)
        phones = None
    show(figs, phones=phones)
