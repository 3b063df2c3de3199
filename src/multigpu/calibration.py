"""Calibration: the model's constants, where each came from, and how well the model fits.

Constants live in ``data/calibration.csv`` (``name, key, value, unit, source,
fitted_on, notes``). Most are NCCL's own tuner priors (latencies, protocol
factors; see ``shared/reference/nccl_model.md``); a few are fitted on the
``measured`` rows of ``data/measurements.csv`` (``fitted_on`` lists their ids):

- ``sm_efficiency/nvlink.hopper``: achievable fraction of NVLink line rate for
  NCCL's SM-driven ring kernels;
- ``nvls_efficiency/hopper``: NVLink SHARP all-reduce efficiency, relative to
  the above;
- ``ce_efficiency/nvlink``, ``ce_efficiency/pcie``: copy-engine copies;
- ``harness_overhead_us/torch``: host cost of one timed torch.distributed call.

:func:`fit` recomputes those from the measurements; :func:`compare` returns
the model's prediction and relative error for every measured collective row;
:func:`summary` condenses it; :func:`out_of_sample` checks the model against
published measurements that are not in the calibration set.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu.errors import InputError

DATA_DIR = Path(__file__).parent / "data"
CALIBRATION_CSV = DATA_DIR / "calibration.csv"
MEASUREMENTS_CSV = DATA_DIR / "measurements.csv"
LARGE_BYTES = 64 * 2**20  #: rows at or above this size are "large" (bandwidth-bound)

#: link kind (catalogue category, or topology-internal kind) -> latency/efficiency class
LINK_CLASS: dict[str, str] = {
    "nvlink": "nvlink", "nvlink-capped": "nvlink", "nvswitch": "nvlink", "nvlink-bridge": "nvlink",
    "infinity-fabric": "nvlink", "c2c": "nvlink",
    "pcie": "pci", "inter-socket": "pci", "bounce": "pci",
    "infiniband": "net", "ethernet": "net",
}
#: GPU architecture -> the row of NCCL's per-architecture tables it uses
ARCH_FAMILY: dict[str, str] = {
    "pascal": "volta", "volta": "volta", "ampere": "ampere", "ada": "ampere", "hopper": "hopper",
    "blackwell": "blackwell", "rubin": "blackwell", "cdna2": "hopper", "cdna3": "hopper", "cdna4": "hopper",
}


#: GPU architecture -> its row of ``sm_efficiency`` (NCCL's per-SM NVLink figure); others use "default"
_SM_NVLINK_KEY = {"pascal": "volta", "volta": "volta", "ampere": "ampere", "hopper": "hopper",
                  "blackwell": "blackwell"}


@dataclass(frozen=True)
class Constant:
    """One calibration constant and its provenance."""

    name: str
    key: str
    value: float
    unit: str
    source: str
    fitted_on: str  #: measurement ids it was fitted on ("" for a prior)
    notes: str


_overrides: dict[tuple[str, str], float] = {}


@functools.cache
def _constants() -> dict[tuple[str, str], Constant]:
    with open(CALIBRATION_CSV, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    table: dict[tuple[str, str], Constant] = {}
    for line, row in enumerate(rows, start=2):
        try:
            value = float(row["value"])
        except ValueError:
            raise InputError("not a number", str(CALIBRATION_CSV), line, "value") from None
        table[(row["name"], row["key"])] = Constant(row["name"], row["key"], value, row["unit"],
                                                    row["source"], row["fitted_on"], row["notes"])
    return table


def value(name: str, key: str) -> float:
    """The value of constant ``name``/``key`` (honouring :func:`override`)."""
    if (name, key) in _overrides:
        return _overrides[(name, key)]
    try:
        return _constants()[(name, key)].value
    except KeyError:
        raise InputError(f"no calibration constant {name}/{key}", str(CALIBRATION_CSV)) from None


def state() -> tuple:
    """A hashable token of the current overrides (for caches of derived results)."""
    return tuple(sorted(_overrides.items()))


def has(name: str, key: str) -> bool:
    """Whether constant ``name``/``key`` exists."""
    return (name, key) in _constants()


def table() -> pd.DataFrame:
    """Every constant with its value (overrides applied), unit, source and ``fitted_on``."""
    rows = [{**c.__dict__, "value": value(c.name, c.key)} for c in _constants().values()]
    return pd.DataFrame(rows)


@contextlib.contextmanager
def override(values: Mapping[tuple[str, str], float]) -> Iterator[None]:
    """Temporarily replace constants, e.g. ``override({("bounce", "rate_factor"): 0.4})``."""
    saved = dict(_overrides)
    _overrides.update(values)
    try:
        yield
    finally:
        _overrides.clear()
        _overrides.update(saved)


def efficiency(kind: str, arch: str, engine: str = "sm") -> float:
    """Achievable fraction of a link's line rate, per direction.

    ``kind`` is a link kind (see :data:`LINK_CLASS`), ``arch`` the GPU
    architecture, ``engine`` ``"sm"`` (NCCL and custom kernels: SM loads and
    stores) or ``"ce"`` (copy engines: cudaMemcpy, p2p benchmarks).
    """
    link_class = LINK_CLASS[kind]
    if kind == "bounce":
        return 1.0  # the bounce limit is a rate factor applied in the topology
    if link_class == "nvlink":
        if engine == "ce":
            return value("ce_efficiency", "nvlink")
        return value("sm_efficiency", f"nvlink.{_SM_NVLINK_KEY.get(arch, 'default')}")
    return value(f"{engine}_efficiency", "pcie" if link_class == "pci" else "net")


def nvls_efficiency(arch: str) -> float:
    """NVLink SHARP efficiency relative to :func:`efficiency` of the NVLink ports."""
    return value("nvls_efficiency", arch if has("nvls_efficiency", arch) else "default")


def ll_max_bw_GBps(arch: str, nodes: int) -> float:
    """NCCL's cap on LL-protocol bandwidth, GB/s (per architecture on one node, per node count beyond)."""
    if nodes >= 3:
        return value("ll_max_bw_GBps", "nodes3")
    if nodes == 2:
        return value("ll_max_bw_GBps", "nodes2")
    return value("ll_max_bw_GBps", ARCH_FAMILY.get(arch, "hopper"))


# ---------------------------------------------------------------- measurements

#: constants fitted on measurements, in the order :func:`fit` refits them
FITTED: tuple[tuple[str, str], ...] = (
    ("sm_efficiency", "nvlink.hopper"), ("nvls_efficiency", "hopper"), ("ce_efficiency", "nvlink"),
    ("ce_efficiency", "pcie"), ("harness_overhead_us", "torch"),
)
_BANDWIDTH_METRICS = ("p2p_uni", "p2p_bidir", "h2d", "nic_rate")  # steady-state rates: always "large"


def measurements() -> pd.DataFrame:
    """``data/measurements.csv``: the published measurements with their source, kind, conditions,
    and how the model reproduces each (``system_id, op, algorithm, model_gpus, model_nodes, bytes,
    metric, harness, model_value``); rows without a ``metric`` are not collectives (training runs...)."""
    frame = pd.read_csv(MEASUREMENTS_CSV, dtype=str, keep_default_na=False)
    frame["id"] = frame["id"].astype(int)
    return frame


def harness_overhead_us(harness: str) -> float:
    """Host-side cost per timed call of a benchmark harness, us (0 for kernel-level timers)."""
    return value("harness_overhead_us", harness) if has("harness_overhead_us", harness) else 0.0


def predict(row: Mapping[str, str]) -> float:
    """The model's value for one measurement row (GB/s): busbw, copy rate or NIC rate."""
    from multigpu import collectives, topology

    system, metric = row["system_id"], row["metric"]
    gpus, nodes = int(row["model_gpus"]), int(row["model_nodes"])
    if metric == "p2p_uni":
        return collectives.copy_GBps(system, 0, 1)
    if metric == "p2p_bidir":
        return collectives.copy_GBps(system, 0, 1, bidirectional=True)
    if metric == "h2d":
        return collectives.host_copy_GBps(system, 0)
    if metric == "nic_rate":
        topo = topology.for_system(system)
        where = collectives.setup(row["op"], topo, gpus, nodes)
        return topology.nic_bandwidth(topo, where.gpus, where.efficiency())[0]
    if metric == "busbw":
        nbytes = float(row["bytes"])
        time = collectives.time_us(row["op"], system, gpus, nbytes, nodes=nodes, algorithm=row["algorithm"] or "auto")
        time += harness_overhead_us(row["harness"])
        return nbytes / time / 1e3 * collectives.busbw_factor(row["op"], gpus)
    raise InputError(f"unknown metric '{metric}'", str(MEASUREMENTS_CSV), column="metric")


def compare(ids: Sequence[int] | None = None, kinds: Sequence[str] = ("measured",)) -> pd.DataFrame:
    """Model vs measurement for every mapped row of the given ``kinds`` (default: ``measured``).

    Columns: ``id, system_id, metric, op, algorithm, gpus, nodes, bytes, size_class`` ("large" at or
    above 64 MiB, and steady-state copy / NIC rates), ``measured, predicted`` (GB/s),
    ``rel_error`` = predicted / measured - 1, ``fitted`` (whether a constant was fitted on the row),
    ``source``.
    """
    frame = measurements()
    frame = frame[(frame["metric"] != "") & frame["kind"].isin(kinds)]
    if ids is not None:
        frame = frame[frame["id"].isin(list(ids))]
    fitted_ids = {int(i) for c in _constants().values() for i in c.fitted_on.split(",") if i.strip()}
    rows = []
    for _, row in frame.iterrows():
        nbytes = float(row["bytes"]) if row["bytes"] else math.nan
        large = row["metric"] in _BANDWIDTH_METRICS or nbytes >= LARGE_BYTES
        measured, predicted = float(row["model_value"]), predict(row)
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


def fit() -> dict[tuple[str, str], float]:
    """Refit the :data:`FITTED` constants on their ``fitted_on`` rows, in order.

    Efficiencies scale bandwidth, so each is its current value times the
    median of measured / predicted over its rows (one multiplicative step;
    large messages, where latency is negligible). The harness overhead is its
    current value plus the median of measured - predicted time.
    """
    from multigpu import collectives

    fitted: dict[tuple[str, str], float] = {}
    for name, key in FITTED:
        ids = [int(i) for i in _constants()[(name, key)].fitted_on.split(",")]
        with override(fitted):
            data = compare(ids)
            current = value(name, key)
        if name == "harness_overhead_us":
            factor = [collectives.busbw_factor(r.op, r.gpus) for r in data.itertuples()]
            seconds = lambda bw: data["bytes"] / (bw / factor) / 1e3  # noqa: E731
            fitted[(name, key)] = current + float(np.median(seconds(data["measured"]) - seconds(data["predicted"])))
        else:
            fitted[(name, key)] = current * float(np.median(data["measured"] / data["predicted"]))
    return fitted


# ------------------------------------------------------------- out of sample

#: Published measurements NOT in ``shared/reference`` (and not used to fit anything).
#: ``variant`` changes catalogue fields of the system to the measured box's wiring, where
#: the evidence says it differs from the catalogue's assumption; ``tolerance`` is the
#: relative error the tests accept; ``known_miss`` marks a documented disagreement.
OUT_OF_SAMPLE_CSV = Path(__file__).parent / "data" / "out_of_sample.csv"


def _load_out_of_sample(path: Path = OUT_OF_SAMPLE_CSV) -> tuple[dict, ...]:
    """Published collective measurements that no constant was fitted on (``data/out_of_sample.csv``).

    Each row: the system (``variant``: catalogue fields changed, as JSON, for a
    box wired differently from the catalogue's), the collective, ``bytes``
    (nccl-tests size), ``measured`` busbw in GB/s per direction, the error
    ``tolerance``, ``known_miss`` (why the model is expected to miss, if it
    is) and ``source``.
    """
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return tuple({"check": r["check"], "system_id": r["system_id"], "op": r["op"], "algorithm": r["algorithm"],
                  "gpus": int(r["gpus"]), "nodes": int(r["nodes"]), "bytes": int(r["bytes"]),
                  "measured": float(r["measured_busbw_GBps"]), "tolerance": float(r["tolerance"]),
                  **({"variant": json.loads(r["variant"])} if r["variant"] else {}),
                  **({"known_miss": r["known_miss"]} if r["known_miss"] else {}), "source": r["source"]}
                 for r in rows)


OUT_OF_SAMPLE: tuple[dict, ...] = _load_out_of_sample()


def variant_topology(system_id: str, changes: Mapping[str, object] | None = None):
    """The topology of catalogue system ``system_id`` with some fields changed (None: unchanged)."""
    import dataclasses

    from multigpu import catalog, topology

    if not changes:
        return topology.for_system(system_id)
    return topology.build(dataclasses.replace(catalog.system(system_id), **changes))


def out_of_sample() -> pd.DataFrame:
    """Model vs the published measurements of :data:`OUT_OF_SAMPLE` (none of them was fitted)."""
    from multigpu import collectives

    rows = []
    for check in OUT_OF_SAMPLE:
        topo = variant_topology(check["system_id"], check.get("variant"))
        result = collectives.collective(check["op"], topo, check["gpus"], check["bytes"], nodes=check["nodes"],
                                        algorithm=check["algorithm"])
        rows.append({"check": check["check"], "system_id": check["system_id"],
                     "variant": ", ".join(f"{k}={v}" for k, v in check.get("variant", {}).items()),
                     "measured": check["measured"], "predicted": result["busbw_GBps"],
                     "rel_error": result["busbw_GBps"] / check["measured"] - 1, "tolerance": check["tolerance"],
                     "known_miss": check.get("known_miss", ""), "source": check["source"]})
    return pd.DataFrame(rows)
