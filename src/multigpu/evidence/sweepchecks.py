"""Where the collective model misses, for the validation appendix: the held-out points it misses widely, the
published runs it cannot tell apart from them, and one cluster followed across node counts against what its NICs
can carry.

The limits are the ones :mod:`multigpu.evidence.sweeps` judges by: :data:`~multigpu.evidence.sweeps.WIDE_MISS`
(a large message's error beyond which a point is a wide miss) and :data:`~multigpu.evidence.sweeps.SMALL_SIDE`
(a small message's median error beyond which a sweep counts as too fast or too slow).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.evidence import deployment, sweeps
from multigpu.evidence.sweeps import WIDE_MISS
from multigpu.hardware import catalog

#: One cluster measured at several node counts with the same software: AWS p5 (8 x H100, 32 x 100 Gb/s EFA per
#: node), all-reduce from 2 to 32 nodes (crazyguitar/aws-gpu-communication-benchmark).
SCALE_SERIES = "-ar-efa-cgawsbench"
#: The sizes (bytes) the scale-out figure follows: 128 MiB, 1 GiB and 8 GiB.
SCALE_SIZES = (2**27, 2**30, 2**33)
#: The smallest message (bytes) the twins' figure draws: below it latency, not the wire, sets the time.
TWIN_FROM_BYTES = 2**20


def comparison(cal: Calibration | None = None) -> pd.DataFrame:
    """Every point of the held-out, sealed (opened once) and fit sweeps against the model
    (:func:`multigpu.evidence.sweeps.compare` over :data:`~multigpu.evidence.sweeps.SHOWN_SPLITS`)."""
    return sweeps.compare(sweeps.SHOWN_SPLITS, cal)


def anchored_points(cal: Calibration | None = None) -> pd.DataFrame:
    """Every shown sweep's points with a latency factor of its own fitted on its
    :data:`~multigpu.evidence.deployment.ANCHOR_POINTS` smallest sizes only
    (:func:`multigpu.evidence.deployment.sweep_points`)."""
    return deployment.sweep_points(sweeps.SHOWN_SPLITS, cal, anchor=deployment.ANCHOR_POINTS)


def held_out_wide_misses(comparison: pd.DataFrame) -> pd.DataFrame:
    """The held-out large-message points of ``comparison`` (:func:`multigpu.evidence.sweeps.compare`) off by
    more than :data:`~multigpu.evidence.sweeps.WIDE_MISS`, each beside its twins in ``comparison``
    (:func:`multigpu.evidence.sweeps.wide_misses`: runs the model cannot tell apart from it, measured at the
    same size)."""
    large = comparison[comparison["size_class"] == "large"]
    misses = sweeps.wide_misses(large, WIDE_MISS)
    return misses[misses["split"] == "holdout"].reset_index(drop=True)


def wide_miss_table(misses: pd.DataFrame) -> pd.DataFrame:
    """Per held-out sweep with points in ``misses`` (:func:`held_out_wide_misses`): how many, their median error
    (%), the twin the model is nearest (its median error there, %), and the widest ratio of this run's time to a
    twin's (x); worst sweep first."""
    data = misses.assign(error=100 * misses["rel_error"], twin_error=100 * misses["nearest_error"])
    table = data.groupby("sweep").agg(points=("bytes", "size"), median_error_pct=("error", "median"),
                                      nearest_twin=("nearest", "first"),
                                      nearest_twin_error_pct=("twin_error", "median"),
                                      widest_twin_ratio_x=("widest_ratio", "max"))
    table["nearest_twin"] = table["nearest_twin"].replace("", "-")
    return table.sort_values("median_error_pct", key=abs, ascending=False).round(2)


def widest_pair(misses: pd.DataFrame) -> pd.Series | None:
    """The miss whose held-out twin is furthest from it (None if no miss has a held-out twin)."""
    held = misses[misses["widest_split"] == "holdout"]
    return None if held.empty else held.loc[held["widest_ratio"].idxmax()]


def twin_points(comparison: pd.DataFrame, misses: pd.DataFrame) -> pd.DataFrame:
    """The runs of the widest held-out pair in ``misses`` (:func:`held_out_wide_misses`) and all their twins in
    ``comparison``, from :data:`TWIN_FROM_BYTES`: ``sweep, split, bytes, measured, predicted`` (busbw, GB/s);
    ``pair`` True on the two runs of the pair. Empty when no miss has a held-out twin."""
    pair = widest_pair(misses)
    if pair is None:
        return pd.DataFrame(columns=["sweep", "split", "bytes", "measured", "predicted", "pair"])
    inputs = {s.sweep: sweeps.model_inputs(s) for s in sweeps.sweeps()}
    twins = comparison[(comparison["sweep"].map(inputs) == inputs[pair["sweep"]])
                       & (comparison["bytes"] >= TWIN_FROM_BYTES)]
    part = twins[["sweep", "split", "bytes", "measured", "predicted"]].reset_index(drop=True)
    return part.assign(pair=part["sweep"].isin([pair["sweep"], pair["widest"]]))


def nic_bound_busbw_GBps(gpus: np.ndarray | int, nodes: np.ndarray | int, node_nic_GBps_per_dir: np.ndarray | float
                         ) -> np.ndarray | float:
    """The all-reduce busbw (GB/s) no algorithm can pass when the NICs bind: every node must send 2(K-1)/K of
    the data through its NICs (K nodes), and busbw counts 2(n-1)/n of it per GPU (n GPUs), so the bound is
    [2(n-1)/n / (2(K-1)/K)] x the node's NIC line rate per direction (GB/s). Needs K >= 2."""
    return (2 * (gpus - 1) / gpus) / (2 * (nodes - 1) / nodes) * node_nic_GBps_per_dir


def scale_points(comparison: pd.DataFrame) -> pd.DataFrame:
    """The :data:`SCALE_SERIES` sweeps of ``comparison`` at :data:`SCALE_SIZES`: ``sweep, split, nodes, bytes,
    measured, predicted`` (busbw, GB/s), ``rel_error``, and ``bound`` (:func:`nic_bound_busbw_GBps`, GB/s)."""
    part = comparison[comparison["sweep"].str.endswith(SCALE_SERIES) & comparison["bytes"].isin(SCALE_SIZES)]
    part = part.sort_values(["bytes", "nodes"]).reset_index(drop=True)
    nic = np.array([system.nics_per_node * system.nic_GBps_per_dir for system in map(catalog.system, part["system"])])
    bound = nic_bound_busbw_GBps(part["gpus"].to_numpy(), part["nodes"].to_numpy(), nic)
    return part[["sweep", "split", "nodes", "bytes", "measured", "predicted", "rel_error"]].assign(bound=bound)
