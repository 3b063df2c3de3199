"""Every count the data notes state is the count of the data files they describe.

``data/SWEEPS-NOTES.md`` is checked whole: each source section's heading (``## ... (N sweeps, M points)``),
each table row's ``sweeps`` and ``points`` cells, the split written after each sweep id (in bold), the totals
tables by split, fabric and collective, and every other "N sweeps/points/rows" it states. Each sweep of
``sweeps_index.csv`` must be listed in exactly one row. ``data/RUNS-NOTES.md`` is checked on its headings
(``## `file.csv` (N rows ...)``), its per-source table counts and the counts in its text; any such heading in
``data/CATALOG-NOTES.md`` is checked the same way. A count phrase that no check covers fails the test, so a
new count cannot go in unchecked.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import cache

import pandas as pd
import pytest

from multigpu.common.datafiles import DATA_DIR

SWEEPS_NOTES = "SWEEPS-NOTES.md"
RUNS_NOTES = "RUNS-NOTES.md"
CATALOG_NOTES = "CATALOG-NOTES.md"

#: a section heading that states its counts: ``## Title (149 sweeps, 3,040 points)``
SECTION = re.compile(r"^## (?P<title>.+?) \((?P<sweeps>[\d,]+) sweeps, (?P<points>[\d,]+) points\)$", re.M)
#: a sweep listed in a table row: its id in bold code, then its split in brackets
LISTED = re.compile(r"\*\*`(?P<id>[^`]+)`\*\*(?: \((?P<split>[a-z0-9]+)\b)?")
#: a sentence of a SWEEPS-NOTES row that counts points shared with measurements.csv
SHARED = re.compile(r"(?P<n>\d+) of these points are also rows of `measurements\.csv`")
#: ``## `file.csv` (N rows`` in any of the notes
FILE_HEADING = re.compile(r"^## `(?P<file>[\w.-]+\.csv)` \((?P<n>[\d,]+) rows\b", re.M)
#: any count of sweeps, points or rows the text states (up to three words between the number and the noun; a
#: number followed by a unit is a size or a time, as in "the 512 B row", not a count)
COUNT_PHRASE = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?![\d,])"  # a number, not part of a word or decimal
                          r"(?! (?:B|KiB|MiB|GiB|KB|MB|GB|us|ms)\b)"  # not a size or a time
                          r"(?: [A-Za-z][\w./-]*){0,3} (?:sweeps?|points?|rows?)\b")


def _int(text: str) -> int:
    return int(text.replace(",", ""))


@cache
def _text(name: str) -> str:
    return (DATA_DIR / name).read_text(encoding="utf-8")


@cache
def _csv(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / name)


def _index() -> pd.DataFrame:
    """``sweeps_index.csv`` with each sweep's number of points."""
    index = _csv("sweeps_index.csv").copy()
    index["points"] = index["sweep"].map(_csv("sweeps.csv").groupby("sweep").size()).fillna(0).astype(int)
    return index


def _sections(text: str) -> list[tuple[re.Match, str]]:
    """Each counted section heading with the text up to the next ``## `` heading."""
    out = []
    for heading in SECTION.finditer(text):
        following = re.search(r"^## ", text[heading.end():], re.M)
        end = heading.end() + following.start() if following else len(text)
        out.append((heading, text[heading.end():end]))
    return out


def _rows(body: str) -> list[list[str]]:
    """The cells of every table row in ``body``, header and separator rows left out."""
    rows = []
    for line in body.splitlines():
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if set(cells[0]) <= set("- ") or cells[1] in ("sweeps", "rows"):
            continue
        rows.append(cells)
    return rows


def _uncovered(text: str, patterns: list[re.Pattern]) -> list[str]:
    """The count phrases of ``text`` that no match of ``patterns`` covers."""
    spans = [m.span() for p in patterns for m in p.finditer(text)]
    return [m.group() for m in COUNT_PHRASE.finditer(text)
            if not any(a <= m.start() and m.end() <= b for a, b in spans)]


# ----------------------------------------------------------------------------- SWEEPS-NOTES.md


def _source_sections() -> list[tuple[re.Match, str]]:
    return [(h, body) for h, body in _sections(_text(SWEEPS_NOTES)) if h["title"] != "Totals"]


def test_the_sweeps_notes_have_counted_sections():
    titles = [h["title"] for h, _ in _sections(_text(SWEEPS_NOTES))]
    assert titles[0] == "Totals" and len(titles) >= 10


def test_every_sweep_is_listed_once_with_its_split():
    index = _index().set_index("sweep")
    listed = [m for _, body in _source_sections() for m in LISTED.finditer(body)]
    counts = Counter(m["id"] for m in listed)
    assert not [name for name in counts if name not in index.index], "listed but not in sweeps_index.csv"
    assert not [name for name, n in counts.items() if n > 1], "listed more than once"
    assert not [name for name in index.index if name not in counts], "in sweeps_index.csv but not listed"
    wrong = {m["id"]: (m["split"], index.loc[m["id"], "split"]) for m in listed
             if m["split"] != index.loc[m["id"], "split"]}
    assert not wrong, f"split written (or missing) -> split in sweeps_index.csv: {wrong}"


def test_each_row_counts_its_sweeps_and_points():
    points = _index().set_index("sweep")["points"]
    checked = 0
    for heading, body in _source_sections():
        for cells in _rows(body):
            names = [m["id"] for m in LISTED.finditer(" | ".join(cells))]
            assert names, f"{heading['title']}: a row lists no sweep: {cells[0]}"
            assert (_int(cells[1]), _int(cells[2])) == (len(names), int(points[names].sum())), \
                f"{heading['title']}: {cells[0]}"
            checked += 1
    assert checked >= 20


def test_each_section_heading_counts_its_sweeps_and_points():
    points = _index().set_index("sweep")["points"]
    for heading, body in _source_sections():
        names = [m["id"] for m in LISTED.finditer(body)]
        rows = _rows(body)
        assert (_int(heading["sweeps"]), _int(heading["points"])) == (len(names), int(points[names].sum())), \
            heading["title"]
        assert _int(heading["sweeps"]) == sum(_int(cells[1]) for cells in rows), heading["title"]
        assert _int(heading["points"]) == sum(_int(cells[2]) for cells in rows), heading["title"]


def test_the_totals_match_the_files():
    index = _index()
    heading, body = _sections(_text(SWEEPS_NOTES))[0]
    assert (_int(heading["sweeps"]), _int(heading["points"])) == (len(index), len(_csv("sweeps.csv")))
    tables = {"split": index["split"], "fabric": index["fabric"].fillna("(empty)"), "op": index["op"]}
    seen = Counter()
    for block in re.split(r"\n\s*\n", body):
        header = re.match(r"\| (\w+) \| sweeps \| points \|", block.strip())
        if not header:
            continue
        key = tables[header.group(1)]
        stated = {cells[0]: (_int(cells[1]), _int(cells[2])) for cells in _rows(block)}
        actual = {k: (int(n), int(index.loc[key == k, "points"].sum())) for k, n in key.value_counts().items()}
        assert stated == actual, header.group(1)
        seen[header.group(1)] += 1
    assert seen == Counter(tables.keys())


def test_points_shared_with_measurements():
    """The ml-engineering H200 torch.distributed points that ``measurements.csv`` also holds (same size and
    busbw)."""
    found = SHARED.findall(_text(SWEEPS_NOTES))
    assert len(found) == 1
    sweep = _csv("sweeps.csv").query("sweep == 'h200-8-ar-torch-mleng'")
    measured = _csv("measurements.csv")
    measured = measured[measured["source"].str.contains("stas00/ml-engineering", na=False)
                        & measured["benchmark"].str.contains("all_reduce_bench", na=False)]
    measured = measured.assign(value=pd.to_numeric(measured["value"], errors="coerce"))
    shared = measured.merge(sweep, left_on=["bytes", "value"], right_on=["bytes", "busbw_GBps"])
    assert int(found[0]) == len(shared)


def test_every_sweep_id_the_notes_name_exists():
    """A sweep id in code quotes (a cross-reference, not a listing) names a sweep of ``sweeps_index.csv``."""
    names = set(_index()["sweep"])
    for name in (SWEEPS_NOTES, CATALOG_NOTES):
        quoted = set(re.findall(r"`([a-z0-9]+-\d+-[a-z0-9.-]+)`", _text(name)))
        looks_like_a_sweep = {q for q in quoted if re.search(r"-(ar|ag|rs|sendrecv)-", q)}
        assert looks_like_a_sweep <= names, (name, sorted(looks_like_a_sweep - names))


def test_every_count_in_the_sweeps_notes_is_checked():
    assert _uncovered(_text(SWEEPS_NOTES), [SECTION, SHARED]) == []


# ----------------------------------------------------------------------------- RUNS-NOTES.md, CATALOG-NOTES.md


@pytest.mark.parametrize("name", [RUNS_NOTES, CATALOG_NOTES])
def test_file_headings_count_their_rows(name):
    for heading in FILE_HEADING.finditer(_text(name)):
        assert _int(heading["n"]) == len(_csv(heading["file"])), heading.group()
    if name == RUNS_NOTES:
        assert len(FILE_HEADING.findall(_text(name))) == 8


#: each table row of RUNS-NOTES.md, by a text its source cell holds -> a text of the rows' ``source`` URL
RUNS_TABLES = {
    "gemm_throughput.csv": {"Maximum Achievable Matmul": "stas00/ml-engineering",
                            "GitHub issues #79": "torch-performance-test-data/issues/",
                            "`database.md`": "torch-performance-test-data/blob/main/database.md",
                            "DeepGEMM `README.md`": "deepseek-ai/DeepGEMM/blob",
                            "DeepGEMM pull request": "deepseek-ai/DeepGEMM/pull"},
    "training_runs.csv": {"Megatron-Bridge": "NVIDIA-NeMo/Megatron-Bridge",
                          "NVIDIA/NeMo `": "github.com/NVIDIA/NeMo/",
                          "docs.nvidia.com": "docs.nvidia.com/nemo-framework",
                          "dgxc-benchmarking": "NVIDIA/dgxc-benchmarking",
                          "Megatron-LM": "NVIDIA/Megatron-LM",
                          "llm-foundry": "mosaicml/llm-foundry",
                          "glennklockwood": "glennklockwood.com",
                          "DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
                          "Lambda's": "lambdal/deeplearning-benchmark",
                          "pytorch/torchtitan": "pytorch/torchtitan"},
    "decode_latency.csv": {"lmdeploy": "InternLM/lmdeploy", "gpt-fast": "pytorch-labs/gpt-fast"},
    "ep_kernels.csv": {"Normal kernels": "Normal kernels", "Low-latency kernels": "Low-latency kernels",
                       "`README.md`": "README.md"},
}


@pytest.mark.parametrize("file", RUNS_TABLES)
def test_runs_notes_table_counts(file):
    text = _text(RUNS_NOTES)
    heading = re.search(rf"^## `{re.escape(file)}`.*$", text, re.M)
    following = re.search(r"^## ", text[heading.end():], re.M)
    body = text[heading.end(): heading.end() + following.start() if following else len(text)]
    data = _csv(file)
    keys = RUNS_TABLES[file]
    rows = [cells for cells in _rows(body) if re.match(r"\d+\b", cells[1])]
    assert len(rows) == len(keys)
    for cells in rows:
        matching = [key for key in keys if key in cells[0]]
        assert len(matching) == 1, cells[0]
        expected = int(data["source"].str.contains(keys[matching[0]], regex=False).sum())
        assert int(re.match(r"\d+", cells[1]).group()) == expected, cells[0]
    assert sum(int(re.match(r"\d+", cells[1]).group()) for cells in rows) == len(data)


def _serving(source: str | None = None, kind: str | None = None, metric: str | None = None) -> pd.DataFrame:
    data = _csv("serving_runs.csv")
    if source:
        data = data[data["source"].str.contains(source, regex=False)]
    if kind:
        data = data[data["kind"] == kind]
    if metric:
        data = data[data["metric"].str.fullmatch(metric)]
    return data


#: the GPUs RUNS-NOTES.md counts training rows of, as it writes them (longest first, so that a prefix never wins)
_GPU_WORDS = "A100-PCIe-40|A100-PCIe|A100-40|A100|H100-PCIe|H100|RTX-4090|V100-PCIe|GB200|B200|H800|H200"


def _training_by_gpu_and_dtype(match: re.Match) -> list[int]:
    gpus = {"A100": "a100-sxm4-80gb", "A100-40": "a100-sxm4-40gb", "A100-PCIe": "a100-pcie-80gb",
            "A100-PCIe-40": "a100-pcie-40gb", "H100": "h100-sxm", "H100-PCIe": "h100-pcie", "RTX-4090": "rtx-4090",
            "V100-PCIe": "v100-pcie", "B200": "b200", "GB200": "gb200", "H800": "h800-sxm", "H200": "h200-sxm"}
    data = _csv("training_runs.csv")
    pairs = re.findall(rf"({_GPU_WORDS})\s+(FP16|BF16|FP8|TF32|FP32)\s+\d+", match.group())
    counts = [int(((data["gpu"] == gpus[g]) & (data["dtype"] == d.lower())).sum()) for g, d in pairs]
    assert sum(counts) == len(data), "the per-GPU counts do not cover every row"
    return counts


_LATENCY = r"ttft.*|tpot.*"
#: TensorRT-LLM v0.5/v0.6 `docs/source/performance.md`
TRT_LLM_V05 = "TensorRT-LLM/blob/main/docs/source/performance.md"

#: a count stated in the text of RUNS-NOTES.md -> the counts (one per group of the pattern) the files give
RUNS_TEXT: dict[str, tuple[re.Pattern, Callable[[re.Match], list[int]]]] = {
    "script-checked training rows": (
        re.compile(r"llm-foundry\s+README: (\d+) rows\)"),
        lambda m: [int(_csv("training_runs.csv")["source"].str.contains(
            "Megatron-Bridge|github.com/NVIDIA/NeMo/|dgxc-benchmarking|llm-foundry|pytorch/torchtitan").sum())]),
    "training per GPU and dtype": (
        re.compile(rf"Per GPU and dtype:(?:\s+(?:{_GPU_WORDS})\s+(?:FP16|BF16|FP8|TF32|FP32)\s+\d+[,;.])+"),
        lambda m: _training_by_gpu_and_dtype(m)),
    "MLPerf rows": (re.compile(r"### \(a\) MLPerf Inference: (\d+) rows"),
                    lambda m: [len(_serving(kind="mlperf"))]),
    "vendor rows": (re.compile(r"### \(b\) Vendor and framework pages: (\d+) rows"),
                    lambda m: [len(_serving(kind="vendor-page"))]),
    "perf-overview rows": (re.compile(r"- (\d+) rows\. There is no latency and no batch size\."),
                           lambda m: [int((_serving("performance/perf-overview.md", kind="vendor-page")["gpu"]
                                           != "rtx-pro-6000").sum())]),
    "perf-overview RTX PRO 6000 rows": (re.compile(r"(\d+) rows on the\s+RTX PRO 6000"),
                                        lambda m: [int((_serving(kind="vendor-page")["gpu"] == "rtx-pro-6000").sum())]),
    "TensorRT-LLM release rows": (re.compile(r"### \(c\) TensorRT-LLM performance pages across releases: (\d+) rows"),
                                  lambda m: [len(_serving(kind="trtllm-perf"))]),
    "TensorRT-LLM release L40S rows": (re.compile(r"(\d+) rows on L40S"),
                                       lambda m: [int((_serving(kind="trtllm-perf")["gpu"] == "l40s").sum())]),
    "TensorRT-LLM TTFT rows": (re.compile(r"\((\d+) TTFT rows\)"),
                               lambda m: [len(_serving(TRT_LLM_V05, metric="ttft"))]),
    "TensorRT-LLM throughput rows": (re.compile(r"with its batch sizes \((\d+) rows\)"),
                                     lambda m: [len(_serving(TRT_LLM_V05, metric="tokens_per_s.*"))]),
    "NIM rows": (re.compile(r"concurrencies 1 to 250: (\d+) rows\. "
                            r"The first row of the 500/2000 table adds (\d+) rows"),
                 lambda m: [int((_serving("nim/")["input_tokens"] == 5000).sum()),
                            int((_serving("nim/")["input_tokens"] == 500).sum())]),
    "latency rows": (re.compile(r"(\d+) MLPerf rows plus (\d+) TensorRT-LLM batch-1 TTFT rows plus (\d+) NIM rows"),
                     lambda m: [len(_serving(kind="mlperf", metric=_LATENCY)),
                                len(_serving(TRT_LLM_V05, metric=_LATENCY)),
                                len(_serving("nim/", metric=_LATENCY))]),
    "decode split": (re.compile(r"\((\d+) fit, (\d+) holdout, (\d+) sealed\)"),
                     lambda m: [int((_csv("decode_latency.csv")["split"] == s).sum())
                                for s in ("fit", "holdout", "sealed")]),
}


RUNS_TEXT["rows stating the engine's max_num_tokens"] = (
    re.compile(r"the (\d+) TensorRT-LLM v0\.10 rows"),
    lambda m: [int((_csv("serving_runs.csv")["max_num_tokens"].notna()
                    & _csv("serving_runs.csv")["source"].str.contains("v0.10.0")).sum())])
RUNS_TEXT["rows whose engine limits trtllm-bench set"] = (
    re.compile(r"00f37686 pages \((\d+) of the file's"),
    lambda m: [int((_csv("serving_runs.csv")["engine_limits"] == "trtllm-bench").sum())])
RUNS_TEXT["rows stating their request counts"] = (
    re.compile(r"00f37686 pages \((\d+) rows; 30000 at[\s\S]*?--num-requests=2000` \((\d+) rows\)"),
    lambda m: [int(((_csv("serving_runs.csv")["engine_limits"] == "trtllm-bench")
                    & _csv("serving_runs.csv")["requests"].notna()).sum()),
               int((_csv("serving_runs.csv")["requests"] == 2000).sum())])
RUNS_TEXT["expert-parallel rows by split"] = (
    re.compile(r"`int\(sha256\(id\)\) % 3`: (\d+) fit, (\d+) holdout and (\d+) sealed rows"),
    lambda m: [int((_csv("ep_kernels.csv")["split"] == s).sum()) for s in ("fit", "holdout", "sealed")])
RUNS_TEXT["layout sweeps by split"] = (
    re.compile(r"as the training runs are: (\d+) fit, (\d+) held out and (\d+) sealed sweeps"),
    lambda m: [int((_csv("layout_sweeps_index.csv")["split"] == s).sum()) for s in ("fit", "holdout", "sealed")])


@pytest.mark.parametrize("what", RUNS_TEXT)
def test_runs_notes_text_counts(what):
    pattern, expected = RUNS_TEXT[what]
    found = list(pattern.finditer(_text(RUNS_NOTES)))
    assert len(found) == 1, f"'{what}' is stated {len(found)} times; expected once"
    match = found[0]
    if what == "training per GPU and dtype":
        stated = [int(n) for n in re.findall(r"(?:FP16|BF16|FP8|TF32|FP32)\s+(\d+)", match.group())]
    else:
        stated = [int(g) for g in match.groups()]
    assert stated == expected(match)


def test_every_count_in_the_runs_notes_is_checked():
    patterns = [FILE_HEADING] + [pattern for pattern, _ in RUNS_TEXT.values()]
    assert _uncovered(_text(RUNS_NOTES), patterns) == []


def test_every_count_in_the_catalog_notes_is_checked():
    assert _uncovered(_text(CATALOG_NOTES), [FILE_HEADING]) == []
