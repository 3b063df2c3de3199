"""One table style for the book: headers for people, no index, no NaN, never wider than the text column.

A notebook calls ``show_table(frame, key=["gpu"], csv_name="ch04-break-even")`` instead of showing the raw
frame. The table shows:

* headers for people: ``labels`` wins, otherwise :func:`header` translates the package's column names
  (``nvlink_usd_per_gpu_hour`` -> "NVLink (USD per GPU-hour)") by two small tables of rules,
  :data:`UNIT_SUFFIXES` and :data:`WORDS`;
* no index column; missing values (NaN, None, ``pd.NA``, NaT) as "—"; floats rounded to ``digits`` and
  integers with thousands separators; booleans as "yes"/"no";
* the ``key`` columns first and sticky (they stay in view while the table scrolls sideways), inside a
  ``div.mg-table-scroll`` that scrolls instead of overflowing the text column; text wraps, numbers are
  right-aligned with tabular figures;
* a model value with its prediction interval beside it (``<column>_lo``, ``<column>_hi``) as one cell,
  "x (lo–hi)" with an en dash, where the caller asks (``ranges=True``; a notebook's bare frames always, under a
  caption that says so);
* a link under the table that downloads the whole frame (every column, full precision, snake_case
  headers, no index) as CSV from a ``data:`` URI: nothing to host, nothing fetched from the network.

:func:`table_html` returns the HTML (pure and byte-identical between runs: nbval compares stored outputs);
:func:`show_table` only displays it. A named index of the frame becomes ordinary columns (shown and in the
CSV); an unnamed index is dropped.

Both editions from one execution: :func:`editions_html` (``show_table(..., editions=True)``, or
``use_for_dataframes(..., editions=True)``) makes the table once per language and puts each in its
``mg-lang-*`` div (:func:`multigpu.book.lang.editions_html`). In Chinese, the headers (``labels`` or
:func:`header`'s English) and the cells of ``label_columns`` (a fixed vocabulary such as verdicts, not data)
are translated by the package's catalog (:func:`multigpu.book.lang.label`: a header without a translation is
an error, so mark it ``N_("...")`` where the table is made); "yes"/"no" and the download link too. Numbers,
names and other cells stay as they are, and the CSV is the same (snake_case headers) in both.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import pandas as pd

from multigpu.book import lang
from multigpu.book.lang import N_, _, text_width
from multigpu.common.csvout import csv_cell
from multigpu.common.numtext import ESTIMATE_FIGURES, below_resolution, fixed, range_text, significant, year_text

#: The text shown for a missing value.
MISSING = "—"
#: Columns whose cells are translated: names (each cell a message, :func:`multigpu.book.lang.label`), or each
#: name with the function that translates its cells' text.
LabelColumns = Union[Sequence[str], Mapping[str, Callable[[str], object]]]

#: Unit suffixes: the last words of a snake_case column name -> the unit, shown in brackets after the rest
#: ("cost_usd" -> "Cost (USD)"). Matched case-sensitively; the longest matching suffix wins.
UNIT_SUFFIXES: dict[tuple[str, ...], str] = {
    # money
    ("usd",): "USD", ("USD",): "USD", ("cny",): "CNY", ("CNY",): "CNY",
    ("usd", "per", "gpu", "hour"): "USD per GPU-hour", ("USD", "per", "gpu", "hour"): "USD per GPU-hour",
    ("cny", "per", "gpu", "hour"): "CNY per GPU-hour", ("CNY", "per", "gpu", "hour"): "CNY per GPU-hour",
    ("usd", "per", "hour"): "USD per hour", ("usd", "per", "job"): "USD per job",
    ("usd", "per", "1M", "tokens"): "USD per 1M tokens", ("usd", "per", "unit"): "USD per unit",
    ("cny", "per", "1M", "tokens"): "CNY per 1M tokens", ("cny", "per", "job"): "CNY per job",
    # shares and ratios
    ("pct",): "%", ("pct", "of", "parent"): "% of parent", ("x",): "×",
    # bandwidth
    ("GBps",): "GB/s", ("GBps", "per", "dir"): "GB/s per direction", ("GBps", "bidir"): "GB/s, both directions",
    ("TBps",): "TB/s", ("TBps", "per", "dir"): "TB/s per direction", ("TBps", "bidir"): "TB/s, both directions",
    ("Gbps",): "Gb/s", ("GBps", "limit"): "GB/s, limit",
    # time
    ("ns",): "ns", ("us",): "µs", ("ms",): "ms", ("s",): "s", ("h",): "h", ("days",): "days",
    ("years",): "years", ("n",): "count",
    # sizes and counts
    ("B",): "billions", ("M",): "millions", ("KiB",): "KiB", ("MiB",): "MiB", ("GiB",): "GiB",
    ("KB",): "kB", ("MB",): "MB", ("GB",): "GB", ("TB",): "TB",
    ("TFLOPS",): "TFLOPS", ("PFLOPS",): "PFLOPS", ("EFLOPS",): "EFLOPS",
    # rates
    ("tokens", "per", "s"): "tokens/s", ("tokens", "per", "s", "per", "gpu"): "tokens/s per GPU",
    ("tokens", "per", "s", "per", "user"): "tokens/s per user", ("tps",): "tokens/s",
    ("requests", "per", "s"): "requests/s",
}

#: Words and phrases anywhere in a name -> text ("nvlink" -> "NVLink", "break_even" -> "break-even").
#: Matched case-sensitively; the longest match at each position wins; other words are kept as they are.
WORDS: dict[tuple[str, ...], str] = {
    # interconnects and hardware
    ("nvlink",): "NVLink", ("nvls",): "NVLS", ("nvswitch",): "NVSwitch", ("pcie",): "PCIe",
    ("gpu",): "GPU", ("gpus",): "GPUs", ("cpu",): "CPU", ("nic",): "NIC", ("nics",): "NICs", ("ib",): "IB",
    ("sm",): "SM", ("p2p",): "P2P", ("hbm",): "HBM", ("sxm",): "SXM", ("nccl",): "NCCL", ("rccl",): "RCCL",
    ("nvidia",): "NVIDIA", ("amd",): "AMD",
    # parallelism and serving
    ("tp",): "TP", ("pp",): "PP", ("dp",): "DP", ("ep",): "EP", ("cp",): "CP", ("sp",): "SP",
    ("tp1",): "TP 1", ("mfu",): "MFU", ("ttft",): "TTFT", ("tpot",): "TPOT", ("kv",): "KV", ("ll",): "LL",
    ("bf16",): "BF16", ("fp8",): "FP8", ("fp4",): "FP4", ("fp16",): "FP16",
    # money and identifiers
    ("usd",): "USD", ("cny",): "CNY", ("fx",): "FX", ("id",): "ID", ("ids",): "IDs",
    # units inside a name
    ("tps",): "tokens/s", ("tokens", "per", "s"): "tokens/s", ("requests", "per", "s"): "requests/s", ("pct",): "%", ("us",): "µs",
    ("GBps",): "GB/s", ("TBps",): "TB/s", ("Gbps",): "Gb/s", ("10pct",): "10 %",
    ("gpu", "hour"): "GPU-hour", ("gpu", "hours"): "GPU-hours", ("per", "dir"): "per direction",
    # words
    ("break", "even"): "break-even", ("allreduce",): "all-reduce", ("alltoall",): "all-to-all",
    ("allgather",): "all-gather", ("busbw",): "bus bandwidth", ("algbw",): "algorithm bandwidth",
    ("bw",): "bandwidth", ("mem",): "memory", ("abs",): "absolute", ("params",): "parameters",
    ("seqs",): "sequences", ("seq",): "sequence", ("n",): "number of", ("bidir",): "both directions",
    ("dir",): "direction", ("in", "network"): "in-network", ("vs",): "vs.", ("ref",): "reference",
    ("comm",): "communication", ("eff",): "efficiency", ("zero", "stage"): "ZeRO stage",
}

_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_SLUG = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_PLAIN_WORD = re.compile(r"[a-z][a-z/-]*[:,;]?(?:\s|$)")
_HTML_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")

_STYLE = (
    "<style>"
    ".mg-table-scroll{margin:0 0 .25em 0}"
    ".mg-table-scroll table.mg-table-grid{border-collapse:separate;border-spacing:0;table-layout:auto;"
    "width:auto;margin:0;font-size:.875em;line-height:1.35;color:#212529;background:#fff;border:0}"
    ".mg-table-scroll table.mg-table-grid th,.mg-table-scroll table.mg-table-grid td{"
    "padding:.3em .6em;border:0;border-bottom:1px solid #dee2e6;vertical-align:top;text-align:left;"
    "white-space:normal}"
    ".mg-table-scroll table.mg-table-grid thead th{border-bottom:2px solid #adb5bd;font-weight:600;"
    "vertical-align:bottom}"
    ".mg-table-scroll table.mg-table-grid td.mg-num{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    ".mg-table-scroll table.mg-table-grid th.mg-num{text-align:right}"
    ".mg-table-scroll table.mg-table-grid td{overflow-wrap:anywhere}"
    ".mg-table-scroll table.mg-table-grid.mg-tight th{overflow-wrap:anywhere}"
    ".mg-table-scroll table.mg-table-grid td.mg-key,.mg-table-scroll table.mg-table-grid th.mg-key{"
    "border-right:1px solid #dee2e6;position:sticky;left:0;background:#fff;z-index:1;box-sizing:border-box;"
    "overflow-wrap:anywhere}"
    ".mg-table-scroll table.mg-table-grid th.mg-key{z-index:2}"
    ".mg-table-caption{margin:.5em 0 .25em 0;font-style:italic}"
    ".mg-table-download{margin:0 0 1em 0;font-size:.875em}"
    "</style>"
)
#: Column names of the model's predictions in a notebook's tables (:func:`use_for_dataframes`): estimates.
ESTIMATE_PREFIXES = ("predicted",)
#: A table of at most this many columns fits the text column at 1280 px (more may scroll sideways).
FIT_COLUMNS = 8
#: The text column at 1280 px in the tables' em (688 px at 14 px), less a margin; the cells' side padding (em).
_FIT_EM = 44.0
_PADDING_EM = 1.2
#: The least width of a column of long text (em), so that it does not wrap one word a line.
_WIDE_EM = 8.0
#: About how wide a character of a bold header word is (em), and the narrowest a key column gets to fit a narrow
#: table (em).
_WORD_EM_PER_CHAR = 0.55
#: What a line never breaks inside: a run of characters other than spaces (Chinese text breaks anywhere, so a
#: wide character is a word of its own).
_WORD = re.compile(r"[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+|[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]")
_KEY_FLOOR_EM = 6.0
_WIDE_TEXT = 24  # a text column whose longest cell is longer than this gets a minimum width, not one word a line


# ---------------------------------------------------------------- headers


def _longest(tokens: Sequence[str], start: int, table: Mapping[tuple[str, ...], str]) -> tuple[int, str | None]:
    """The longest rule of ``table`` matching ``tokens`` at ``start``: (tokens used, text), or (1, None)."""
    for length in range(len(tokens) - start, 0, -1):
        text = table.get(tuple(tokens[start:start + length]))
        if text is not None:
            return length, text
    return 1, None


def _capitalized(text: str) -> str:
    """``text`` with its first letter upper case when its first word is a plain lower-case word (not a name
    such as "nvlink" already translated, nor an identifier with digits such as "h200-sxm")."""
    return text[0].upper() + text[1:] if _PLAIN_WORD.match(text) else text


def header(name: Any) -> str:
    """A header for people from a column name of the package's conventions.

    A snake_case name is split into words; a unit at its end (:data:`UNIT_SUFFIXES`) goes in brackets,
    the other words are translated by :data:`WORDS`: ``break_even_premium_pct`` -> "Break-even premium (%)",
    ``per_gpu_GBps_per_dir`` -> "Per GPU (GB/s per direction)", ``mesh_tokens_per_s_per_gpu`` -> "Mesh
    (tokens/s per GPU)". A name that is already text for people (it has spaces or other punctuation) is
    kept, with any ``_`` as a space.
    """
    text = str(name)
    if not _IDENTIFIER.fullmatch(text):
        return _capitalized(re.sub(r"\s*_+\s*", " ", text).strip() or text)
    tokens = [t for t in text.split("_") if t]
    unit = None
    for start in range(1, len(tokens)):  # the longest suffix first; a name that is only a unit is a word
        unit = UNIT_SUFFIXES.get(tuple(tokens[start:]))
        if unit is not None:
            tokens = tokens[:start]
            break
    words, i = [], 0
    while i < len(tokens):
        used, word = _longest(tokens, i, WORDS)
        words.append(word if word is not None else tokens[i])
        i += used
    label = _capitalized(" ".join(words))
    return f"{label} ({unit})" if unit else label


# ---------------------------------------------------------------- cells


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value)) if pd.api.types.is_scalar(value) else False
    except (TypeError, ValueError):
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not _is_bool(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def estimate_text(value: Any, figures: int = ESTIMATE_FIGURES) -> str:
    """A model estimate (a cost, hours) as a cell shows it, to ``figures`` significant figures
    (:func:`multigpu.common.numtext.significant`): 11,333.16 -> "11,300"; anything else as :func:`cell_text`
    shows it."""
    if not _is_number(value) or not math.isfinite(float(value)) or float(value) == 0:
        return cell_text(value)
    return significant(value, figures)


def _is_year(name: str) -> bool:
    """A column of calendar years (``year``, ``*_year``): shown without a thousands separator."""
    return name == "year" or name.endswith("_year")


def _whole(values: list[Any]) -> bool:
    """Whether a column's numbers are all whole (GPU counts in a float column, say), so none needs decimals."""
    present = [v for v in values if not _missing(v)]
    return bool(present) and all(_is_number(v) and not _is_bool(v) and math.isfinite(float(v))
                                 and float(v) == int(float(v)) for v in present)


def cell_text(value: Any, digits: int = 2) -> str:
    """One cell as text for people (not yet HTML-escaped): "—" for missing, "yes"/"no" (in the current
    language), separators."""
    if _missing(value):
        return MISSING
    if _is_bool(value):
        return _("yes") if value else _("no")
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return fixed(value, digits)
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return str(value)


# ---------------------------------------------------------------- checks and the frame


def _check_slug(csv_name: str) -> str:
    if not isinstance(csv_name, str) or len(csv_name) > 100 or not _SLUG.fullmatch(csv_name):
        raise ValueError(f"csv_name {csv_name!r} is not a safe file name: use letters, digits, '-' and '_' "
                         "(e.g. 'ch04-break-even'), without '.csv'")
    return csv_name


def _check_digits(digits: int | Mapping[str, int]) -> None:
    values = digits.values() if isinstance(digits, Mapping) else [digits]
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 15:
            raise ValueError(f"digits must be whole numbers from 0 to 15, not {value!r}")


def _full_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with a named index moved into columns (an unnamed one dropped) and unique column names."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"show_table needs a pandas DataFrame, not {type(df).__name__}")
    named = [n for n in df.index.names if n is not None]
    frame = df.reset_index(level=named) if named else df
    frame = frame.reset_index(drop=True)
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"column names must be unique: {names}")
    return frame


def _shown(frame: pd.DataFrame, key: Sequence[str], columns: Sequence[str] | None) -> list[Any]:
    """The shown columns: the key columns first, then ``columns`` (default: all) in their order."""
    by_name = {str(c): c for c in frame.columns}
    if isinstance(key, str) or (columns is not None and isinstance(columns, str)):
        raise TypeError("key and columns are lists of column names, not one string")
    unknown = [str(c) for c in [*key, *(columns or [])] if str(c) not in by_name]
    if unknown:
        raise ValueError(f"no such column(s) {unknown}; the frame has {list(by_name)}")
    keys = list(dict.fromkeys(str(c) for c in key))
    rest = [str(c) for c in (columns if columns is not None else by_name)]
    return [by_name[c] for c in dict.fromkeys([*keys, *rest])]


def csv_text(df: pd.DataFrame) -> str:
    """The whole frame as CSV: every column, full precision, the column names as they are, no index;
    missing values empty, text a spreadsheet would run as a formula escaped (:mod:`multigpu.common.csvout`)."""
    frame = _full_frame(df)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(str(c)) for c in frame.columns])
    for row in frame.itertuples(index=False, name=None):
        writer.writerow(["" if _missing(v) else csv_cell(v) for v in row])
    return out.getvalue()


def _key_width_em(words: Sequence[str]) -> float:
    """A fixed width (padding included) for a sticky key column, so the next one knows where to stick:
    about 0.62 em a character of the longest cell or header word, from 3 to 11 em (longer text wraps)."""
    longest = max((text_width(w) for w in words), default=4)
    return min(max(round(longest * 0.62 + 1.5, 1), 3.0), 11.0)


def _head_width_em(label: str) -> float:
    """A minimum width for a header, so that a long one wraps to about three lines, not one word a line."""
    return min(round(text_width(label) * 0.62 / 3 + 0.5, 1), 9.0)


# ---------------------------------------------------------------- the table


#: Columns of money (by the package's column names): amounts keep their cents, 2.50, never 2.5.
_MONEY = re.compile(r"usd|cny|price|cost", re.IGNORECASE)


def _fewest_decimals(values: list[Any], places: int) -> int:
    """The fewest decimals, at most ``places``, that show every finite number of a column as ``places`` would:
    [450.0, 31.5] -> 1, so that 450 is not printed 450.00 when no value needs a second decimal."""
    finite = [float(v) for v in values if _is_number(v) and math.isfinite(float(v))]
    return next(d for d in range(places + 1) if all(round(x, d) == round(x, places) for x in finite))


def resolution_text(value: Any, places: int) -> str | None:
    """A non-zero number too small for ``places`` decimals as the bound it is under ("<0.01"), so that no cell shows
    0.00 for a value that is not 0 (:func:`multigpu.common.numtext.below_resolution`); None for any other value."""
    return below_resolution(value, places) if _is_number(value) else None


def _column_texts(name: str, values: list[Any], digits: int | Mapping[str, int], estimate: bool,
                  translate: Callable[[Any], object] | None) -> list[str]:
    """One column's cells as text: a model estimate to three significant figures, a year bare (2016), whole
    numbers without decimals unless ``digits`` names the column, money with all its decimals, others with the fewest
    of its decimals that show them (:func:`_fewest_decimals`), a non-zero number under the last decimal as its bound
    (:func:`resolution_text`);
    then translated by ``translate`` where the column is a vocabulary (a finding's sentence keeps its values)."""
    places = digits.get(name, 2) if isinstance(digits, Mapping) else digits
    given = isinstance(digits, Mapping) and name in digits
    shown = places if given or _MONEY.search(name) else _fewest_decimals(values, places)
    texts = [resolution_text(v, places) or cell_text(v, shown) for v in values]
    if estimate:
        texts = [estimate_text(v) for v in values]
    elif _is_year(name):
        texts = [t if _missing(v) or not _is_number(v) else year_text(v) for t, v in zip(texts, values)]
    elif not given and _whole(values):
        texts = [cell_text(v, 0) for v in values]
    if translate is not None:
        texts = [t if _missing(v) or not t else str(translate(v if isinstance(v, str) else t))
                 for t, v in zip(texts, values)]
    return texts


def _years_by_unit(frame: pd.DataFrame, values: list[Any], texts: list[str]) -> list[str]:
    """A number whose row's ``unit`` is ``year`` (a claim's value, say) shown bare, 2016 and not 2,016."""
    if "unit" not in frame.columns:
        return texts
    return [year_text(v) if unit == "year" and _is_number(v) and math.isfinite(float(v)) else t
            for t, v, unit in zip(texts, values, frame["unit"])]


def table_html(df: pd.DataFrame, *, key: Sequence[str] = (), columns: Sequence[str] | None = None,
               labels: Mapping[str, str] | None = None, digits: int | Mapping[str, int] = 2, csv_name: str,
               caption: str | None = None, table_id: str | None = None,
               links: Mapping[str, str] | None = None, label_columns: LabelColumns = (),
               estimates: Sequence[str] = (), ranges: bool | Sequence[str] = False) -> str:
    """The table as HTML in the book's style and the current language, with a CSV download of the whole frame (see
    the module doc).

    ``key``: the columns that name a row, shown first and sticky; ``columns``: the other columns to show, in order
    (default: all); ``labels``: headers by column name (default: :func:`header`); ``digits``: decimals for floats,
    one number or by column name (2 for columns not named); ``csv_name``: the file name of the download, without
    ``.csv`` (letters, digits, ``-``, ``_``); ``caption``: a line above the table; ``table_id``: the ``id`` of the
    ``<table>``; ``links``: shown column -> the column holding each cell's link target (a relative URL; that
    column is in the CSV but shown only if ``columns`` names it); ``label_columns``: columns whose cells are words
    of a fixed vocabulary (verdicts), translated outside English by :func:`multigpu.book.lang.label`, or a mapping
    of columns to the function that translates their cells' text (a claim's value, say:
    :func:`multigpu.book.claim_values.translate`); ``estimates``: columns of model estimates (costs, hours), shown
    to :data:`ESTIMATE_FIGURES` significant figures (the CSV keeps every digit); ``ranges``: each value with its
    prediction interval beside it (True), or those of the columns named, shown as "x (lo–hi)" and those bounds not
    shown (:func:`fold_ranges`; the CSV keeps every number). Raises ValueError for a bad
    ``csv_name`` or ``table_id``, an
    unknown column in ``key`` or ``columns``, or bad ``digits``; LookupError outside English for a header or label
    without a translation."""
    _check_slug(csv_name)
    _check_digits(digits)
    if table_id is not None and not _HTML_ID.fullmatch(table_id):
        raise ValueError(f"table_id {table_id!r} is not a plain HTML id (a letter, then letters, digits, - or _)")
    labels = labels or {}
    translators = label_columns if isinstance(label_columns, Mapping) else dict.fromkeys(label_columns, lang.label)
    frame = _full_frame(df)
    frame = frame if ranges is False else fold_ranges(frame, None if ranges is True else ranges)
    shown = _shown(frame, key, columns)
    keys = {str(c) for c in key}

    columns_ = [_column(frame, column, keys, labels, digits, estimates, translators, links) for column in shown]
    keys_em = _fitted_keys(columns_)
    tight = len(columns_) <= FIT_COLUMNS and _least_em(columns_, keys_em) > _FIT_EM
    heads, bodies, left = [], [], 0.0
    for column, key_em in zip(columns_, keys_em):
        style, cell_style = "", ""
        if key_em is not None:
            # the header sets a key column's width; its cells stick at the left of the columns before it, the
            # first at 0 (the stylesheet's), so a long table does not repeat one style in every row
            style = f' style="left:{left:g}em;width:{key_em:g}em;min-width:{key_em:g}em;max-width:{key_em:g}em"'
            cell_style = f' style="left:{left:g}em"' if left else ""
            left = round(left + key_em, 2)
        elif column.head_em:
            style = f' style="min-width:{column.head_em:g}em"'
        heads.append(f'<th scope="col"{_class(column.cls)}{style}>{html.escape(column.label)}</th>')
        opening = f"<td{_class(column.cls)}{cell_style}>"
        bodies.append([f"{opening}{c}</td>" for c in column.cells])

    rows = ["<tr>" + "".join(cells) + "</tr>" for cells in zip(*bodies)] if bodies else []
    return _framed(heads, rows, csv_text(df), csv_name, caption, table_id, tight)


@dataclass
class _Column:
    """One shown column before layout: its header, its cells' HTML, its class and its widths (em)."""

    label: str
    cells: list[str]
    cls: str
    key_em: float | None  # a key column's width as its longest word asks
    head_em: float  # a header's least width (0: none)
    unbreakable_em: float  # what no wrapping makes narrower: the longest header word, a number cell whole


def _column(frame: pd.DataFrame, column: Any, keys: set[str], labels: Mapping[str, str],
            digits: int | Mapping[str, int], estimates: Sequence[str], translators: Mapping[str, Any],
            links: Mapping[str, str] | None) -> _Column:
    """A shown column's texts, class and the widths it asks for."""
    name = str(column)
    values = list(frame[column])
    texts = _column_texts(name, values, digits, name in estimates, translators.get(name))
    texts = _years_by_unit(frame, values, texts)
    present = [v for v in values if not _missing(v)]
    numeric = bool(present) and all(_is_number(v) for v in present)
    label = lang.label(labels.get(name, header(name)))
    cells = [html.escape(t) for t in texts]
    if links and name in links:
        hrefs = list(frame[links[name]])
        cells = [c if _missing(h) else f'<a href="{html.escape(str(h))}">{c}</a>' for c, h in zip(cells, hrefs)]
    if name in keys:
        return _Column(label, cells, "mg-key", _key_width_em([*label.split(" "), *texts]), 0.0, 0.0)
    wide = not numeric and max((len(t) for t in texts), default=0) > _WIDE_TEXT
    whole = [*_WORD.findall(label), *(texts if numeric else [])]
    unbreakable = round(max((text_width(w) for w in whole), default=2) * _WORD_EM_PER_CHAR, 1)
    return _Column(label, cells, "mg-num" if numeric else "", None,
                   max(_head_width_em(label), _WIDE_EM if wide else 0.0), unbreakable)


def _fitted_keys(columns: list[_Column]) -> list[float | None]:
    """Fit a table of at most :data:`FIT_COLUMNS` columns into :data:`_FIT_EM`: first the headers' least widths
    shrink, all by one factor, towards what cannot wrap (a column is never narrower than its longest word, which
    the browser keeps), then the key columns towards :data:`_KEY_FLOOR_EM`; a wider table keeps every width as
    asked (it may scroll sideways). Sets each header's ``head_em``; returns the key columns' widths (None for
    the others). Where even the longest words do not fit, the table is ``mg-tight``: its header words may break."""
    others = [c for c in columns if c.key_em is None]
    keys = [c.key_em for c in columns if c.key_em is not None]
    if len(columns) > FIT_COLUMNS:
        return [c.key_em for c in columns]

    def width(factor: float) -> float:
        return sum(max(c.head_em * factor, c.unbreakable_em) + _PADDING_EM for c in others)

    factor = next((f / 20 for f in range(20, -1, -1) if width(f / 20) + sum(keys) <= _FIT_EM), 0.0)
    for c in others:
        c.head_em = round(c.head_em * factor, 1)
    key_room = _FIT_EM - width(factor)
    if keys and sum(keys) > key_room:
        shrink = max(key_room - _KEY_FLOOR_EM * len(keys), 0.0) / max(sum(k - _KEY_FLOOR_EM for k in keys), 1e-9)
        return [None if c.key_em is None else round(min(c.key_em, _KEY_FLOOR_EM + (c.key_em - _KEY_FLOOR_EM)
                                                        * min(shrink, 1.0)), 1) for c in columns]
    return [c.key_em for c in columns]


def _least_em(columns: list[_Column], keys_em: list[float | None]) -> float:
    """The narrowest the table can be (em) while no header word breaks: keys as fitted, every other column as
    wide as its longest word, plus padding."""
    return sum(k if k is not None else c.unbreakable_em + _PADDING_EM for c, k in zip(columns, keys_em))


def _class(name: str) -> str:
    """`` class="name"`` for a cell of class ``name`` (the table's stylesheet styles it), or nothing."""
    return f' class="{name}"' if name else ""


def _framed(heads: list[str], rows: list[str], csv: str, csv_name: str, caption: str | None,
            table_id: str | None, tight: bool = False) -> str:
    """The table's HTML around its header cells ``heads`` and body rows ``rows``: the caption, the scroll
    container, and the link that downloads ``csv`` as ``<csv_name>.csv``."""
    payload = base64.b64encode(csv.encode("utf-8")).decode("ascii")
    download = _("Download this table (CSV)")
    id_attr = f' id="{table_id}"' if table_id else ""
    aria = f' aria-label="{html.escape(caption)}"' if caption else ""
    parts = ['<div class="mg-table">', _STYLE]
    if caption:
        parts.append(f'<p class="mg-table-caption">{html.escape(caption)}</p>')
    parts += [
        '<div class="mg-table-scroll" style="overflow-x:auto;max-width:100%">',
        f'<table class="mg-table-grid{" mg-tight" if tight else ""}"{id_attr}{aria}>',
        "<thead><tr>" + "".join(heads) + "</tr></thead>",
        "<tbody>" + "".join(rows) + "</tbody>",
        "</table>",
        "</div>",
        (f'<p class="mg-table-download"><a class="mg-csv" download="{csv_name}.csv" '
         f'href="data:text/csv;charset=utf-8;base64,{payload}">{html.escape(download)}</a></p>'),
        "</div>",
    ]
    return "\n".join(parts)


def editions_html(df: pd.DataFrame, *, table_id: str | None = None, caption: str | None = None,
                  **kw: Any) -> str:
    """The table in every language of the book as one output (:func:`table_html` of the same arguments once per
    language, each in its ``mg-lang-*`` div). ``table_id`` is the English table's; another language's gets
    ``-<language>`` after it (ids are unique on a page). ``caption`` is an English message, translated."""
    def one() -> str:
        language = lang.current()
        own_id = table_id if table_id is None or language == "en" else f"{table_id}-{language}"
        return table_html(df, table_id=own_id, caption=None if caption is None else lang.label(caption), **kw)

    return lang.editions_html(lang.per_language(one))


def show_table(df: pd.DataFrame, *, key: Sequence[str] = (), columns: Sequence[str] | None = None,
               labels: Mapping[str, str] | None = None, digits: int | Mapping[str, int] = 2, csv_name: str,
               caption: str | None = None, table_id: str | None = None,
               links: Mapping[str, str] | None = None, label_columns: LabelColumns = (),
               editions: bool = False) -> None:
    """Display :func:`table_html` of the same arguments in the notebook (IPython HTML output); with
    ``editions``, :func:`editions_html` (one table per language of the book)."""
    from IPython.display import HTML, display

    make = editions_html if editions else table_html
    display(HTML(make(df, key=key, columns=columns, labels=labels, digits=digits, csv_name=csv_name,
                      caption=caption, table_id=table_id, links=links, label_columns=label_columns)))


def flat_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with two-level column names (``pd.concat({...}, axis=1)``) as one level: each part's header
    (:func:`header`), joined by ": "; a frame with one level is returned as it is."""
    if not isinstance(frame.columns, pd.MultiIndex):
        return frame
    names = [": ".join(header(part) for part in column if str(part)) for column in frame.columns]
    return frame.set_axis(names, axis=1)


#: The caption of a table whose model values carry their prediction intervals (:func:`fold_ranges`).
RANGES_CAPTION = N_("Each model value is followed by its 90 % prediction interval in brackets.")


def ranged_columns(frame: pd.DataFrame) -> list[Any]:
    """The columns of ``frame`` that have their prediction interval beside them: ``<column>_lo`` and
    ``<column>_hi``."""
    names = {str(c) for c in frame.columns}
    return [c for c in frame.columns if f"{c}_lo" in names and f"{c}_hi" in names]


def fold_ranges(frame: pd.DataFrame, only: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` with each of :func:`ranged_columns` (those of them named in ``only``, if given) as one "x (lo–hi)"
    text (:func:`multigpu.common.numtext.range_text`; a missing or non-numeric value stays as it is) and their
    bounds dropped."""
    folded = [c for c in ranged_columns(frame) if only is None or str(c) in only]
    out = frame.drop(columns=[f"{c}_{end}" for c in folded for end in ("lo", "hi")])
    for c in folded:
        out[c] = [range_text(v, lo, hi) if all(_is_number(x) and math.isfinite(x) for x in (v, lo, hi)) else v
                  for v, lo, hi in zip(frame[c], frame[f"{c}_lo"], frame[f"{c}_hi"])]
    return out


def dataframe_html(frame: pd.DataFrame, *, csv_name: str, digits: int = 2, editions: bool = False,
                   label_columns: LabelColumns = ()) -> str:
    """A DataFrame as a notebook cell that returns it shows (:func:`use_for_dataframes`): two-level headers made one
    (:func:`flat_columns`), a named index as the key columns, model predictions (:data:`ESTIMATE_PREFIXES`) to
    :data:`ESTIMATE_FIGURES` significant figures, each value with its prediction interval beside it as "x (lo–hi)"
    under a caption that says so (:func:`fold_ranges`); with ``editions``, :func:`editions_html`."""
    frame = flat_columns(frame)
    key = [str(n) for n in frame.index.names if n is not None]
    make = editions_html if editions else table_html
    estimates = [str(c) for c in frame.columns if str(c).startswith(ESTIMATE_PREFIXES)]
    ranged = bool(ranged_columns(frame))
    caption = None if not ranged else RANGES_CAPTION if editions else lang.label(RANGES_CAPTION)
    return make(frame, key=key, digits=digits, csv_name=csv_name, label_columns=label_columns, estimates=estimates,
                caption=caption, ranges=ranged)


def use_for_dataframes(prefix: str, digits: int = 2, *, editions: bool = False,
                       label_columns: LabelColumns = ()) -> None:
    """Show every DataFrame a notebook cell returns in the book's table style (:func:`dataframe_html`), each
    table's CSV download named ``<prefix>-<n>`` (n counts this notebook's tables in order, so the names are the
    same on every run). With ``editions``, each is :func:`editions_html` (one table per language,
    ``label_columns`` translated). Call once, in the notebook's first cell."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return
    count = iter(range(1, 10_000))

    def formatter(frame: pd.DataFrame) -> str:
        return dataframe_html(frame, csv_name=f"{prefix}-{next(count)}", digits=digits, editions=editions,
                              label_columns=label_columns)

    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, formatter)
