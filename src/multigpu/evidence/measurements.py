"""Published measurements against the model: the rows, what the model predicts for each, and its error.

``data/measurements.csv`` holds published measurements (each row with its
public source) with how the model reproduces each (``system_id, op,
algorithm, model_gpus, model_nodes, bytes, metric, harness, model_value``);
rows without a ``metric`` are not collectives (training runs, ...).
``data/out_of_sample.csv`` holds published collective measurements that are
not in that file and that no constant was fitted on.

:func:`compare` returns the model's prediction and relative error for every
measured collective row, :func:`summary` condenses it, :func:`out_of_sample`
checks the model against the out-of-sample rows. Every function takes the
calibration to judge (default: the shipped one).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from multigpu.comm import calibration, collectives, copies
from multigpu.comm.calibration import Calibration
from multigpu.common import datafiles
from multigpu.common.datafiles import (
    DATA_DIR,
    JsonObject,
    Positive,
    PositiveCount,
    Text,
    one_of,
)
from multigpu.common.errors import InputError
from multigpu.hardware import catalog, wiring

MEASUREMENTS_CSV = DATA_DIR / "measurements.csv"
OUT_OF_SAMPLE_CSV = DATA_DIR / "out_of_sample.csv"
LARGE_BYTES = 64 * 2**20  #: rows at or above this size are "large" (bandwidth-bound)
_BANDWIDTH_METRICS = ("p2p_uni", "p2p_bidir", "h2d", "nic_rate")  # steady-state rates: always "large"


#: What a row of ``data/measurements.csv`` is: a measurement, or a vendor's figure of some kind.
KINDS = ("measured", "vendor-claim", "vendor-modeled", "vendor-presentation", "vendor (user) statement")


class MeasurementRow(datafiles.Row):
    """Schema of ``data/measurements.csv``: the published figure, then how the model reproduces it
    (``system_id`` ... ``model_note``, empty for rows that are not collectives). Cells are text."""

    id: PositiveCount
    kind: one_of(KINDS)  # type: ignore[valid-type]
    system: str | None
    interconnect: str | None
    benchmark: str | None
    collective_or_metric: str | None
    message_size: str | None
    gpus: str | None
    nodes: str | None
    value: str | None
    unit: str | None
    source: Text
    conditions: str | None
    system_id: str | None
    op: str | None
    algorithm: str | None
    model_gpus: str | None
    model_nodes: str | None
    bytes: str | None
    metric: str | None
    harness: str | None
    model_value: str | None
    model_unit: str | None
    model_note: str | None

    NOUN = "measurement"
    EXPECTED = {"id": "a whole number >= 1", "source": "where the figure was published"}


def measurements(path: Path = MEASUREMENTS_CSV) -> pd.DataFrame:
    """``data/measurements.csv``: the published measurements with their source, kind, conditions,
    and how the model reproduces each (``system_id, op, algorithm, model_gpus, model_nodes, bytes,
    metric, harness, model_value``); rows without a ``metric`` are not collectives (training runs...).
    Every column is text (empty cells "") but ``id``, an int."""
    rows = datafiles.read(path, MeasurementRow, unique=("id",))
    return pd.DataFrame([{column: value if column == "id" else str(value or "") for column, value in row}
                         for _, row in rows])


def predict(row: Mapping[str, str], cal: Calibration | None = None) -> float:
    """The model's value for one measurement row (GB/s): busbw, copy rate or NIC rate."""
    cal = calibration.resolve(cal)
    system, metric = row["system_id"], row["metric"]
    gpus, nodes = int(row["model_gpus"]), int(row["model_nodes"])
    if metric == "p2p_uni":
        return copies.copy_GBps(system, 0, 1, cal=cal)
    if metric == "p2p_bidir":
        return copies.copy_GBps(system, 0, 1, bidirectional=True, cal=cal)
    if metric == "h2d":
        return copies.host_copy_GBps(system, 0, cal=cal)
    if metric == "nic_rate":
        where = collectives.place(row["op"], system, gpus, nodes, cal)
        return wiring.nic_bandwidth(where.topo, where.gpus, where.efficiency())[0]
    if metric == "busbw":
        nbytes = float(row["bytes"])
        time = collectives.time_us(row["op"], system, gpus, nbytes, nodes=nodes,
                                   algorithm=row["algorithm"] or "auto", cal=cal)
        time += cal.harness_overhead_us(row["harness"])
        return nbytes / time / 1e3 * collectives.busbw_factor(row["op"], gpus)
    raise InputError(f"unknown metric '{metric}'", str(MEASUREMENTS_CSV), column="metric")


def compare(ids: Sequence[int] | None = None, kinds: Sequence[str] = ("measured",),
            cal: Calibration | None = None) -> pd.DataFrame:
    """Model vs measurement for every mapped row of the given ``kinds`` (default: ``measured``).

    Columns: ``id, system_id, metric, op, algorithm, gpus, nodes, bytes, size_class`` ("large" at or
    above 64 MiB, and steady-state copy / NIC rates), ``measured, predicted`` (GB/s),
    ``rel_error`` = predicted / measured - 1, ``fitted`` (whether a constant was fitted on the row),
    ``source``.
    """
    cal = calibration.resolve(cal)
    frame = measurements()
    frame = frame[(frame["metric"] != "") & frame["kind"].isin(kinds)]
    if ids is not None:
        frame = frame[frame["id"].isin(list(ids))]
    fitted_ids = cal.fitted_ids()
    rows = []
    for _, row in frame.iterrows():
        nbytes = float(row["bytes"]) if row["bytes"] else math.nan
        large = row["metric"] in _BANDWIDTH_METRICS or nbytes >= LARGE_BYTES
        measured, predicted = float(row["model_value"]), predict(row, cal)
        rows.append({"id": row["id"], "system_id": row["system_id"], "metric": row["metric"], "op": row["op"],
                     "algorithm": row["algorithm"], "gpus": int(row["model_gpus"]), "nodes": int(row["model_nodes"]),
                     "bytes": nbytes, "size_class": "large" if large else "small", "measured": measured,
                     "predicted": predicted, "rel_error": predicted / measured - 1,
                     "fitted": row["id"] in fitted_ids, "source": row["source"]})
    return pd.DataFrame(rows)


def summary(comparison: pd.DataFrame | None = None) -> pd.DataFrame:
    """Median and worst absolute relative error, for large and small messages and all rows."""
    data = compare() if comparison is None else comparison
    out = []
    for label, part in (("large", data[data["size_class"] == "large"]),
                        ("small", data[data["size_class"] == "small"]), ("all", data)):
        errors = part["rel_error"].abs()
        worst = part.loc[errors.idxmax()] if len(part) else None
        out.append({"size_class": label, "rows": len(part), "median_abs_error": float(errors.median()),
                    "worst_abs_error": float(errors.max()), "worst_id": None if worst is None else int(worst["id"])})
    return pd.DataFrame(out)


# ------------------------------------------------------------- out of sample


class OutOfSampleRow(datafiles.Row):
    """Schema of ``data/out_of_sample.csv``: one published collective measurement per row."""

    check: Text
    system_id: Text
    op: Text
    algorithm: Text
    gpus: PositiveCount
    nodes: PositiveCount
    bytes: PositiveCount
    measured_busbw_GBps: Positive
    tolerance: Positive
    variant: JsonObject
    known_miss: str | None
    source: Text

    NOUN = "check"
    EXPECTED = {"gpus": "a whole number >= 1", "nodes": "a whole number >= 1",
                "bytes": "the message size in bytes, a whole number >= 1",
                "measured_busbw_GBps": "the measured busbw in GB/s, a number > 0",
                "tolerance": "the allowed relative error, a number > 0",
                "variant": 'catalogue fields changed, a JSON object such as {"nics_per_node": 4}'}


def _load_out_of_sample(path: Path = OUT_OF_SAMPLE_CSV) -> tuple[dict, ...]:
    """Published collective measurements that no constant was fitted on (``data/out_of_sample.csv``).

    Each row: the system (``variant``: catalogue fields changed, as JSON, for a
    box wired differently from the catalogue's), the collective, ``bytes``
    (nccl-tests size), ``measured`` busbw in GB/s per direction, the error
    ``tolerance``, ``known_miss`` (why the model is expected to miss, if it
    is) and ``source``.
    """
    rows = datafiles.read(path, OutOfSampleRow, unique=("check",))
    return tuple({"check": r.check, "system_id": r.system_id, "op": r.op, "algorithm": r.algorithm,
                  "gpus": r.gpus, "nodes": r.nodes, "bytes": r.bytes,
                  "measured": r.measured_busbw_GBps, "tolerance": r.tolerance,
                  **({"variant": r.variant} if r.variant is not None else {}),
                  **({"known_miss": r.known_miss} if r.known_miss else {}), "source": r.source}
                 for _, r in rows)


OUT_OF_SAMPLE: tuple[dict, ...] = _load_out_of_sample()


def variant_topology(system_id: str, changes: Mapping[str, object] | None = None) -> wiring.Topology:
    """The topology of catalogue system ``system_id`` with some fields changed (None: unchanged)."""
    if not changes:
        return wiring.for_system(system_id)
    return wiring.build(dataclasses.replace(catalog.system(system_id), **changes))


def out_of_sample(cal: Calibration | None = None) -> pd.DataFrame:
    """Model vs the published measurements of :data:`OUT_OF_SAMPLE` (none of them was fitted)."""
    rows = []
    for check in OUT_OF_SAMPLE:
        topo = variant_topology(check["system_id"], check.get("variant"))
        result = collectives.collective(check["op"], topo, check["gpus"], check["bytes"], nodes=check["nodes"],
                                        algorithm=check["algorithm"], cal=cal)
        rows.append({"check": check["check"], "system_id": check["system_id"],
                     "variant": ", ".join(f"{k}={v}" for k, v in check.get("variant", {}).items()),
                     "measured": check["measured"], "predicted": result.busbw_GBps,
                     "rel_error": result.busbw_GBps / check["measured"] - 1, "tolerance": check["tolerance"],
                     "known_miss": check.get("known_miss", ""), "source": check["source"]})
    return pd.DataFrame(rows)
