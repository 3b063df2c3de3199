"""Where communication costs time: the tables and series of chapter 3.

Every function calls the training model (:func:`multigpu.compute.training.step`), the
inference model (:func:`multigpu.compute.inference.run`) or the collective model
(:mod:`multigpu.comm.collectives`) and returns a pandas DataFrame whose column
names carry their units (``_s``, ``_ms``, ``_us``, ``_GB``, ``_pct``, ...).
GB are 1e9 bytes. The model logic stays in those modules; this one chooses the
cases, sweeps them and lays the results out.

The cases:

- training: Llama 3.1 8B, sequences of 2048 tokens, BF16, micro-batch 1,
  :data:`SEQS_PER_GPU` sequences per GPU per step, on the interconnects of
  :data:`TRAINING_SETUPS` (a PCIe box, an NVSwitch node of the same A100, a
  point-to-point NVLink mesh and an NVSwitch node of the same H200, and four
  H200 nodes joined by InfiniBand);
- inference: Llama 3.1 70B with 8K-token prompts and 256 output tokens (the
  setting of NVIDIA's NVSwitch blog), under in-flight batching.

The functions, by section of the chapter:

- :func:`training_breakdown`: where a training step's time goes;
- :func:`decode_breakdown`: the same for one decode step;
- :func:`scaling`, :func:`amdahl`: efficiency against GPU count;
- :func:`dp_batch_sweep`, :func:`dp_crossover`: the batch at which data-parallel communication
  stops dominating; :func:`decode_ratio` the same question for decode;
- :func:`sensitivity`: data against tensor parallelism when bandwidth halves or latency doubles;
- :func:`tp_bytes_per_query`, :func:`volume_vs_batch`, :func:`transfer_times`: the article's
  "20 GB per query" and "156 against 22 ms";
- :func:`nvidia_table2`, :func:`nvidia_table3`, :func:`compare_fixed_batch`,
  :func:`compare_at_rate`, :func:`nvidia_identity`, :func:`throughput_curve`: NVIDIA's modelled
  TP=2 tables beside ours;
- :func:`training_measurements`, :func:`published_runs`, :func:`training_validation`: the
  training model against measured runs.

Every model call takes ``cal`` (a :class:`~multigpu.comm.calibration.Calibration`; None: the shipped
one). The chapter's figures and the values its prose cites are drawn and gathered by
:mod:`multigpu.book.ch03_bottlenecks`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.compute import inference, models, training
from multigpu.evidence import intervals, measurements
from multigpu.hardware import catalog
from multigpu.market import search

TRAIN_MODEL = "llama3.1-8b"
SEQ = 2048
#: Sequences per GPU per step in the training cases (65,536 tokens per GPU per step).
SEQS_PER_GPU = 32
SERVE_MODEL = "llama3.1-70b"
INPUT_TOKENS, OUTPUT_TOKENS = 8192, 256
#: The two H200 systems of NVIDIA's comparison: NVSwitch, and the hypothetical 7 x 128 GB/s mesh.
SWITCH, MESH = "hgx-h200", "h200-p2p-8"


@dataclass(frozen=True)
class Cluster:
    """One interconnect to compare: ``nodes`` nodes of catalogue system ``system``, and how to print it."""

    label: str
    system: str
    nodes: int = 1

    @property
    def gpus(self) -> int:
        """GPUs in the setup."""
        return catalog.system(self.system).gpus_per_node * self.nodes


#: The interconnects of the training comparisons: the same A100 on PCIe and behind NVSwitch, the same
#: H200 on a point-to-point mesh and behind NVSwitch, and four NVSwitch nodes joined by InfiniBand.
TRAINING_SETUPS = (
    Cluster("8x A100, PCIe", "pcie-a100-8"),
    Cluster("8x A100, NVSwitch", "dgx-a100"),
    Cluster("8x H200, NVLink mesh", MESH),
    Cluster("8x H200, NVSwitch", SWITCH),
    Cluster("4 x 8 H200, NVSwitch + IB", SWITCH, 4),
)
#: Layouts of :func:`training_breakdown`: (label, tp, pp); data parallelism takes the remaining GPUs.
LAYOUTS = (("DP only", 1, 1), ("TP 8", 8, 1), ("TP 2 x PP 2", 2, 2))
#: Decode cases of :func:`decode_breakdown` and :func:`decode_ratio`: (setup, tensor-parallel degree).
DECODE_CASES = (
    (Cluster("8x A100, PCIe", "pcie-a100-8"), 4),
    (Cluster("8x A100, PCIe", "pcie-a100-8"), 8),
    (Cluster("8x A100, NVSwitch", "dgx-a100"), 8),
    (Cluster("8x H200, NVLink mesh", MESH), 2),
    (Cluster("8x H200, NVSwitch", SWITCH), 2),
    (Cluster("8x H200, NVLink mesh", MESH), 8),
    (Cluster("8x H200, NVSwitch", SWITCH), 8),
)
PARTS = ("compute", "bubble", "optimizer", "tp", "pp", "dp")
PART_NAMES = {"compute": "compute", "bubble": "pipeline bubble", "optimizer": "optimizer step",
              "tp": "exposed TP communication",
              "pp": "exposed PP communication", "dp": "exposed DP communication"}


def _train(setup: Cluster, tp: int, pp: int, seqs_per_gpu: int = SEQS_PER_GPU, gpus: int | None = None,
           global_batch: int | None = None, model_id: str = TRAIN_MODEL, cal: Calibration | None = None) -> dict:
    gpus = setup.gpus if gpus is None else gpus
    batch = seqs_per_gpu * gpus if global_batch is None else global_batch
    return training.step(model_id, setup.system, gpus, tp, pp, batch, 1, seq=SEQ, cal=cal)


# ----------------------------------------------------------------------------- training step breakdown


def training_breakdown(setups: Sequence[Cluster] = TRAINING_SETUPS, layouts: Sequence[tuple[str, int, int]] = LAYOUTS,
                       cal: Calibration | None = None) -> pd.DataFrame:
    """One training step of :data:`TRAIN_MODEL`, split into its parts, for each setup and layout.

    Columns: ``setup``, ``layout``, ``gpus``, ``tp``, ``pp``, ``dp``,
    ``step_s``, the parts in seconds (``compute_s``, ``bubble_s``, ``optimizer_s``, ``tp_s``,
    ``pp_s``, ``dp_s``: exposed communication of each kind), the same parts in
    percent of the step (``compute_pct``, ...), ``comm_pct`` (all exposed
    communication), ``mfu_pct``, ``fits`` (memory per GPU within the GPU's), and the step's 90 % prediction
    interval (``step_s_lo``, ``step_s_hi``: the band of published training runs,
    :func:`multigpu.evidence.intervals.run_band`).
    """
    band = intervals.run_band("training step time")
    rows = []
    for setup in setups:
        for label, tp, pp in layouts:
            r = _train(setup, tp, pp, cal=cal)
            parts = {"compute": r.compute_s, "bubble": r.bubble_s, "optimizer": r.optimizer_s, **{k: getattr(r.exposed_comm_s, k)
                                                                             for k in ("tp", "pp", "dp")}}
            step = r.step_time_s
            row = {"setup": setup.label, "layout": label, "gpus": setup.gpus, "tp": tp, "pp": pp, "dp": r.dp,
                   "step_s": step, **band.bounds("step_s", step)}
            row.update({f"{k}_s": v for k, v in parts.items()})
            row.update({f"{k}_pct": 100 * v / step for k, v in parts.items()})
            row["comm_pct"] = 100 * sum(parts[k] for k in ("tp", "pp", "dp")) / step
            row.update(mfu_pct=100 * r.mfu, fits=r.fits)
            rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- decode step breakdown


def decode_breakdown(cases: Sequence[tuple[Cluster, int]] = DECODE_CASES, batches: Sequence[int] = (1, 32),
                     dtype: str = "bf16", model_id: str = SERVE_MODEL, cal: Calibration | None = None) -> pd.DataFrame:
    """One decode step of ``model_id`` (8K-token prompts), split into memory reads and all-reduces.

    Columns: ``setup``, ``tp``, ``batch``, ``weights_ms`` and ``kv_cache_ms``
    (reading the GPU's share of the weights and of the batch's KV cache at the
    GPU's measured read-only HBM bandwidth), ``layer_fixed_ms`` (the fixed kernel
    time of the layers, ``decode_layer_overhead_s`` each), ``other_compute_ms`` (what the step's FLOPs take
    beyond those reads; 0 while decode is memory-bound), ``allreduce_ms`` (the
    two tensor-parallel all-reduces of every layer), ``step_ms`` with its 90 % prediction interval
    (``step_ms_lo``, ``step_ms_hi``: the band of published serving runs' throughput, turned over),
    ``allreduce_pct`` (share of the step) and ``fits``.
    """
    band = intervals.run_band("serving throughput")
    model = models.model(model_id)
    kv_len = INPUT_TOKENS + OUTPUT_TOKENS / 2  # as inference.run: the mean context over the output
    rows = []
    for setup, tp in cases:
        gpu = catalog.gpu(catalog.system(setup.system).gpu)
        hbm_Bps = gpu.mem_bw_GBps * 1e9 * inference.hbm_read_efficiency(gpu.id)
        r = inference.run(model_id, setup.system, tp, np.asarray(batches), INPUT_TOKENS, OUTPUT_TOKENS, dtype=dtype,
                          cal=cal)
        read = models.decode_bytes_per_step(model, np.asarray(batches), kv_len, dtype, dtype)
        weights = np.asarray(read["weights_bytes"]) / tp / hbm_Bps * np.ones(len(batches))
        kv = np.asarray(read["kv_cache_bytes"]) * models.kv_share_per_gpu(model, tp) / hbm_Bps
        for i, batch in enumerate(batches):
            compute, comm = r.decode_compute_s[i], r.decode_comm_s[i]
            other = compute - weights[i] - kv[i] - r.decode_fixed_s
            other = other if other > 1e-9 * compute else 0.0  # rounding residue of a memory-bound step
            rows.append({"setup": setup.label, "tp": tp, "batch": int(batch), "weights_ms": 1e3 * weights[i],
                         "kv_cache_ms": 1e3 * kv[i], "layer_fixed_ms": 1e3 * r.decode_fixed_s,
                         "other_compute_ms": 1e3 * other,
                         "allreduce_ms": 1e3 * comm, "step_ms": 1e3 * (compute + comm),
                         **band.bounds("step_ms", 1e3 * (compute + comm), rate=True),
                         "allreduce_pct": 100 * comm / (compute + comm), "fits": bool(r.fits[i])})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- scaling efficiency

#: GPU counts of :func:`scaling` for each kind of parallelism.
SCALING_COUNTS = {"DP": (1, 2, 4, 8, 16, 32, 64), "TP": (1, 2, 4, 8), "PP": (1, 2, 4, 8, 16, 32)}
SCALING_SETUPS = TRAINING_SETUPS[:4]


def scaling(setups: Sequence[Cluster] = SCALING_SETUPS,
            counts: dict[str, Sequence[int]] | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """Scaling efficiency of data, tensor and pipeline parallelism against GPU count.

    - ``DP`` (weak scaling): ``n`` GPUs, each with :data:`SEQS_PER_GPU`
      sequences per step (ZeRO-1); efficiency = step time on 1 GPU / step
      time on ``n``. Beyond one node the setup's own network joins the nodes.
    - ``TP`` and ``PP`` (strong scaling): one global batch of
      ``8 x SEQS_PER_GPU`` sequences split ``n`` ways; efficiency = time on
      1 GPU / (``n`` x time on ``n``).

    Columns: ``setup``, ``kind``, ``gpus``, ``nodes``, ``step_s``,
    ``efficiency_pct``, ``compute_efficiency_pct`` (the same ratio with
    compute and optimizer time only: what smaller matrix multiplies cost
    without any communication, and ZeRO's shard of the optimizer step), ``comm_pct`` (exposed communication share of the step),
    ``bubble_pct``. Memory is not checked: one GPU cannot hold the model's
    training state; it is the reference rate, not a runnable layout.
    """
    counts = SCALING_COUNTS if counts is None else counts
    rows = []
    for setup in setups:
        per_node = catalog.system(setup.system).gpus_per_node
        for kind, ns in counts.items():
            base = None
            for n in ns:
                tp, pp = {"DP": (1, 1), "TP": (n, 1), "PP": (1, n)}[kind]
                batch = SEQS_PER_GPU * (n if kind == "DP" else per_node)
                r = _train(setup, tp, pp, gpus=n, global_batch=batch, cal=cal)
                comm = r.exposed_comm_s.total
                if base is None:
                    base = r
                work = n if kind == "DP" else 1  # DP does n times the work of one GPU
                rows.append({"setup": setup.label, "kind": kind, "gpus": n, "nodes": max(1, n // per_node),
                             "step_s": r.step_time_s,
                             "efficiency_pct": 100 * work * base.step_time_s / (n * r.step_time_s),
                             "compute_efficiency_pct": 100 * work * (base.compute_s + base.optimizer_s)
                             / (n * (r.compute_s + r.optimizer_s)),
                             "comm_pct": 100 * comm / r.step_time_s,
                             "bubble_pct": 100 * r.bubble_s / r.step_time_s})
    return pd.DataFrame(rows)


def amdahl(setups: Sequence[Cluster] = SCALING_SETUPS, tp: int = 8, cal: Calibration | None = None) -> pd.DataFrame:
    """Amdahl's limit of tensor parallelism: what the exposed communication at ``tp`` GPUs allows.

    With one GPU's time ``t1`` and an exposed communication time ``C`` that
    does not shrink as GPUs are added (a ring or two-shot all-reduce sends
    ``2(n-1)/n`` of the buffer per GPU, nearly constant in ``n``), no degree
    can beat ``t1 / C``. Columns: ``setup``, ``tp``, ``one_gpu_s``,
    ``compute_s`` and ``exposed_comm_s`` at ``tp``, ``comm_pct`` (share of
    the step), ``speedup_x`` (reached), ``compute_only_speedup_x`` (with
    free communication: smaller matrix multiplies only) and ``limit_x``
    (``t1 / C``).
    """
    rows = []
    for setup in setups:
        batch = SEQS_PER_GPU * catalog.system(setup.system).gpus_per_node
        one = _train(setup, 1, 1, gpus=1, global_batch=batch, cal=cal)
        r = _train(setup, tp, 1, gpus=tp, global_batch=batch, cal=cal)
        comm = r.exposed_comm_s.total
        rows.append({"setup": setup.label, "tp": tp, "one_gpu_s": one.step_time_s, "compute_s": r.compute_s,
                     "exposed_comm_s": comm, "comm_pct": 100 * comm / r.step_time_s,
                     "speedup_x": one.step_time_s / r.step_time_s,
                     "compute_only_speedup_x": one.step_time_s / r.compute_s,
                     "limit_x": one.step_time_s / comm})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- batch at which comm stops dominating

#: Data-parallel cases of :func:`dp_batch_sweep`: every GPU of the setup is a data-parallel rank.
DP_SETUPS = (
    Cluster("8x A100, PCIe", "pcie-a100-8"),
    Cluster("4 x 8 A100, PCIe + 100 GbE", "pcie-a100-8", 4),
    Cluster("8x H200, NVLink mesh", MESH),
    Cluster("4 x 8 H200, NVSwitch + IB", SWITCH, 4),
    Cluster("32 x 8 H200, NVSwitch + IB", SWITCH, 32),
)
DP_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def dp_batch_sweep(setups: Sequence[Cluster] = DP_SETUPS, seqs_per_gpu: Sequence[int] = DP_BATCHES,
                   cal: Calibration | None = None) -> pd.DataFrame:
    """Data-parallel training (ZeRO-1, every GPU a replica) against the sequences each GPU runs per step.

    The gradient reduction happens once per step whatever the batch, so its
    exposed share falls as gradient accumulation adds micro-batches. Columns:
    ``setup``, ``gpus``, ``seqs_per_gpu``, ``step_s``, ``dp_comm_s``
    (exposed), ``dp_comm_pct`` and ``mfu_pct``.
    """
    rows = []
    for setup in setups:
        for k in seqs_per_gpu:
            r = _train(setup, 1, 1, seqs_per_gpu=k, cal=cal)
            dp = r.exposed_comm_s.dp
            rows.append({"setup": setup.label, "gpus": setup.gpus, "seqs_per_gpu": k, "step_s": r.step_time_s,
                         "dp_comm_s": dp, "dp_comm_pct": 100 * dp / r.step_time_s, "mfu_pct": 100 * r.mfu})
    return pd.DataFrame(rows)


def dp_crossover(sweep: pd.DataFrame, share_pct: float = 50.0) -> pd.DataFrame:
    """The fewest sequences per GPU per step at which exposed DP communication is under ``share_pct`` of
    the step (communication no longer dominates); NaN if no batch of the sweep gets there.

    Columns: ``setup``, ``gpus``, ``seqs_per_gpu``, ``tokens_per_gpu`` (x :data:`SEQ`), ``share_at_1_pct``
    (the share with one sequence per GPU).
    """
    rows = []
    for setup, part in sweep.groupby("setup", sort=False):
        ok = part[part["dp_comm_pct"] < share_pct]
        k = float(ok["seqs_per_gpu"].min()) if len(ok) else float("nan")
        rows.append({"setup": setup, "gpus": int(part["gpus"].iloc[0]), "seqs_per_gpu": k,
                     "tokens_per_gpu": k * SEQ, "share_at_1_pct": float(part["dp_comm_pct"].iloc[0])})
    return pd.DataFrame(rows)


DECODE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128)


def decode_ratio(cases: Sequence[tuple[Cluster, int]] = DECODE_CASES, batches: Sequence[int] = DECODE_BATCHES,
                 dtype: str = "bf16", model_id: str = SERVE_MODEL, cal: Calibration | None = None) -> pd.DataFrame:
    """All-reduce time over compute (memory-read) time of one decode step, against batch.

    Columns: ``setup``, ``tp``, ``batch``, ``allreduce_ms``, ``compute_ms``,
    ``ratio`` (above 1: the GPUs spend longer communicating than computing)
    and ``fits``.
    """
    rows = []
    for setup, tp in cases:
        r = inference.run(model_id, setup.system, tp, np.asarray(batches), INPUT_TOKENS, OUTPUT_TOKENS, dtype=dtype,
                          cal=cal)
        for i, batch in enumerate(batches):
            comm, compute = r.decode_comm_s[i], r.decode_compute_s[i]
            rows.append({"setup": setup.label, "tp": tp, "batch": int(batch), "allreduce_ms": 1e3 * comm,
                         "compute_ms": 1e3 * compute, "ratio": comm / compute, "fits": bool(r.fits[i])})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- DP against TP (C27)


def scaled_network(bandwidth: float = 1.0, latency: float = 1.0, cal: Calibration | None = None) -> Calibration:
    """A what-if calibration: every link's achievable bandwidth scaled by ``bandwidth`` and every
    collective latency (NCCL base and per-hop latencies, the fabrics' own, custom-kernel launch and
    synchronisation, the host-bounce hop) by ``latency``."""
    base = calibration.resolve(cal)
    values = {}
    for c in base.constants:
        if c.name in ("sm_efficiency", "ce_efficiency", "ll_max_bw_GBps"):
            values[(c.name, c.key)] = c.value * bandwidth
        elif c.name in ("base_latency_us", "hop_latency_us", "custom_latency_us", "fabric_latency_us",
                        "library_net_latency_us") or (
                c.name == "bounce" and c.key == "hop_latency_us"):
            values[(c.name, c.key)] = c.value * latency
    return base.replace(values, note=f"network what-if: bandwidth x{bandwidth:g}, latency x{latency:g}")


#: Cases of :func:`sensitivity`: (label, setup, kind, tp); kind "train" (Llama 3.1 8B, all 8 GPUs) or
#: "decode" (Llama 3.1 70B, batch 1, TP only).
SENSITIVITY_CASES = (
    ("training, DP 8", TRAINING_SETUPS[0], "train", 1),
    ("training, TP 8", TRAINING_SETUPS[0], "train", 8),
    ("decode, TP 8", TRAINING_SETUPS[0], "decode", 8),
    ("training, DP 8", TRAINING_SETUPS[1], "train", 1),
    ("training, TP 8", TRAINING_SETUPS[1], "train", 8),
    ("decode, TP 8", TRAINING_SETUPS[1], "decode", 8),
)


def _case_time(setup: Cluster, kind: str, tp: int, cal: Calibration | None = None) -> tuple[float, float, float]:
    """(step time, exposed communication, bytes each GPU sends per step) of one sensitivity case."""
    if kind == "train":
        r = _train(setup, tp, 1, cal=cal)
        model = models.model(TRAIN_MODEL)
        n = setup.gpus
        if tp == 1:  # ZeRO-1: reduce-scatter FP32 gradients, all-gather BF16 weights
            sent = (n - 1) / n * model.params_total * (training.GRAD_REDUCE_BYTES + 2)
        else:  # 2 all-reduces per layer forward and 2 backward, of b s h BF16 elements, each micro-batch
            sent = 2 * (tp - 1) / tp * SEQ * model.hidden * 2 * 4 * model.layers * r.microbatches
        return r.step_time_s, r.exposed_comm_s.total, sent
    r = inference.run(SERVE_MODEL, setup.system, tp, 1, INPUT_TOKENS, OUTPUT_TOKENS, cal=cal)
    model = models.model(SERVE_MODEL)
    sent = 2 * (tp - 1) / tp * model.hidden * 2 * 2 * model.layers  # one token, 2 all-reduces per layer
    return r.decode_step_s, r.decode_comm_s, sent


#: Chapter 3's case for hybrid sharding: Llama 3.1 8B under PyTorch FSDP (ZeRO 3) on 8 nodes of 8 GPUs, one
#: 1,024-token sequence a GPU per micro-batch and 4 micro-batches a step, so that each pass's weight gathers
#: outlast its compute
HYBRID_JOB = dict(model_id="llama3.1-8b", gpus=64, tp=1, pp=1, global_batch=256, micro_batch=1, seq=1024,
                  zero_stage=3, stack="pytorch-fsdp")
#: The two networks it is run on: four 100 Gb/s EFA links per node (AWS p4d) and a 400 Gb/s NIC per GPU (HGX H100)
HYBRID_SYSTEMS = ("hgx-a100-efa", "hgx-h100")


def hybrid_sharding(cal: Calibration | None = None) -> pd.DataFrame:
    """:data:`HYBRID_JOB` on each of :data:`HYBRID_SYSTEMS`, its ZeRO shards over every GPU (``shard_group`` 0)
    or over each node's GPUs (hybrid sharding, ``shard_group`` = GPUs per node): one row per system and group,
    with ``step_time_s``, ``dp_exposed_s`` (the data-parallel communication compute does not hide, s) and
    ``memory_per_gpu_GB`` (GB, 1e9 bytes)."""
    rows = []
    for system_id in HYBRID_SYSTEMS:
        for group in (0, catalog.system(system_id).gpus_per_node):
            r = training.step(system_id=system_id, shard_group=group, cal=cal, **HYBRID_JOB)
            rows.append({"system_id": system_id, "shard_group": group, "step_time_s": r.step_time_s,
                         "dp_exposed_s": r.exposed_comm_s.dp, "memory_per_gpu_GB": r.memory_per_gpu_GB})
    return pd.DataFrame(rows)


def sensitivity(cases: Sequence[tuple[str, Cluster, str, int]] = SENSITIVITY_CASES,
                cal: Calibration | None = None) -> pd.DataFrame:
    """How much slower each case gets when every link's bandwidth halves, or every latency doubles.

    Columns: ``setup``, ``case``, ``bytes_per_gpu_GB`` (sent per training step
    or per decode step), ``time_s`` (step), ``comm_pct`` (exposed share),
    ``half_bandwidth_pct`` and ``double_latency_pct`` (increase of the step
    time, %).
    """
    rows = []
    for label, setup, kind, tp in cases:
        base, comm, sent = _case_time(setup, kind, tp, cal=cal)
        slow_bw = _case_time(setup, kind, tp, cal=scaled_network(bandwidth=0.5, cal=cal))[0]
        slow_lat = _case_time(setup, kind, tp, cal=scaled_network(latency=2.0, cal=cal))[0]
        rows.append({"setup": setup.label, "case": label, "bytes_per_gpu_GB": sent / 1e9, "time_s": base,
                     "comm_pct": 100 * comm / base, "half_bandwidth_pct": 100 * (slow_bw / base - 1),
                     "double_latency_pct": 100 * (slow_lat / base - 1)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- the article's inference claims


def tp_bytes_per_query(tps: Sequence[int] = (2, 4, 8), dtypes: Sequence[str] = ("bf16", "fp8"),
                       model_id: str = SERVE_MODEL) -> pd.DataFrame:
    """Bytes each GPU sends for tensor parallelism over one query of 8K input and 256 output tokens.

    Columns: ``dtype`` (of the activations all-reduced), ``tp``,
    ``per_token_MB`` (both all-reduces of every layer), ``per_query_GB``
    (1e9 bytes) and ``per_query_GiB`` (2^30 bytes).
    """
    rows = []
    for dtype in dtypes:
        for tp in tps:
            total = inference.tp_bytes_per_query_per_gpu(model_id, tp, INPUT_TOKENS, OUTPUT_TOKENS, dtype)
            rows.append({"dtype": dtype, "tp": tp, "per_token_MB": total / (INPUT_TOKENS + OUTPUT_TOKENS) / 1e6,
                         "per_query_GB": total / 1e9, "per_query_GiB": total / 2**30})
    return pd.DataFrame(rows)


def volume_vs_batch(batches: Sequence[int] = (1, 4, 16, 32, 64), systems: Sequence[str] = (SWITCH, MESH),
                    tp: int = 2, dtype: str = "bf16", model_id: str = SERVE_MODEL,
                    cal: Calibration | None = None) -> pd.DataFrame:
    """Tensor-parallel traffic and time of one decode step against batch (C13).

    Columns: ``system``, ``batch``, ``per_step_MB`` (bytes each GPU sends in
    one decode step), ``per_token_MB`` (the same per generated token:
    constant), ``allreduce_ms`` (the step's all-reduces), ``allreduce_per_token_us``.
    """
    model = models.model(model_id)
    b = np.asarray(batches)
    per_token = 2 * model.layers * model.hidden * models.dtype_bytes(dtype) * 2 * (tp - 1) / tp
    rows = []
    for system in systems:
        r = inference.run(model_id, system, tp, b, INPUT_TOKENS, OUTPUT_TOKENS, dtype=dtype, cal=cal)
        for i, batch in enumerate(batches):
            rows.append({"system": system, "batch": int(batch), "per_step_MB": batch * per_token / 1e6,
                         "per_token_MB": per_token / 1e6, "allreduce_ms": 1e3 * r.decode_comm_s[i],
                         "allreduce_per_token_us": 1e6 * r.decode_comm_s[i] / batch})
    return pd.DataFrame(rows)


#: NVIDIA's server figures, bidirectional GB/s per GPU: one point-to-point link, and NVLink 4 through the switch.
ARTICLE_GBps_BIDIR = {MESH: 128.0, SWITCH: 900.0}
ARTICLE_GB = 20.0


def _query_allreduce_s(system: str, tp: int = 2, dtype: str = "bf16",
                       model_id: str = SERVE_MODEL, cal: Calibration | None = None) -> tuple[float, float]:
    """(prefill, decode) all-reduce time of one query served alone (batch 1), seconds."""
    model = models.model(model_id)
    width = models.dtype_bytes(dtype)
    per_layer = 2 * model.layers
    sizes = np.array([INPUT_TOKENS * model.hidden * width, model.hidden * width], dtype=float)
    algorithms = ("auto", *(x for x in ("direct", "two-shot")
                            if x in collectives.available("allreduce", system, tp, cal=cal)))
    best = np.min([collectives.time_us("allreduce", system, tp, sizes, algorithm=a, cal=cal)
                   for a in algorithms], axis=0) * 1e-6
    return per_layer * best[0], per_layer * OUTPUT_TOKENS * best[1]


def transfer_times(systems: Sequence[str] = (MESH, SWITCH), cal: Calibration | None = None) -> pd.DataFrame:
    """The article's 156 ms and 22 ms (C18), and what the model gives, step by step.

    Rows (``method``): the article's arithmetic (20 GB over the bidirectional
    figure), the same over the per-direction rate, one 20 GB all-reduce in the
    collective model (TP=2: each GPU sends the whole buffer; achievable
    fraction of line rate, best algorithm), and the real schedule of one
    Llama 3.1 70B query alone on two GPUs (two all-reduces per layer for the
    8K-token prefill and for each of the 256 decode steps). Columns: ``method``,
    one ``<system>_ms`` per system and ``ratio_x`` (first over second).
    """
    rows = []
    def add(method: str, values: list[float]) -> None:
        rows.append({"method": method, **{f"{s}_ms": v for s, v in zip(systems, values)},
                     "ratio_x": values[0] / values[1]})
    add("article: 20 GB / bidirectional GB/s", [1e3 * ARTICLE_GB / ARTICLE_GBps_BIDIR[s] for s in systems])
    add("20 GB / per-direction GB/s", [1e3 * ARTICLE_GB / (ARTICLE_GBps_BIDIR[s] / 2) for s in systems])
    add("one 20 GB all-reduce, collective model",
        [1e-3 * min(collectives.time_us("allreduce", s, 2, ARTICLE_GB * 1e9, algorithm=a, cal=cal)
                    for a in collectives.available("allreduce", s, 2, cal=cal)) for s in systems])
    split = [_query_allreduce_s(s, cal=cal) for s in systems]
    add("query schedule: prefill all-reduces", [1e3 * p for p, _ in split])
    add("query schedule: decode all-reduces", [1e3 * d for _, d in split])
    add("query schedule: total", [1e3 * (p + d) for p, d in split])
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- NVIDIA's modelled TP=2 tables

_TABLE2_ROWS, _TABLE3_ROWS = range(83, 88), range(88, 94)


def nvidia_table2() -> pd.DataFrame:
    """NVIDIA's Table 2 (throughput at a per-user rate, Llama 3.1 70B, H200, TP=2, 8K/256), as stored in
    ``data/measurements.csv`` (rows 83-87, ``vendor-modeled``).

    Columns: ``rate_tokens_per_s_per_user``, ``tp1_batch`` and
    ``tp1_tokens_per_s_per_gpu`` (NVIDIA's single-GPU column: row 83's
    conditions say TP=1 meets only the lowest rate; 0 where it does not),
    ``mesh_batch``, ``mesh_tokens_per_s_per_gpu``, ``switch_batch``,
    ``switch_tokens_per_s_per_gpu``, ``benefit_x`` (switch / mesh).
    """
    frame = measurements.measurements().set_index("id")
    tp1 = re.search(r"TP=1 meets only (\d+) tok/s/user \((\d+) tok/s/GPU at bs (\d+)\)",
                    frame.loc[_TABLE2_ROWS[0], "conditions"])
    tp1_rate, tp1_tput, tp1_batch = (float(x) for x in tp1.groups())
    rows = []
    for i in _TABLE2_ROWS:
        row = frame.loc[i]
        rate = float(re.search(r"at (\d+) tok/s/user", row["collective_or_metric"]).group(1))
        m = re.fullmatch(r"(\d+) \(bs (\d+)\) vs (\d+) \(bs (\d+)\)", row["value"])
        mesh, mesh_b, switch, switch_b = (float(x) for x in m.groups())
        meets = rate <= tp1_rate
        rows.append({"rate_tokens_per_s_per_user": rate, "tp1_batch": int(tp1_batch) if meets else 0,
                     "tp1_tokens_per_s_per_gpu": tp1_tput if meets else 0.0, "mesh_batch": int(mesh_b),
                     "mesh_tokens_per_s_per_gpu": mesh, "switch_batch": int(switch_b),
                     "switch_tokens_per_s_per_gpu": switch, "benefit_x": switch / mesh})
    return pd.DataFrame(rows)


def nvidia_table3() -> pd.DataFrame:
    """NVIDIA's Table 3 (throughput at a fixed batch), rows 83-93 of ``data/measurements.csv``.

    Columns: ``batch``, ``mesh_tokens_per_s_per_gpu``, ``switch_tokens_per_s_per_gpu``, ``benefit_x``.
    """
    frame = measurements.measurements().set_index("id")
    rows = []
    for i in _TABLE3_ROWS:
        row = frame.loc[i]
        batch = int(re.search(r"at batch (\d+)", row["collective_or_metric"]).group(1))
        mesh, switch = (float(x) for x in re.fullmatch(r"(\d+) vs (\d+)", row["value"]).groups())
        rows.append({"batch": batch, "mesh_tokens_per_s_per_gpu": mesh, "switch_tokens_per_s_per_gpu": switch,
                     "benefit_x": switch / mesh})
    return pd.DataFrame(rows)


def compare_fixed_batch(dtypes: Sequence[str] = ("bf16", "fp8"), cal: Calibration | None = None) -> pd.DataFrame:
    """Our model beside NVIDIA's Table 3: tokens/s per GPU at each batch, mesh and switch, TP=2.

    Columns: ``batch``, ``nvidia_mesh``, ``nvidia_switch``, ``nvidia_benefit_x``, then for each dtype
    ``<dtype>_mesh``, ``<dtype>_switch``, ``<dtype>_benefit_x`` (tokens/s per GPU; benefit = switch / mesh).
    """
    nv = nvidia_table3()
    out = pd.DataFrame({"batch": nv["batch"], "nvidia_mesh": nv["mesh_tokens_per_s_per_gpu"],
                        "nvidia_switch": nv["switch_tokens_per_s_per_gpu"], "nvidia_benefit_x": nv["benefit_x"]})
    for dtype in dtypes:
        values = {s: inference.run(SERVE_MODEL, system, 2, nv["batch"].to_numpy(), INPUT_TOKENS, OUTPUT_TOKENS,
                                   dtype=dtype, cal=cal).tokens_per_s_per_gpu for s, system in (("mesh", MESH),
                                                                                         ("switch", SWITCH))}
        out[f"{dtype}_mesh"], out[f"{dtype}_switch"] = values["mesh"], values["switch"]
        out[f"{dtype}_benefit_x"] = values["switch"] / values["mesh"]
    return out


def compare_at_rate(dtypes: Sequence[str] = ("bf16", "fp8"), cal: Calibration | None = None) -> pd.DataFrame:
    """Our model beside NVIDIA's Table 2: the best throughput per GPU that keeps each per-user rate.

    One row per (rate, source); ``source`` is "NVIDIA (vendor-modelled)" or "our model, <dtype>".
    Columns: ``rate_tokens_per_s_per_user``, ``source``, ``tp1_batch``, ``tp1_tokens_per_s_per_gpu``
    (one GPU), ``mesh_batch``, ``mesh_tokens_per_s_per_gpu``, ``switch_batch``,
    ``switch_tokens_per_s_per_gpu``, ``benefit_x``. A batch of 0 means the rate is not met.
    """
    nv = nvidia_table2()
    rows = []
    for _, n in nv.iterrows():
        rate = n["rate_tokens_per_s_per_user"]
        rows.append({"rate_tokens_per_s_per_user": rate, "source": "NVIDIA (vendor-modelled)",
                     **{k: n[k] for k in ("tp1_batch", "tp1_tokens_per_s_per_gpu", "mesh_batch",
                                          "mesh_tokens_per_s_per_gpu", "switch_batch",
                                          "switch_tokens_per_s_per_gpu", "benefit_x")}})
        for dtype in dtypes:
            best = {s: search.serving_option(SERVE_MODEL, system, tp, INPUT_TOKENS, OUTPUT_TOKENS, rate,
                                             dtype=dtype, cal=cal)
                    for s, system, tp in (("tp1", SWITCH, 1), ("mesh", MESH, 2), ("switch", SWITCH, 2))}
            mesh = best["mesh"].tokens_per_s_per_gpu
            rows.append({"rate_tokens_per_s_per_user": rate, "source": f"our model, {dtype}",
                         **{f"{s}_batch": best[s].batch for s in best},
                         **{f"{s}_tokens_per_s_per_gpu": best[s].tokens_per_s_per_gpu for s in best},
                         "benefit_x": best["switch"].tokens_per_s_per_gpu / mesh if mesh else np.nan})
    columns = ["rate_tokens_per_s_per_user", "source", "tp1_batch", "tp1_tokens_per_s_per_gpu", "mesh_batch",
               "mesh_tokens_per_s_per_gpu", "switch_batch", "switch_tokens_per_s_per_gpu", "benefit_x"]
    frame = pd.DataFrame(rows)[columns]
    for column in ("tp1_batch", "mesh_batch", "switch_batch"):
        frame[column] = frame[column].astype("Int64")
    return frame


def nvidia_identity() -> pd.DataFrame:
    """NVIDIA's Table 2 against batch x rate per user / GPUs (2): the throughput per GPU if every GPU-second
    went to decoding. A ratio below 1 is the share left after the prefills, when the per-user rate counts
    decoding only and the throughput whole queries (this book's definitions, :mod:`multigpu.compute.inference`).

    Columns: ``rate_tokens_per_s_per_user``, then for ``mesh`` and ``switch``:
    ``<s>_printed`` (tokens/s per GPU as printed), ``<s>_identity``
    (batch x rate / 2) and ``<s>_ratio`` (printed / identity).
    """
    nv = nvidia_table2()
    out = pd.DataFrame({"rate_tokens_per_s_per_user": nv["rate_tokens_per_s_per_user"]})
    for s in ("mesh", "switch"):
        out[f"{s}_printed"] = nv[f"{s}_tokens_per_s_per_gpu"]
        out[f"{s}_identity"] = nv[f"{s}_batch"] * nv["rate_tokens_per_s_per_user"] / 2
        out[f"{s}_ratio"] = out[f"{s}_printed"] / out[f"{s}_identity"]
    return out


def model_identity(dtype: str = "fp8", cal: Calibration | None = None) -> pd.DataFrame:
    """Our model's picks at NVIDIA's per-user rates against the same product, batch x rate / 2 (TP=2, H200).

    Columns: ``rate_tokens_per_s_per_user``, ``mesh_ratio``, ``switch_ratio`` (throughput per GPU over batch x
    rate / 2 at the batch the model picks; NaN where the rate is not met).
    """
    ours = compare_at_rate((dtype,), cal=cal)
    ours = ours[ours["source"] == f"our model, {dtype}"].reset_index(drop=True)
    out = pd.DataFrame({"rate_tokens_per_s_per_user": ours["rate_tokens_per_s_per_user"]})
    for s in ("mesh", "switch"):
        batch = ours[f"{s}_batch"].astype(float).replace(0, np.nan)
        out[f"{s}_ratio"] = ours[f"{s}_tokens_per_s_per_gpu"] / (batch * ours["rate_tokens_per_s_per_user"] / 2)
    return out


def throughput_curve(system: str, dtype: str, tp: int = 2, max_batch: int = 64,
                     cal: Calibration | None = None) -> pd.DataFrame:
    """Tokens/s per user and per GPU for batches 1 to ``max_batch`` (those that fit), TP=2, 8K/256, with the
    throughput's 90 % prediction interval (``tokens_per_s_per_gpu_lo``, ``_hi``: the band of published serving
    runs, :func:`multigpu.evidence.intervals.run_band`)."""
    batches = np.arange(1, max_batch + 1)
    r = inference.run(SERVE_MODEL, system, tp, batches, INPUT_TOKENS, OUTPUT_TOKENS, dtype=dtype, cal=cal)
    frame = pd.DataFrame({"batch": batches, "tokens_per_s_per_user": r.tokens_per_s_per_user,
                          "tokens_per_s_per_gpu": r.tokens_per_s_per_gpu,
                          **intervals.run_band("serving throughput").bounds("tokens_per_s_per_gpu",
                                                                            r.tokens_per_s_per_gpu),
                          "fits": r.fits})
    return frame[frame["fits"]].drop(columns="fits")
