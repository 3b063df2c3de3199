"""The book's one table style: headers for people, no index, no NaN, sticky keys, a CSV download."""

from __future__ import annotations

import base64
import io
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from multigpu.book import tables
from multigpu.book.tables import MISSING, header, table_html

# Column names the chapters and the market modules show (src/multigpu/book/ch0*.py, src/multigpu/market/*.py,
# and the tables of the built chapters), with the header each must get where it matters.
REAL_COLUMNS = {
    "nvlink_usd_per_gpu_hour": "NVLink (USD per GPU-hour)",
    "pcie_usd_per_gpu_hour": "PCIe (USD per GPU-hour)",
    "break_even_premium_pct": "Break-even premium (%)",
    "break_even_price_per_gpu_hour_usd": "Break-even price per GPU-hour (USD)",
    "price_per_gpu_hour_usd": "Price per GPU-hour (USD)",
    "price_USD_per_gpu_hour": "Price (USD per GPU-hour)",
    "price_CNY_per_gpu_hour": "Price (CNY per GPU-hour)",
    "premium_usd_per_gpu_hour": "Premium (USD per GPU-hour)",
    "per_gpu_GBps_per_dir": "Per GPU (GB/s per direction)",
    "gpu_GBps_bidir": "GPU (GB/s, both directions)",
    "allreduce_time_us": "All-reduce time (µs)",
    "step_s": "Step (s)",
    "time_days": "Time (days)",
    "time_h": "Time (h)",
    "nvlink_gpu_hours": "NVLink GPU-hours",
    "pcie_gpu_hours": "PCIe GPU-hours",
    "mesh_tokens_per_s_per_gpu": "Mesh (tokens/s per GPU)",
    "tokens_per_s_per_gpu": "Tokens/s per GPU",
    "rate_tokens_per_s_per_user": "Rate (tokens/s per user)",
    "tp": "TP", "pp": "PP", "dp": "DP", "dp_pct": "DP (%)",
    "model_id": "Model ID", "id": "ID", "gpu": "GPU", "gpus": "GPUs", "gpu_name": "GPU name",
    "cost_usd": "Cost (USD)",
    "cost_usd_per_1M_tokens": "Cost (USD per 1M tokens)",
    "params_B": "Parameters (billions)",
    "speedup_x": "Speedup (×)",
    "dense_TFLOPS_pct_of_parent": "Dense TFLOPS (% of parent)",
    "lane_Gbps": "Lane (Gb/s)",
    "size_MiB": "Size (MiB)",
    "verdict": "Verdict",
    "interconnect_class": "Interconnect class",
    "in_network_reduction": "In-network reduction",
    "mfu_pct": "MFU (%)",
    "tpot_ms": "TPOT (ms)",
}
MORE_REAL_COLUMNS = """
allreduce_busbw_GBps allreduce_ms allreduce_pct allreduce_per_token_us alltoall_busbw_GBps alltoall_gpu_ratio_x
alltoall_pair_GBps_per_dir benefit_x bf16_dense_EFLOPS bf16_mesh_tokens_per_s_per_gpu bisection_TBps_per_dir
blog_p2p_GBps_bidir bubble_pct busbw_GBps_limit bytes_per_gpu_GB bytes_per_kFLOP capacity_requests_per_s
capacity_tokens_per_s charged_premium_pct charged_premium_usd cheapest_class cheapest_gpu cheapest_offer comm_pct
compute_efficiency_pct compute_only_speedup_x cost_per_hour_usd cost_unit cost_usd_per_job deadline_days
deadline_h delivered_TBps dense_TFLOPS difference_pct double_latency_pct doubling_years dp_comm_pct
efficiency_pct error_pct exposed_comm_s feasible_offers first_GBps_per_dir first_year floor_tokens_per_s_per_user
fp4_dense_EFLOPS fp8_switch_tokens_per_s_per_gpu from_KiB gain_x global_batch gpu_alltoall_GBps_per_dir
gpu_ring_GBps_per_dir gpu_TBps_per_dir gpu_to_gpu_pct_of_parent gpus_per_domain gpus_per_instance growth_x
guide_class half_bandwidth_pct hierarchical_busbw_GBps hop_latency_us input_tokens job_gpus kv_cache_ms
last_GBps_per_dir latency_ll_us latency_simple_us latency_us limit_x link_GBps_per_dir links_per_gpu
max_cost_usd max_gpus max_gpus_per_domain max_ttft_s max_usd_per_gpu_hour measured_GBps measured_busbw_GBps
measured_s measured_step_s median_abs_error_pct median_usd_per_gpu_hour mem_bw_GBps mem_bw_pct_of_parent
memory_GB memory_per_gpu_GB mesh_batch micro_batch min_tokens_per_s_per_user min_usd_per_gpu_hour model_s
model_switch_pair_GBps_bidir most_sent_by_one_gpu_GBps_per_dir n_gpus n_offers nic_GBps_per_dir
node_nic_GBps_per_dir nvidia_benefit_x nvlink_bytes_per_kFLOP nvlink_class nvlink_cost_usd nvlink_instance
nvlink_layout nvlink_offer nvlink_system nvls_busbw_GBps nvls_small_us one_gpu_s other_compute_ms output_tokens
pair_GBps_per_dir pair_in_alltoall_GBps_per_dir pair_share_pct pcie_cost_usd pcie_instance pcie_offer
pcie_price_scale_to_flip pcie_reason pcie_system per_flow_GBps_per_dir per_link_GBps_bidir per_peer_GBps_per_dir
per_query_GB per_query_GiB per_step_MB per_token_MB predicted_GBps predicted_s predicted_us premium_pct
price_per_gpu_hour price_per_hour_usd provider_type ratio_mixed_convention ratio_same_convention
reference_cost_usd reference_gpu reference_gpu_hours reference_price_per_gpu_hour_usd requests_per_s
ring_busbw_GBps ring_large_us ring_small_us saving_pct seqs_per_gpu sequence_parallel share_at_1_pct size_class
split_GBps_per_dir step_ms step_time_s switch_pair_in_alltoall_GBps_bidir system_id time_s time_us to_KiB
tokens_B tokens_per_gpu tolerance_pct total_GBps_per_dir tp1_batch tp1_tokens_per_s_per_gpu tp_pct
tree_busbw_GBps usd_per_unit vendor_GBps weights_ms within_10pct within_tolerance worst_abs_error_pct worst_id
zero_stage
""".split()
# Words that must never reach a reader in lower case (a unit or a name spelled wrong).
LOWERCASE_ERRORS = re.compile(r"\b(usd|cny|gbps|GBps|tbps|TBps|pct|tps|nvlink|nvls|pcie|gpu|gpus|id|tp|pp|dp|ep"
                              r"|us|bidir|dir|busbw|kflop|tflops|eflops|mfu|tpot|ttft|kv|bf16|fp8|fp4)\b")


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "gpu": ["H100 SXM", "H200", "B200", "A100 <PCIe> & co"],
        "nvlink_usd_per_gpu_hour": [2.5, np.nan, 3.141592653589793, 1234.5678],
        "break_even_premium_pct": [31.125, -0.001, 0.1 + 0.2, 1 / 3],
        "gpus": [8, 8, 72, 10000],
        "within_tolerance": [True, False, True, False],
        "workload": ["train-8b", "serve-70b", None, "train, \"quoted\"\nnewline"],
    })


class Cells(HTMLParser):
    """The header and body cells of every table, as text, and the attributes of every element."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[str] = []
        self.rows: list[list[str]] = []
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self._cell: list[str] | None = None
        self._in_body = False

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell)
            (self.rows[-1] if self._in_body else self.heads).append(text)
            self._cell = None
        elif tag == "tbody":
            self._in_body = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(html_text: str) -> Cells:
    cells = Cells()
    cells.feed(html_text)
    return cells


def csv_of(html_text: str) -> tuple[str, bytes]:
    match = re.search(r'<a class="mg-csv" download="([^"]+)" href="data:text/csv;charset=utf-8;base64,([^"]+)">'
                      r"Download this table \(CSV\)</a>", html_text)
    assert match, "no CSV download link"
    return match.group(1), base64.b64decode(match.group(2))


# ---------------------------------------------------------------- headers


@pytest.mark.parametrize(("name", "expected"), sorted(REAL_COLUMNS.items()))
def test_headers_of_real_columns(name, expected):
    assert header(name) == expected


@pytest.mark.parametrize("name", sorted(set(REAL_COLUMNS) | set(MORE_REAL_COLUMNS)))
def test_no_header_has_an_underscore_or_a_lowercase_unit(name):
    text = header(name)
    assert "_" not in text, text
    assert not LOWERCASE_ERRORS.search(text), f"{name} -> {text}"
    assert text[0] == text[0].upper(), f"{name} -> {text} does not start with a capital"


def test_header_rules_are_data():
    assert tables.UNIT_SUFFIXES[("pct",)] == "%"
    assert tables.UNIT_SUFFIXES[("GBps", "per", "dir")] == "GB/s per direction"
    assert tables.WORDS[("nvlink",)] == "NVLink" and tables.WORDS[("tps",)] == "tokens/s"
    assert header("decode_tps") == "Decode (tokens/s)"
    assert header("ep") == "EP" and header("usd") == "USD" and header("cny") == "CNY"


def test_names_already_for_people_are_kept():
    assert header("GPUs per job") == "GPUs per job"
    assert header("serve-70b (CNY per_1M_tokens)") == "serve-70b (CNY per 1M tokens)"
    assert header("h200-p2p-8_ms") == "h200-p2p-8 (ms)"


def test_labels_win_and_every_shown_header_has_no_underscore():
    out = parse(table_html(frame(), labels={"gpu": "Accelerator"}, csv_name="t"))
    assert out.heads[0] == "Accelerator"
    assert out.heads[1:3] == ["NVLink (USD per GPU-hour)", "Break-even premium (%)"]
    assert all("_" not in h for h in out.heads), out.heads


# ---------------------------------------------------------------- cells


def test_no_index_column_and_missing_values_as_a_dash():
    df = frame().set_axis([10, 11, 12, 13])  # an unnamed index is not shown
    df["when"] = [pd.Timestamp("2025-01-01"), pd.NaT, pd.Timestamp("2025-03-01"), pd.NaT]
    df["n"] = pd.array([1, None, 3, 4], dtype="Int64")
    out = parse(table_html(df, csv_name="t"))
    assert len(out.heads) == len(df.columns)
    assert all(len(row) == len(df.columns) for row in out.rows)
    body = [c for row in out.rows for c in row]
    assert not any(c in ("nan", "NaN", "<NA>", "NaT", "None", "") for c in body), body
    assert out.rows[1][1] == MISSING  # NaN
    assert out.rows[2][5] == MISSING  # None
    assert out.rows[1][6] == MISSING and out.rows[3][6] == MISSING  # NaT
    assert out.rows[1][7] == MISSING  # pd.NA


def test_numbers_rounded_with_separators_and_booleans_as_words():
    out = parse(table_html(frame(), digits={"nvlink_usd_per_gpu_hour": 3}, csv_name="t"))
    assert [r[1] for r in out.rows] == ["2.500", MISSING, "3.142", "1,234.568"]
    assert [r[2] for r in out.rows] == ["31.12", ">-0.01", "0.30", "0.33"]  # a tiny negative: no "-0.00", no "0.00"
    assert [r[3] for r in out.rows] == ["8", "8", "72", "10,000"]
    assert [r[4] for r in out.rows] == ["yes", "no", "yes", "no"]
    assert parse(table_html(frame(), digits=0, csv_name="t")).rows[3][1] == "1,235"


def test_a_column_shows_the_decimals_its_numbers_need_and_no_zero_that_is_not_zero():
    """Issue 43: no "450.00" where no value of the column needs a second decimal, and no "0.00" (nor "0.0 ms")
    for a number that is not zero: it shows the bound it is under."""
    df = pd.DataFrame({"per_dir_GBps": [450.0, 64.0, 31.5], "share_pct": [12.34, 0.004, 0.0],
                       "x_pct": [1.0, 2.5, 3.0]})
    rows = parse(table_html(df, csv_name="t")).rows
    assert [r[0] for r in rows] == ["450.0", "64.0", "31.5"]
    assert [r[1] for r in rows] == ["12.34", "<0.01", "0.00"]
    assert [r[2] for r in rows] == ["1.0", "2.5", "3.0"]
    assert tables.resolution_text(0.004, 2) == "<0.01" and tables.resolution_text(-0.0004, 3) == ">-0.001"
    assert tables.resolution_text(0.005, 2) is None and tables.resolution_text(0.0, 2) is None
    assert parse(table_html(df, digits={"per_dir_GBps": 2}, csv_name="t")).rows[0][0] == "450.00"  # asked for
    claims = pd.DataFrame({"model_value": [2016, 1800.0], "unit": ["year", "GB/s"]})
    assert [r[0] for r in parse(table_html(claims, csv_name="t")).rows] == ["2016", "1,800"]  # a year by its unit


def rule(html_text: str, selector: str) -> str:
    """The declarations of the table stylesheet's rule whose selector list ends one selector with ``selector``."""
    sheet = re.search(r"<style>(.*?)</style>", html_text, flags=re.S).group(1)
    found = [body for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", sheet)
             if any(s.strip().endswith(selector) for s in selectors.split(","))]
    assert found, f"no rule for {selector}"
    return ";".join(found)


def test_numbers_right_aligned_text_wraps():
    html_text = table_html(frame(), csv_name="t")
    tds = [a for tag, a in parse(html_text).elements if tag == "td"][:6]
    assert tds[1]["class"] == "mg-num" and "style" not in tds[1]  # the stylesheet, not each cell, styles it
    assert "text-align:right" in rule(html_text, "td.mg-num") and "tabular-nums" in rule(html_text, "td.mg-num")
    assert "class" not in tds[5] and "style" not in tds[5]
    assert "white-space:normal" in rule(html_text, "table.mg-table-grid td")
    assert "text-align:left" in rule(html_text, "table.mg-table-grid td")


def test_key_columns_first_sticky_then_columns_in_order():
    html_text = table_html(frame(), key=["workload", "gpu"], columns=["gpus", "nvlink_usd_per_gpu_hour"],
                           csv_name="t")
    out = parse(html_text)
    assert out.heads == ["Workload", "GPU", "GPUs", "NVLink (USD per GPU-hour)"]
    cells = [a for tag, a in out.elements if tag in ("th", "td")]
    sticky = [a for a in cells if a.get("class") == "mg-key"]
    assert len(sticky) == 2 * (1 + len(frame()))  # two key columns, header and every row
    assert "position:sticky" in rule(html_text, "td.mg-key") and "background:#fff" in rule(html_text, "td.mg-key")
    assert "left:0" in rule(html_text, "td.mg-key")  # the first key column sticks at the left edge
    heads, cells_ = sticky[:2], sticky[2:]  # the two key headers, then each row's two key cells
    assert ["left:0em" in a["style"] and "width:" in a["style"] for a in heads] == [True, False]
    # in the rows, the first key's cells carry no style (the stylesheet's left:0); the second sticks right of it
    assert all("style" not in a for a in cells_[0::2])
    assert {a["style"] for a in cells_[1::2]} == {heads[1]["style"].split(";")[0]}
    assert [a for tag, a in out.elements if tag == "div" and a.get("class") == "mg-table-scroll"] == [
        {"class": "mg-table-scroll", "style": "overflow-x:auto;max-width:100%"}]


def test_unknown_columns_are_refused():
    with pytest.raises(ValueError, match="no such column"):
        table_html(frame(), key=["nope"], csv_name="t")
    with pytest.raises(ValueError, match="no such column"):
        table_html(frame(), columns=["gpu", "nope"], csv_name="t")


def test_every_cell_and_header_is_escaped():
    df = pd.DataFrame({"<script>alert(1)</script>": ["<img src=x onerror=alert(1)>", 'a "quote" & more']})
    html_text = table_html(df, caption="<b>caption</b>", csv_name="t")
    assert "<script>" not in html_text and "<img" not in html_text and "<b>" not in html_text
    out = parse(html_text)
    assert out.heads == ["<script>alert(1)</script>"]
    assert out.rows == [["<img src=x onerror=alert(1)>"], ['a "quote" & more']]


# ---------------------------------------------------------------- CSV, ids, determinism


def test_csv_round_trip_is_the_whole_frame_at_full_precision():
    df = frame()
    name, data = csv_of(table_html(df, key=["gpu"], columns=["gpus"], digits=0, csv_name="ch04-break_even"))
    assert name == "ch04-break_even.csv"
    back = pd.read_csv(io.BytesIO(data))
    assert list(back.columns) == list(df.columns)  # every column, snake_case, no index
    pd.testing.assert_frame_equal(back, df, check_dtype=False, check_exact=True)


def test_csv_keeps_a_named_index_and_escapes_formulas():
    df = pd.DataFrame({"gpu": ["=HYPERLINK(1)", "H200"], "x": [1.5, -2.0]}).set_index("gpu")
    html_text = table_html(df, csv_name="t")
    assert parse(html_text).heads == ["GPU", "X"]
    back = pd.read_csv(io.BytesIO(csv_of(html_text)[1]))
    assert list(back["gpu"]) == ["'=HYPERLINK(1)", "H200"]  # a spreadsheet does not run it
    assert list(back["x"]) == [1.5, -2.0]  # numbers, negative ones too, are not escaped


def test_output_is_byte_identical_between_runs():
    kwargs = {"key": ["gpu"], "digits": 1, "csv_name": "t", "caption": "Caption", "table_id": "decision-table"}
    assert table_html(frame(), **kwargs) == table_html(frame(), **kwargs)
    assert table_html(frame(), **kwargs) == table_html(frame().copy(), **kwargs)


def test_table_id_and_caption():
    html_text = table_html(frame(), csv_name="t", table_id="decision-table", caption="What pays")
    table = [a for tag, a in parse(html_text).elements if tag == "table"]
    assert table == [{"class": "mg-table-grid", "id": "decision-table", "aria-label": "What pays"}]
    assert '<p class="mg-table-caption">What pays</p>' in html_text
    with pytest.raises(ValueError, match="table_id"):
        table_html(frame(), csv_name="t", table_id='x" onclick="y')


@pytest.mark.parametrize("bad", ["", "a b", "../etc/passwd", "x.csv", "a/b", 'x"y', "-lead", "trail-", "é", "a" * 101])
def test_csv_name_must_be_a_safe_slug(bad):
    with pytest.raises(ValueError, match="csv_name"):
        table_html(frame(), csv_name=bad)


def test_csv_name_is_required():
    with pytest.raises(TypeError):
        table_html(frame())  # type: ignore[call-arg]


def test_show_table_displays_the_same_html(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    assert tables.show_table(frame(), key=["gpu"], csv_name="t") is None
    assert [obj.data for obj in shown] == [table_html(frame(), key=["gpu"], csv_name="t")]


def test_layer_rule_only_pandas_ipython_stdlib_and_common():
    source = Path(tables.__file__).read_text(encoding="utf-8")
    imported = set(re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, re.MULTILINE))
    allowed = {"__future__", "base64", "csv", "html", "io", "math", "numbers", "re", "collections.abc", "typing",
               "dataclasses",
               "pandas", "IPython", "IPython.display", "multigpu.common.csvout", "multigpu.common.numtext",
               "multigpu.book", "multigpu.book.lang"}  # lang: the editions' languages (stdlib and Babel only)
    assert imported <= allowed, imported - allowed


def test_links_wrap_cells_in_their_targets():
    frame = pd.DataFrame({"page": ["Chapter 4", "Chapter 3"], "href": ["chapters/04.html", None], "x": [1.0, 2.0]})
    out = tables.table_html(frame, key=["page"], columns=["x"], csv_name="pages", links={"page": "href"})
    assert '<a href="chapters/04.html">Chapter 4</a>' in out
    assert ">Chapter 3</td>" in out and "chapters/04.html</td>" not in out  # no link where there is no target


def test_two_level_columns_become_one_level_of_headers():
    inner = pd.DataFrame({"a": [1.0], "b": [2.0]}, index=pd.Index([8], name="gpus"))
    frame = pd.concat({"allreduce_time_us": inner, "alltoall_busbw_GBps": inner}, axis=1)
    flat = tables.flat_columns(frame)
    assert list(flat.columns) == [f"{tables.header('allreduce_time_us')}: A", f"{tables.header('allreduce_time_us')}: B",
                                  f"{tables.header('alltoall_busbw_GBps')}: A", f"{tables.header('alltoall_busbw_GBps')}: B"]
    assert "_" not in "".join(flat.columns) and flat.index.name == "gpus"
    assert tables.flat_columns(inner) is inner


# ------------------------------------------------------------------ both editions from one execution


def editions_parts(page: str) -> dict[str, str]:
    """The part of each language of an output made for both editions (``mg-lang-*`` divs), by language."""
    found = dict(re.findall(r'<div class="mg-lang-(\w+)"[^>]*>(.*?)</div>\n?(?=<div class="mg-lang-|$)', page, re.S))
    assert list(found) == ["en", "zh"], list(found)
    return found


def verdict_frame() -> pd.DataFrame:
    return pd.DataFrame({"id": ["C01", "C04"], "verdict": ["holds", "misleading"], "year": [2016, 2022],
                         "per_gpu_GBps_per_dir": [80.0, 450.0], "in_network_reduction": [True, False]})


def test_editions_html_holds_one_table_per_language():
    page = tables.editions_html(verdict_frame(), key=["id"], csv_name="claims", table_id="claims",
                                label_columns=["verdict"])
    assert page.startswith('<div class="mg-lang-en">') and '<div class="mg-lang-zh" lang="zh-CN">' in page
    parts = editions_parts(page)
    en, zh = parse(parts["en"]), parse(parts["zh"])
    assert parts["en"] == table_html(verdict_frame(), key=["id"], csv_name="claims", table_id="claims",
                                     label_columns=["verdict"])  # English: the table as before
    assert en.heads == ["ID", "Verdict", "Year", "Per GPU (GB/s per direction)", "In-network reduction"]
    assert zh.heads == ["编号", "判定", "年份", "每 GPU（GB/s，单向）", "网内归约"]
    assert [row[2:4] for row in en.rows] == [row[2:4] for row in zh.rows] == [["2016", "80"], ["2022", "450"]]  # years bare, whole numbers without decimals
    assert [row[1] for row in zh.rows] == ["成立", "有误导性"]
    assert [row[1] for row in en.rows] == ["holds", "misleading"]
    assert [row[4] for row in zh.rows] == ["是", "否"] and [row[0] for row in zh.rows] == ["C01", "C04"]
    href = re.compile(r'<a class="mg-csv" download="[^"]+" href="[^"]+"')
    assert href.findall(parts["en"]) == href.findall(parts["zh"])  # the same CSV: snake_case headers, full precision
    assert "下载此表（CSV）" in parts["zh"] and "Download this table (CSV)" in parts["en"]
    assert 'id="claims"' in parts["en"] and 'id="claims-zh"' in parts["zh"]


def test_data_cells_stay_as_they_are_in_chinese():
    """Only the label columns are translated: a cell of another column that happens to be a word is data."""
    frame = pd.DataFrame({"id": ["C01"], "verdict": ["holds"], "unit": ["holds"]})
    zh = parse(editions_parts(tables.editions_html(frame, csv_name="t", label_columns=["verdict"]))["zh"])
    assert zh.rows == [["C01", "成立", "holds"]]


def test_a_header_without_chinese_is_an_error_not_english_in_the_chinese_edition():
    frame = pd.DataFrame({"no_such_words_anywhere": [1.0]})
    assert tables.table_html(frame, csv_name="t")  # English: fine
    with pytest.raises(LookupError, match="No such words anywhere"):
        tables.editions_html(frame, csv_name="t")


def test_show_table_and_the_dataframe_formatter_make_both_editions(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    tables.show_table(verdict_frame(), key=["id"], csv_name="t", label_columns=["verdict"], editions=True)
    assert [obj.data for obj in shown] == [tables.editions_html(verdict_frame(), key=["id"], csv_name="t",
                                                                label_columns=["verdict"])]


def test_years_and_whole_numbers_read_as_people_write_them():
    """A year has no thousands separator; a float column of whole numbers shows none of its zero decimals; a
    column whose decimals are set keeps them, and a column with a fraction keeps two."""
    frame = pd.DataFrame({"name": ["a", "b"], "year": [2016, 2024], "gpus": [8.0, 16.0], "price": [2.0, 2.5],
                          "fixed": [3.0, 4.0]})
    page = parse(table_html(frame, key=["name"], csv_name="t", digits={"fixed": 2}))
    assert [row[1:] for row in page.rows] == [["2016", "8", "2.00", "3.00"], ["2024", "16", "2.50", "4.00"]]


def test_a_model_estimate_shows_three_significant_figures():
    """An estimate the model gives to about 8 % shows no more than three figures (11,333.16 as 11,300); the
    CSV download keeps every digit."""
    assert [tables.estimate_text(x) for x in (11333.16, 24.51, 3.2145, 0.01234)] == ["11,300", "24.5", "3.21",
                                                                                      "0.0123"]
    assert tables.estimate_text(float("nan")) == tables.MISSING and tables.estimate_text(math.inf) == "∞"
    frame = pd.DataFrame({"k": ["a", "b"], "cost_usd": [11333.16, 24.51]})
    html = table_html(frame, key=["k"], csv_name="t", estimates=["cost_usd"])
    assert [row[1] for row in parse(html).rows] == ["11,300", "24.5"] and "11333.16" in tables.csv_text(frame)


def _head_min_widths(html_text: str) -> list[float]:
    return [float(w) for w in re.findall(r'<th scope="col"[^>]*?style="min-width:([0-9.]+)em"', html_text)]


def test_a_narrow_table_shares_out_the_column_and_a_wide_one_keeps_its_headers_readable():
    long = "the all reduce rate in GB per s of a switch of eight GPUs on one board, as measured"  # short words
    narrow = pd.DataFrame({"gpus": [2, 4, 8], **{f"{long} {i}": [1.0, 2.0, 3.0] for i in range(6)}})
    heads = _head_min_widths(table_html(narrow, key=["gpus"], csv_name="t"))
    key_em = float(re.search(r"width:([0-9.]+)em", table_html(narrow, key=["gpus"], csv_name="t")).group(1))
    assert len(heads) == 6 and key_em + sum(heads) + 1.2 * 6 <= tables._FIT_EM + 0.5  # 7 columns fit (0.1 em roundings)
    wide = pd.DataFrame({f"{long} {i}": [1.0] for i in range(9)})
    assert _head_min_widths(table_html(wide, csv_name="t")) == [tables._head_width_em(header(f"{long} {i}")) for i in range(9)]
    short = pd.DataFrame({"a": [1], "b": [2]})  # room to spare: each header as asked
    assert _head_min_widths(table_html(short, csv_name="t")) == [tables._head_width_em(header(c)) for c in "ab"]


def test_a_narrow_table_of_long_words_still_renders_and_its_keys_give_way():
    words = pd.DataFrame({"configuration": ["a-very-long-configuration-name-without-spaces"] * 2,
                          **{f"Interconnection{i}": [1.0, 2.0] for i in range(7)}})
    page = table_html(words, key=["configuration"], csv_name="t")
    key_em = float(re.search(r"width:([0-9.]+)em", page).group(1))
    assert tables._KEY_FLOOR_EM <= key_em < tables._key_width_em(["a-very-long-configuration-name-without-spaces"])


def test_a_narrow_table_whose_header_words_cannot_fit_lets_them_break():
    words = pd.DataFrame({f"Hypothetically-interconnected bandwidth {i}": [1.0] for i in range(7)})
    assert 'class="mg-table-grid mg-tight"' in table_html(words, csv_name="t")
    assert "mg-table-grid.mg-tight th{overflow-wrap:anywhere}" in table_html(words, csv_name="t")
    assert 'class="mg-table-grid"' in table_html(pd.DataFrame({"a": [1.0], "b": [2.0]}), csv_name="t")


def test_a_value_with_its_interval_beside_it_shows_as_one_range_and_the_csv_keeps_the_bounds():
    """Issue 44: tables print "x (lo–hi)" with an en dash; the bounds' own columns are not shown, the download
    keeps every number, a missing value stays a dash, and a table without bounds is unchanged."""
    df = pd.DataFrame({"gpus": [2, 8, 16], "busbw_GBps": [369.6, 475.4, math.nan],
                       "busbw_GBps_lo": [172.9, 222.4, math.nan], "busbw_GBps_hi": [433.6, 557.7, math.nan]})
    assert tables.ranged_columns(df) == ["busbw_GBps"]
    html_text = table_html(df, csv_name="t", ranges=True)
    out = parse(html_text)
    assert out.heads == ["GPUs", "Bus bandwidth (GB/s)"]
    assert [r[1] for r in out.rows] == ["370 (173–434)", "475 (222–558)", MISSING]
    name, payload = csv_of(html_text)
    assert payload.decode().splitlines()[0] == "gpus,busbw_GBps,busbw_GBps_lo,busbw_GBps_hi"
    assert len(parse(table_html(df, csv_name="t")).heads) == 4  # without ranges, every column as it is
    plain = df.drop(columns=["busbw_GBps_lo"])
    assert tables.ranged_columns(plain) == [] and tables.fold_ranges(plain).equals(plain)
