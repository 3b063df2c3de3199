"""Serving under load on the same GPUs wired two ways: how many requests each server answers within latency limits.

A fixed batch hides what a user of a loaded server meets: requests arrive at random and wait for a place, and a
prompt's prefill holds up every user decoding beside it. :mod:`multigpu.compute.queueing` simulates that. Here
Llama 3.1 70B in BF16 (:data:`WORKLOAD`) is served on each setup of :data:`SETUPS` at each tensor-parallel
degree of :data:`TP_DEGREES`, and the request rate is raised until the 99th percentiles of TTFT and of the time
per output token reach :data:`LIMITS`, the latency limits MLPerf Inference sets its Llama 2 70B Server scenario
(a model of the same shape).

:func:`split_layouts` serves the same requests on the same 8 GPUs split into a prefill and a decode pool
(:mod:`multigpu.compute.disaggregated`), the KV cache sent over NVLink, or over PCIe where the server has no
NVLink, and keeps each server's best split.

Rates are requests per second per 8-GPU server: the server runs 8 / tp copies of the model, each served at the
same rate. Times in seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.compute import disaggregated, queueing
from multigpu.evidence.bottlenecks import MESH, SWITCH, Cluster
from multigpu.hardware import catalog

#: The served model and lengths: Llama 3.1 70B in BF16, 2,048 tokens in and 256 out, at most 256 in a batch.
WORKLOAD = {"model_id": "llama3.1-70b", "input_tokens": 2048, "output_tokens": 256, "dtype": "bf16"}
MAX_BATCH = 256
#: The setups compared: the A100 on PCIe and behind NVSwitch, the H200 on a point-to-point mesh and behind NVSwitch.
SETUPS = (Cluster("8x A100, PCIe", "pcie-a100-8"), Cluster("8x A100, NVSwitch", "dgx-a100"),
          Cluster("8x H200, NVLink mesh", MESH), Cluster("8x H200, NVSwitch", SWITCH))
TP_DEGREES = (2, 4, 8)
#: GPUs of the server a rate is counted on.
SERVER_GPUS = 8
#: Requests each simulated run serves. A 99th percentile over the 80 % counted is noisy: over seeds 0 to 4 the
#: DGX A100's lead over the A100 PCIe server within :data:`LIMITS` spans 22 to 30 times per copy at the
#: default 2,000 requests, 23 to 27 times at 8,000.
REQUESTS = 8000


@dataclass(frozen=True)
class Limits:
    """Latency limits at the 99th percentile (seconds)."""

    ttft_p99_s: float
    tpot_p99_s: float


#: MLPerf Inference's Server-scenario limits for Llama 2 70B: TTFT 2,000 ms and time per output token 200 ms, both
#: at the 99th percentile (as printed in every llama2-70b Server result's mlperf_log_summary.txt, e.g.
#: https://github.com/mlcommons/inference_results_v4.1/blob/main/closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99/Server/performance/run_1/mlperf_log_summary.txt;
#: data/serving_runs.csv notes them on each such row).
LIMITS = Limits(2.0, 0.2)


def _engine(setup: Cluster, tp: int, cal: Calibration | None) -> queueing.Engine:
    return queueing.engine(system_id=setup.system, tp=tp, max_batch=MAX_BATCH, cal=cal, **WORKLOAD)


def within_limits(eng: queueing.Engine, limits: Limits = LIMITS) -> float:
    """The highest request rate (per second, for one copy) at which both 99th percentiles stay within ``limits``
    (:func:`multigpu.compute.queueing.max_rate`)."""
    return queueing.max_rate(eng, limits.ttft_p99_s, limits.tpot_p99_s, requests=REQUESTS)


def layouts(setups: Sequence[Cluster] = SETUPS, cal: Calibration | None = None) -> pd.DataFrame:
    """Every setup at every tensor-parallel degree that fits. Columns: ``setup``, ``tp``, ``prefill_s`` (one
    prompt's prefill, the TTFT of a lone request), ``capacity_requests_per_s`` and
    ``within_limits_requests_per_s`` (requests per second per 8-GPU server: the most it completes, and the most
    within :data:`LIMITS`) and ``share_of_capacity_pct`` (the second over the first, %)."""
    rows = []
    for setup in setups:
        for tp in TP_DEGREES:
            try:
                eng = _engine(setup, tp, cal)
            except InputError:
                continue  # the model does not fit tp GPUs
            copies = SERVER_GPUS // tp
            capacity, within = copies * eng.capacity_per_s(), copies * within_limits(eng)
            rows.append({"setup": setup.label, "tp": tp, "prefill_s": eng.prefill_s,
                         "capacity_requests_per_s": capacity, "within_limits_requests_per_s": within,
                         "share_of_capacity_pct": 100 * within / capacity})
    return pd.DataFrame(rows)


def best(table: pd.DataFrame) -> pd.DataFrame:
    """Each setup at the tensor-parallel degree that serves the most requests within the limits (a row of
    :func:`layouts` per setup, in setup order)."""
    picks = table.loc[table.groupby("setup", sort=False)["within_limits_requests_per_s"].idxmax()]
    return picks.reset_index(drop=True)


def curves(picks: pd.DataFrame, points: int = 12, cal: Calibration | None = None) -> pd.DataFrame:
    """The 99th percentiles of TTFT and time per output token against the request rate, for each setup at its
    degree of ``picks`` (:func:`best`): ``points`` rates from 5 % to 95 % of its capacity. Columns: ``setup``,
    ``tp``, ``rate_per_s`` (per 8-GPU server), ``ttft_p99_s``, ``tpot_p99_s``, ``ttft_p50_s``, ``tpot_p50_s``."""
    rows = []
    labels = {s.label: s for s in SETUPS}
    for pick in picks.itertuples():
        eng = _engine(labels[pick.setup], pick.tp, cal)
        copies = SERVER_GPUS // pick.tp
        for share in np.linspace(0.05, 0.95, points):
            run = queueing.simulate(eng, rate=share * eng.capacity_per_s(), requests=REQUESTS)
            rows.append({"setup": pick.setup, "tp": pick.tp, "rate_per_s": copies * run.rate_per_s,
                         "ttft_p99_s": run.ttft_p99_s, "tpot_p99_s": run.tpot_p99_s,
                         "ttft_p50_s": run.ttft_p50_s, "tpot_p50_s": run.tpot_p50_s})
    return pd.DataFrame(rows)


def gaps(picks: pd.DataFrame, pairs: Sequence[tuple[str, str]] = (("8x A100, NVSwitch", "8x A100, PCIe"),
                                                                      ("8x H200, NVSwitch", "8x H200, NVLink mesh"))
         ) -> pd.DataFrame:
    """For each (switch, other) pair of setups of ``picks``: ``switch``, ``other``, ``capacity_x`` (the switch's
    capacity over the other's) and ``within_x`` (the same within the latency limits; inf where the other serves
    none)."""
    table = picks.set_index("setup")
    rows = []
    for switch, other in pairs:
        a, b = table.loc[switch], table.loc[other]
        fast, slow = a["within_limits_requests_per_s"], b["within_limits_requests_per_s"]
        rows.append({"switch": switch, "other": other,
                     "capacity_x": a["capacity_requests_per_s"] / b["capacity_requests_per_s"],
                     "within_x": fast / slow if slow else np.inf})
    return pd.DataFrame(rows)


#: The splits of a server's 8 GPUs into a prefill and a decode pool: (prefill copies, their tp, decode copies,
#: their tp).
SPLITS = ((1, 2, 3, 2), (2, 2, 2, 2), (3, 2, 1, 2), (2, 2, 1, 4), (1, 4, 2, 2), (1, 4, 1, 4))


def kv_link(setup: Cluster) -> str:
    """Where one server's KV cache travels between its pools: NVLink where the server has it, else PCIe."""
    return "nvlink" if catalog.system(setup.system).nvlink_GBps_per_dir else "pcie"


def split_layouts(setups: Sequence[Cluster] = SETUPS, cal: Calibration | None = None) -> pd.DataFrame:
    """Each setup's best split of its 8 GPUs into a prefill and a decode pool (:data:`SPLITS`, the KV cache over
    :func:`kv_link`; :mod:`multigpu.compute.disaggregated`): the one that serves the most requests within
    :data:`LIMITS`. Columns: ``setup``, ``prefill_copies``, ``prefill_tp``, ``decode_copies``, ``decode_tp``,
    ``kv_transfer_ms`` (one request's KV cache), ``capacity_requests_per_s`` and ``within_limits_requests_per_s``
    (per 8-GPU server)."""
    rows = []
    for setup in setups:
        best = None
        for prefill, prefill_tp, decode, decode_tp in SPLITS:
            try:
                split = disaggregated.split(system_id=setup.system, tp=decode_tp, max_batch=MAX_BATCH, cal=cal,
                                            prefill_copies=prefill, decode_copies=decode, prefill_tp=prefill_tp,
                                            kv_link=kv_link(setup), **WORKLOAD)
            except InputError:
                continue  # the model does not fit a copy
            within = disaggregated.max_rate(split, LIMITS.ttft_p99_s, LIMITS.tpot_p99_s, requests=REQUESTS)
            if best is None or within > best["within_limits_requests_per_s"]:
                best = {"setup": setup.label, "prefill_copies": prefill, "prefill_tp": prefill_tp,
                        "decode_copies": decode, "decode_tp": decode_tp, "kv_transfer_ms": 1e3 * split.transfer_s,
                        "capacity_requests_per_s": split.capacity_per_s(), "within_limits_requests_per_s": within}
        if best is not None:
            rows.append(best)
    return pd.DataFrame(rows)
