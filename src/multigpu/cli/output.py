"""Render command results as a table, JSON or CSV (the CLI's ``--format``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from multigpu.common.csvout import csv_cell

FORMATS = ("table", "json", "csv")
Row = Mapping[str, Any]


def render(result: Row | Sequence[Row], fmt: str) -> str:
    """Render one object or a list of objects (flat dicts) in ``fmt``."""
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False, default=_jsonable)
    rows = [result] if isinstance(result, Mapping) else list(result)
    if fmt == "csv":
        return _csv(rows)
    return _table(rows)


def _jsonable(value: Any) -> Any:
    """Turn numpy scalars and other simple objects into JSON values."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _columns(rows: Sequence[Row]) -> list[str]:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    return columns


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=_jsonable)
    return "" if value is None else str(value)


def _csv(rows: Sequence[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_columns(rows), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    return buffer.getvalue().rstrip("\n")


def _table(rows: Sequence[Row]) -> str:
    columns = _columns(rows)
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


class Failed:
    """What a handler returns for a result that fails the check it was asked for (``validate --strict``): printed
    as usual, then exit status 1 (:data:`multigpu.cli.app.EXIT_CHECK_FAILED`)."""

    def __init__(self, result: object) -> None:
        self.result = result
