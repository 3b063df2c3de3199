"""Every data file goes through the one CSV reader (multigpu.common.datafiles).

A bad copy of each file is reported at its file, line and column, printed as
``<file>:<line>: column '<col>': ...``; a copy saved by a spreadsheet (UTF-8
with BOM, CRLF line ends) loads the same as the original.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from multigpu.comm import calibration
from multigpu.common.errors import InputError
from multigpu.compute import efficiency, models
from multigpu.evidence import claims, measurements
from multigpu.hardware import catalog
from multigpu.market import workloads

#: data file -> (the packaged file, its loader, which takes the path of a copy)
FILES: dict[str, tuple[Path, Callable]] = {
    "links": (catalog.LINKS_CSV, catalog.load_links),
    "gpus": (catalog.GPUS_CSV, catalog.load_gpus),
    "systems": (catalog.SYSTEMS_CSV, catalog.load_systems),
    "models": (models.MODELS_CSV, models._load),
    "compute_efficiency": (efficiency.EFFICIENCY_CSV, efficiency.constants),
    "cost_workloads": (workloads.WORKLOADS_CSV, workloads.load_workloads),
    "measurements": (measurements.MEASUREMENTS_CSV, measurements.measurements),
    "out_of_sample": (measurements.OUT_OF_SAMPLE_CSV, measurements._load_out_of_sample),
    "claims": (claims.CLAIMS_CSV, claims.seed_claims),
    "calibration": (calibration.CALIBRATION_CSV, calibration.load),
}

Table = list[list[str]]  # the file's lines (header = line 1 = table[0]) as cells


# ---------------------------------------------------------- edits of a copy


def set_cell(line: int, column: str, text: str) -> Callable[[Table], None]:
    """Set the cell of ``column`` on ``line`` (line 1: rename the column)."""
    def edit(table: Table) -> None:
        table[line - 1][table[0].index(column)] = text
    return edit


def copy_line(source: int, line: int) -> Callable[[Table], None]:
    """Make ``line`` a copy of line ``source`` (a duplicate row)."""
    def edit(table: Table) -> None:
        table[line - 1] = list(table[source - 1])
    return edit


def drop_column(column: str) -> Callable[[Table], None]:
    """Remove ``column`` from every line."""
    def edit(table: Table) -> None:
        index = table[0].index(column)
        for cells in table:
            del cells[index]
    return edit


# (file, edit, line, column, part of the message)
BAD = [
    ("links", set_cell(3, "per_link_GBps_per_dir", "25 GB/s"), 3, "per_link_GBps_per_dir", "is not a number"),
    ("links", set_cell(2, "source", ""), 2, "source", "is empty"),
    ("links", set_cell(2, "source", "vendor slides"), 2, "source", "names no URL"),
    ("links", set_cell(2, "category", "nvlinkk"), 2, "category", "is not one of"),
    ("links", set_cell(2, "in_network_reduction", "yes"), 2, "in_network_reduction", "is not true or false"),
    ("links", set_cell(2, "id", "NVLink1"), 2, "id", "is not a lower-case id"),
    ("links", copy_line(2, 4), 4, "id", "duplicate link"),
    ("links", drop_column("category"), 1, "category", "is missing"),
    ("links", set_cell(1, "notes", "remarks"), 1, "remarks", "unknown column"),
    ("gpus", set_cell(2, "memory_GB", ""), 2, "memory_GB", "is empty"),
    ("gpus", set_cell(2, "arch", "hoper"), 2, "arch", "is not one of"),
    ("gpus", set_cell(3, "nvlink", "nvlink9"), 3, "nvlink", "unknown link 'nvlink9'"),
    ("gpus", copy_line(2, 3), 3, "id", "duplicate GPU"),
    ("systems", set_cell(2, "gpus_per_node", "eight"), 2, "gpus_per_node", "is not a whole number"),
    ("systems", set_cell(2, "topology", "fat-tree"), 2, "topology", "is not one of"),
    ("systems", set_cell(2, "gpu", "h100"), 2, "gpu", "unknown gpu 'h100'"),
    ("systems", drop_column("pcie"), 1, "pcie", "is missing"),
    ("models", set_cell(2, "layers", "4x8"), 2, "layers", "is not a whole number"),
    ("models", set_cell(3, "attention", "sparse"), 3, "attention", "is not one of"),
    ("models", set_cell(2, "source", ""), 2, "source", "is empty"),
    ("models", set_cell(2, "kv_heads", "7"), 2, "kv_heads", "does not divide heads"),
    ("models", copy_line(2, 3), 3, "id", "duplicate model"),
    ("models", drop_column("vocab"), 1, "vocab", "is missing"),
    ("compute_efficiency", set_cell(2, "value", "high"), 2, "value", "is not a number"),
    ("compute_efficiency", set_cell(3, "value", "0"), 3, "value", "is not above 0"),
    ("compute_efficiency", set_cell(2, "parameter", "gemm_eff"), 2, "parameter", "is not one of"),
    ("compute_efficiency", copy_line(2, 3), 3, "parameter", "duplicate constant"),
    ("compute_efficiency", drop_column("value"), 1, "value", "is missing"),
    ("cost_workloads", set_cell(3, "kind", "tune"), 3, "kind", "is not one of"),
    ("cost_workloads", set_cell(2, "gpus", ""), 2, "gpus", "is empty"),
    ("cost_workloads", set_cell(2, "seq", "4k"), 2, "seq", "is not a whole number"),
    ("cost_workloads", set_cell(2, "model", "llama-9000"), 2, "model", "unknown model 'llama-9000'"),
    ("cost_workloads", copy_line(2, 3), 3, "id", "duplicate workload"),
    ("cost_workloads", drop_column("dtype"), 1, "dtype", "is missing"),
    ("measurements", set_cell(2, "id", "eight"), 2, "id", "is not a whole number"),
    ("measurements", set_cell(2, "kind", "rumour"), 2, "kind", "is not one of"),
    ("measurements", set_cell(2, "source", ""), 2, "source", "is empty"),
    ("measurements", copy_line(2, 3), 3, "id", "duplicate measurement"),
    ("measurements", drop_column("metric"), 1, "metric", "is missing"),
    ("out_of_sample", set_cell(2, "bytes", "8 GiB"), 2, "bytes", "is not a whole number"),
    ("out_of_sample", set_cell(2, "measured_busbw_GBps", ""), 2, "measured_busbw_GBps", "is empty"),
    ("out_of_sample", set_cell(2, "variant", "{nics: 4}"), 2, "variant", "is not JSON"),
    ("out_of_sample", copy_line(2, 3), 3, "check", "duplicate check"),
    ("out_of_sample", drop_column("tolerance"), 1, "tolerance", "is missing"),
    ("claims", set_cell(2, "id", "C1"), 2, "id", "'C1' is not allowed"),
    ("claims", set_cell(2, "claim_en", ""), 2, "claim_en", "is empty"),
    ("claims", copy_line(2, 3), 3, "id", "duplicate claim"),
    ("claims", drop_column("source"), 1, "source", "is missing"),
    ("calibration", set_cell(2, "value", "fast"), 2, "value", "is not a number"),
    ("calibration", set_cell(2, "unit", ""), 2, "unit", "is empty"),
    ("calibration", copy_line(2, 3), 3, "key", "duplicate constant"),
    ("calibration", drop_column("value"), 1, "value", "is missing"),
]


def _table(path: Path) -> Table:
    text = path.read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text, newline="")))
    assert len(table) == text.count("\n"), "a cell spans lines: line numbers below would be off"
    return table


def _write(path: Path, table: Table) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(table)
    return path


@pytest.mark.parametrize(("name", "edit", "line", "column", "message"), BAD,
                         ids=[f"{name}:{line}:{column}:{message}" for name, _, line, column, message in BAD])
def test_a_bad_copy_is_reported_at_file_line_and_column(tmp_path, name, edit, line, column, message):
    original, load = FILES[name]
    table = _table(original)
    edit(table)
    path = _write(tmp_path / original.name, table)
    with pytest.raises(InputError) as caught:
        load(path)
    error = caught.value
    assert (error.file, error.line, error.column) == (str(path), line, column)
    assert message in error.message
    assert error.lines()[0] == f"{path}:{line}: column '{column}': {error.message}"
    assert "\n" not in str(error)


def test_every_file_has_bad_copies():
    assert {name for name, *_ in BAD} == set(FILES)


def _same(a, b) -> bool:
    return a.equals(b) if isinstance(a, pd.DataFrame) else a == b


@pytest.mark.parametrize("name", FILES)
def test_a_copy_with_bom_and_crlf_loads_the_same(tmp_path, name):
    original, load = FILES[name]
    text = original.read_text(encoding="utf-8")
    assert "\r" not in text and _table(original)
    path = tmp_path / original.name
    path.write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8"))
    assert path.read_bytes().startswith(b"\xef\xbb\xbf") and b"\r\n" in path.read_bytes()
    assert _same(load(path), load(original))
