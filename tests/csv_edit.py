"""Test helper: copy a packaged CSV with some cells changed (to build malformed inputs)."""

import csv
from pathlib import Path


def rewrite_row(src: Path, dst: Path, row_id: str, **changes: str) -> Path:
    """Copy the CSV ``src`` to ``dst`` with the cells ``changes`` of the row whose ``id`` is ``row_id`` replaced."""
    with open(src, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if row["id"] == row_id:
            row.update(changes)
    with open(dst, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return dst
