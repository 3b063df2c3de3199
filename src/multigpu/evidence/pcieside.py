"""The PCIe side of a verdict, measured: the model's error on published runs of systems without an NVSwitch (a PCIe
tree, NVLink-bridged pairs or a bridge mesh), kept apart from its error on NVSwitch systems, and its error on the
ratio that a verdict rests on.

Every verdict of the introduction sets a prediction for an NVSwitch system beside one for a PCIe system: the
break-even premium is the ratio of their GPU-hours per workload, less one. So the model is scored three ways here:

- :func:`errors`: median and worst |error| by kind (``collective``: large-message bus bandwidth of the held-out
  sweeps; ``training``: step time; ``serving``: output throughput of a model split over two GPUs or more, so
  that its GPUs communicate) and by side (:func:`side`);
- :func:`pairs`: two runs of one source, one per side, of the same setting (model, precision, layout or lengths and
  batch), each with the ratio of the PCIe run's time to the NVSwitch run's, measured and predicted; a pair on
  one GPU family scores the wiring effect, a pair of two GPUs the market effect;
- :func:`ratio_summary`: the median and worst |ratio error| (``predicted ratio / measured ratio - 1``).

A pair's split: ``sealed`` when either run is sealed (it is looked at once, at the end), else the PCIe run's split
(the run the pair adds; the NVSwitch runs were already scored on their own). Times: a throughput is read as
its inverse, so every ratio is a ratio of times, as the break-even premium is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.evidence import runs, serving, sweeps
from multigpu.hardware import catalog

#: The two sides a verdict compares: a switched NVLink domain, and everything else inside a node.
NVSWITCH, PCIE = "nvswitch", "pcie"
SIDES = (NVSWITCH, PCIE)
KINDS = ("collective", "training", "serving")
#: Columns of :func:`comparisons`.
COLUMNS = ["kind", "id", "split", "system_id", "side", "gpu_family", "source_doc", "setting", "measured_time",
           "predicted_time", "rel_error"]
#: Columns of :func:`pairs`.
PAIR_COLUMNS = ["kind", "split", "setting", "same_gpu", "gpu_family", "nvswitch_id", "pcie_id", "nvswitch_system",
                "pcie_system", "measured_ratio", "predicted_ratio", "ratio_error", "source_doc"]


def side(system_id: str) -> str:
    """:data:`NVSWITCH` for a system whose GPUs meet in an NVSwitch, else :data:`PCIE` (a PCIe tree, bridged
    pairs, a bridge or board mesh); a ``<id>@<fabric>`` variant has its base system's side."""
    return NVSWITCH if catalog.system(system_id.split("@")[0]).topology == "nvswitch" else PCIE


#: An MLPerf Inference result's log: one file per system, of one submitter's submission to one round.
_MLPERF_RESULT = re.compile(
    r"^(https://github\.com/mlcommons/inference_results_v[0-9.]+/blob/[^/]+/closed/[^/]+)/results/")


def source_doc(source: str) -> str:
    """The document (and version) a source cites: the text before its first ``" ("`` (section, table); for an
    MLPerf Inference result, the submitter's submission to its round (each system's log is a file of it)."""
    doc = source.split(" (")[0].strip()
    submission = _MLPERF_RESULT.match(doc)
    return submission.group(1) if submission else doc


def _points(kind: str, frame: pd.DataFrame, ids: pd.Series, systems: pd.Series, setting: pd.Series,
            measured_time: pd.Series, predicted_time: pd.Series) -> pd.DataFrame:
    """One kind's scored points as :func:`comparisons` rows (the side and GPU family follow from the system)."""
    return pd.DataFrame({"kind": kind, "id": ids, "split": frame["split"], "system_id": systems,
                         "gpu_family": systems.map(lambda s: runs.gpu_family(catalog.system(s).gpu)),
                         "source_doc": frame["source"].map(source_doc), "setting": setting,
                         "measured_time": measured_time, "predicted_time": predicted_time,
                         "rel_error": frame["rel_error"]})


def _training(splits: Sequence[str], cal: Calibration | None) -> pd.DataFrame:
    frame = runs.compare(tuple(splits), cal)
    setting = frame["model_id"] + " " + frame["dtype"] + " " + frame["gpus"].astype(str) + " GPUs " + frame["layout"]
    return _points("training", frame, frame["id"], frame["system_id"], setting, frame["measured_step_s"],
                   frame["predicted_step_s"])


def _serving(splits: Sequence[str], cal: Calibration | None) -> pd.DataFrame:
    frame = serving.compare(tuple(splits), cal)
    frame = frame[(frame["metric"] == "throughput") & (frame["tp"] * frame["pp"] >= 2)]  # GPUs that communicate
    published = {row.id: row.batch_or_concurrency for row in serving.load(tuple(splits))}
    batch = frame["id"].map(lambda i: published[i] if published[i] is not None else "max load")
    # an MLPerf run's lengths are its dataset's (its mean output is the run's own, so it differs a little by run)
    lengths = (frame["input_tokens"].astype(str) + "/" + frame["output_tokens"].astype(str)).where(
        frame["kind"] != "mlperf", "MLPerf dataset")
    setting = (frame["model_id"] + " " + frame["dtype"] + " TP" + frame["tp"].astype(str) + " PP"
               + frame["pp"].astype(str) + " " + lengths + " batch " + batch.astype(str))
    return _points("serving", frame, frame["id"], frame["system_id"], setting, 1 / frame["measured"],
                   1 / frame["predicted"])


def _collective(splits: Sequence[str], cal: Calibration | None) -> pd.DataFrame:
    frame = sweeps.compare(tuple(splits), cal)
    frame = frame[frame["size_class"] == "large"]
    setting = frame["op"] + " " + frame["gpus"].astype(str) + " GPUs " + frame["bytes"].astype(str) + " B"
    return _points("collective", frame, frame["sweep"], frame["system"], setting, 1 / frame["measured"],
                   1 / frame["predicted"])


def comparisons(splits: Sequence[str] = ("holdout",), cal: Calibration | None = None) -> pd.DataFrame:
    """Every scored point of ``splits`` of the three kinds, with its side: :data:`COLUMNS`. ``rel_error`` is each
    kind's own error (bus bandwidth for a collective, step time for training, throughput for serving, as the
    validation appendix states them); the times are seconds (training), or the inverse of the measured and
    predicted bus bandwidth or throughput (collective, serving), for ratios."""
    parts = [build(splits, cal) for build in (_collective, _training, _serving)]
    frame = pd.concat([p for p in parts if not p.empty], ignore_index=True)
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    frame["side"] = frame["system_id"].map(side)
    return frame[COLUMNS]


def errors(frame: pd.DataFrame) -> pd.DataFrame:
    """Per kind and side of a :func:`comparisons` frame: ``kind, side, points, median_abs_error_pct,
    worst_abs_error_pct``, in :data:`KINDS` then :data:`SIDES` order (a kind and side without points is left out)."""
    data = frame.assign(abs_error_pct=100 * frame["rel_error"].abs())
    table = (data.groupby(["kind", "side"])["abs_error_pct"]
             .agg(points="size", median_abs_error_pct="median", worst_abs_error_pct="max").reset_index())
    order = {k: i for i, k in enumerate(KINDS + SIDES)}
    table = table.sort_values(["kind", "side"], key=lambda s: s.map(order)).reset_index(drop=True)
    return table.astype({"points": int})


def _pair_split(nvswitch_split: str, pcie_split: str) -> str:
    return "sealed" if "sealed" in (nvswitch_split, pcie_split) else pcie_split


def pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured pairs of a :func:`comparisons` frame (training and serving): runs of one source document with
    the same setting, one on each side. Every PCIe run is paired with each NVSwitch run of its setting. ``same_gpu``:
    both runs on one GPU family (the wiring effect a verdict of the introduction rests on); else the pair sets
    two GPUs side by side (the market effect, chapter 5's). ``gpu_family`` is the PCIe run's. Columns
    :data:`PAIR_COLUMNS`; ratios are PCIe time over NVSwitch time; ``ratio_error`` = predicted ratio / measured
    ratio - 1."""
    data = frame[frame["kind"] != "collective"]
    key = ["kind", "source_doc", "setting"]
    merged = data[data["side"] == PCIE].merge(data[data["side"] == NVSWITCH], on=key, suffixes=("_p", "_n"))
    if merged.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    measured = merged["measured_time_p"] / merged["measured_time_n"]
    predicted = merged["predicted_time_p"] / merged["predicted_time_n"]
    out = pd.DataFrame({"kind": merged["kind"],
                        "split": [_pair_split(n, p) for n, p in zip(merged["split_n"], merged["split_p"])],
                        "setting": merged["setting"], "same_gpu": merged["gpu_family_p"] == merged["gpu_family_n"],
                        "gpu_family": merged["gpu_family_p"], "nvswitch_id": merged["id_n"],
                        "pcie_id": merged["id_p"], "nvswitch_system": merged["system_id_n"],
                        "pcie_system": merged["system_id_p"], "measured_ratio": measured,
                        "predicted_ratio": predicted, "ratio_error": predicted / measured - 1,
                        "source_doc": merged["source_doc"]})
    return out[PAIR_COLUMNS].reset_index(drop=True)


def ratio_summary(paired: pd.DataFrame) -> pd.DataFrame:
    """Per kind of a :func:`pairs` frame: ``kind, pairs, median_abs_error_pct, worst_abs_error_pct``."""
    data = paired.assign(abs_error_pct=100 * paired["ratio_error"].abs())
    table = (data.groupby("kind")["abs_error_pct"]
             .agg(pairs="size", median_abs_error_pct="median", worst_abs_error_pct="max").reset_index())
    return table.astype({"pairs": int})


#: The fewest held-out pairs for the ratio's own error to be the band a verdict is weighed against.
MIN_PAIRS = 10
#: The workload kinds a verdict is given for, and the kind of comparison that scores each.
VERDICT_KINDS = ("training", "serving")


@dataclass(frozen=True)
class SideErrors:
    """The held-out errors (median |error|, %) that the verdicts of one workload kind rest on, with their counts:
    each side alone, and the ratio of the two (NaN where nothing is held out)."""

    kind: str  #: ``training`` or ``serving``
    nvswitch_pct: float
    nvswitch_points: int
    pcie_pct: float
    pcie_points: int
    ratio_pct: float
    ratio_pairs: int

    @property
    def basis(self) -> str:
        """What :attr:`band_pct` rests on: ``ratio`` (at least :data:`MIN_PAIRS` held-out pairs) or ``nvswitch``
        (fewer: the NVSwitch side's error, as before any PCIe run was scored)."""
        return "ratio" if self.ratio_pairs >= MIN_PAIRS else "nvswitch"

    @property
    def band_pct(self) -> float:
        """The error a verdict's premiums must differ by (%): the ratio's held-out median error where
        :attr:`basis` is ``ratio``, else the NVSwitch side's. The two sides' errors are not combined as
        independent: on the measured pairs both sides miss together (the same compute model), so their ratio
        misses by less than either side, and a sum would call every verdict too close on a miss the ratio
        cancels; the PCIe side's error is stated beside the verdict instead."""
        return self.ratio_pct if self.basis == "ratio" else self.nvswitch_pct


def side_errors(frame: pd.DataFrame, kind: str, paired: pd.DataFrame | None = None) -> SideErrors:
    """:class:`SideErrors` of ``kind`` from a held-out :func:`comparisons` frame; the ratio's from ``paired``
    (:func:`pairs`; default: the pairs within ``frame``)."""
    table = errors(frame).set_index(["kind", "side"])
    paired = pairs(frame) if paired is None else paired
    ratios = ratio_summary(paired[paired["same_gpu"]]).set_index("kind")

    def part(side_name: str) -> tuple[float, int]:
        key = (kind, side_name)
        if key not in table.index:
            return math.nan, 0
        return float(table.loc[key, "median_abs_error_pct"]), int(table.loc[key, "points"])

    ratio = ((float(ratios.loc[kind, "median_abs_error_pct"]), int(ratios.loc[kind, "pairs"]))
             if kind in ratios.index else (math.nan, 0))
    return SideErrors(kind, *part(NVSWITCH), *part(PCIE), *ratio)


@cache
def verdict_errors() -> dict[str, SideErrors]:
    """:class:`SideErrors` of each of :data:`VERDICT_KINDS` on the held-out runs, with the shipped calibration;
    the ratio's on the held-out pairs (a pair's split is its PCIe run's, :func:`pairs`), whose NVSwitch run may
    be a fit one."""
    held = comparisons(("holdout",))
    paired = pairs(comparisons(("fit", "holdout")))
    return {kind: side_errors(held, kind, paired[paired["split"] == "holdout"]) for kind in VERDICT_KINDS}
