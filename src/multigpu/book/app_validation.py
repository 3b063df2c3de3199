"""Appendix, model validation: its tables' print form and the values its prose cites (its figures are
:mod:`multigpu.book.app_validation_figures`).

The comparisons come from :mod:`multigpu.evidence.validation`, :mod:`multigpu.evidence.sweeps` and
:mod:`multigpu.evidence.sweepchecks`; this module lays them out for the page: NVIDIA's Table 3 beside ours
(:func:`fixed_batch_table`), the published sweeps, held-out ones first, then the sealed ones (opened once,
:data:`SWEEPS_OPENED`), how far apart two published runs of one machine are (:func:`spread_table`), what one
latency factor per sweep carries (:func:`latency_factor_table`, :func:`anchored_table`), and the training and
serving runs. The ``*_facts`` functions return the values one section of the prose cites, by glue name, and
:func:`facts` all of them (``glue_all(app_validation.facts(cal))``), each text fact in English and, as
``<name>_zh``, in Chinese; the tables' Chinese headers are :data:`TABLE_HEADERS`, their cells' words
:data:`CELL_WORDS`.

Errors are ``predicted / measured - 1`` in percent (``_pct``, ``e_<ref>``); ``_rows``, ``_within`` and ``n_``
values are row counts; ``_ref`` values and ``small_systems`` are text. Nothing here depends on a price file.
"""

from __future__ import annotations

import functools
import math
import re

from collections.abc import Callable

import pandas as pd

from multigpu.book import lang, vocabulary
from multigpu.book.glue import Facts, plain
from multigpu.book.lang import N_, _
from multigpu.comm import calibration, expert
from multigpu.comm.calibration import Calibration
from multigpu.common import units
from multigpu.compute import efficiency, gemm, inference, models
from multigpu.evidence import (
    bottlenecks,
    computefit,
    decodefit,
    deployment,
    diagnosis,
    epfit,
    health,
    intervals,
    layoutorder,
    pcieside,
    fitquality,
    releasefit,
    runmisses,
    runs,
    scaleout,
    serving,
    sweepchecks,
    sweepfit,
    sweeps,
    topology,
    trainingruns,
    validation,
)
from multigpu.evidence.sweeps import SMALL_SIDE, WIDE_MISS
from multigpu.hardware import catalog


def fixed_batch_table(fixed: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.bottlenecks.compare_fixed_batch` for print: throughput columns renamed to
    ``<source>_tokens_per_s_per_gpu`` (the ``_x`` ratios keep their names), indexed by ``batch``, rounded
    to 2 decimals."""
    named = fixed.rename(columns=lambda c: c if c == "batch" or c.endswith("_x") else f"{c}_tokens_per_s_per_gpu")
    return named.set_index("batch").round(2)


# ----------------------------------------------------------------------------- the tables' words

#: The headers of the appendix's tables (:func:`multigpu.book.tables.header` of their columns), as messages:
#: the Chinese edition's headers (a header missing here fails the notebook, not just the catalog check).
TABLE_HEADERS = (
    # published sweeps, their summary and the fitted constants
    N_("Split"), N_("Size class"), N_("Points"), N_("Median absolute error (%)"), N_("Worst absolute error (%)"),
    N_("Sweep"), N_("System"), N_("Op"), N_("GPUs"), N_("Nodes"), N_("Algorithm"),
    N_("Median absolute error small (%)"), N_("Median absolute error large (%)"), N_("Constant"), N_("Value"),
    N_("Unit"), N_("Fit sweeps"), N_("Fitted on"), N_("Other sweep"), N_("Splits"), N_("Spread (%)"),
    N_("Floor (%)"), N_("Latency factor (×)"), N_("Fitted error small (%)"), N_("Fitted error large (%)"),
    N_("Sweeps"), N_("Anchored error (%)"), N_("Nearest twin"),
    N_("Nearest twin error (%)"), N_("Widest twin ratio (×)"), N_("Standard error"), N_("Fit status"),
    # published training and serving runs
    N_("ID"), N_("GPU"), N_("Dtype"), N_("Layout"), N_("Measured step (s)"), N_("Predicted step (s)"),
    N_("Error (%)"), N_("Metric"), N_("Model ID"), N_("System ID"), N_("TP"), N_("Batch"), N_("Measured"),
    N_("Predicted"),
    # the reference file, the training runs, the error statistics, out of sample, the misses
    N_("Benchmark"), N_("What"), N_("Compared"), N_("Note"), N_("Reference"), N_("Set"), N_("Kind"),
    N_("Size (MiB)"), N_("Measured (GB/s)"), N_("Predicted (GB/s)"), N_("Measured (s)"), N_("Predicted (s)"),
    N_("Source"), N_("Regime"), N_("Rows"), N_("Worst reference"), N_("Median error (%)"), N_("Within 10 %"),
    N_("Check"), N_("System variant"), N_("Tolerance (%)"), N_("Within tolerance"), N_("Known miss"),
    # vendor-modelled and vendor-presented rows
    N_("NVIDIA mesh (tokens/s per GPU)"), N_("NVIDIA switch (tokens/s per GPU)"), N_("NVIDIA benefit (×)"),
    N_("BF16 mesh (tokens/s per GPU)"), N_("BF16 switch (tokens/s per GPU)"), N_("BF16 benefit (×)"),
    N_("FP8 mesh (tokens/s per GPU)"), N_("FP8 switch (tokens/s per GPU)"), N_("FP8 benefit (×)"),
    N_("Vendor (GB/s)"), N_("Difference (%)"),
    # the PCIe side, apart
    N_("Side"), N_("Effect"), N_("Pairs"), N_("Job"), N_("NVSwitch system"), N_("Other wiring"),
    N_("Published by"), N_("Measured ratio"), N_("Predicted ratio"), N_("Ratio error (%)"),
    # the held-out training runs by stack and scale; the order of layouts
    N_("Group"), N_("Runs"), N_("Layouts"), N_("Refused"), N_("Stack"), N_("Rank correlation"), N_("Model rank of best"), N_("Meets goal"),
    # the largest held-out misses
    N_("Run"), N_("Error (%)"), N_("Hidden size"), N_("Outside its fit runs"),
    # from a few GPUs to many
    N_("Model"), N_("Framework"), N_("From GPUs"), N_("To GPUs"), N_("Measured change (%)"),
    N_("Predicted change (%)"), N_("Model less measured (points)"), N_("Held out runs"),
    # how sure: prediction intervals
    N_("Scope"), N_("Calibration points"), N_("From (%)"), N_("To (%)"), N_("Sweeps or sources"), N_("Inside"),
    N_("Expected inside"), N_("Inside (%)"), N_("Inside by group (%)"), N_("Half width (%)"),
    N_("Goal half width (%)"), N_("Interval score"),
    # expert-parallel dispatch and combine
    N_("Kernel"), N_("Release"), N_("Phase"), N_("Measured (µs)"), N_("Predicted (µs)"), N_("Limited by"),
    N_("SMs"),
    # TensorRT-LLM's releases
    N_("Decode time factor (×)"), N_("Fit rows"), N_("Held out rows"), N_("Held out error without factor (%)"),
    N_("Held out error with factor (%)"),
)

#: The tables' columns whose cells are words of a fixed vocabulary (:data:`CELL_WORDS`), translated in the
#: Chinese edition; the other cells are data (ids, names, benchmarks, layouts), as they are.
LABEL_COLUMNS = {**dict.fromkeys(("split", "size_class", "scope", "set", "kind", "side", "effect", "compared",
                                   "metric", "regime", "unit", "what", "check", "known_miss", "source", "note",
                                   "fit_status", "kernel", "phase", "limited_by"), lang.label),
                 "stack": vocabulary.stack_names_label, "group": vocabulary.stack_names_label,
                 "nvswitch_system": vocabulary.data_name, "other_wiring": vocabulary.data_name,
                 "outside_its_fit_runs": lambda text: _counts_text(text)}

#: The words of :data:`LABEL_COLUMNS` as the evidence layer writes them, as messages ("no" is the shared
#: catalog's). A word missing here fails the notebook's Chinese edition (LookupError naming it).
CELL_WORDS = (
    # splits, size classes, sets, kinds, metrics (multigpu.evidence.sweeps, validation, runs, serving)
    N_("holdout"), N_("fit"), N_("sealed"), N_("large"), N_("small"), N_("held out"), N_("fitted on"),
    N_("out of sample"), N_("collective"), N_("copy"), N_("training"), N_("vendor-presentation"),
    N_("throughput"), N_("ttft"), N_("tpot"), N_("serving"),
    # the sides of a verdict (multigpu.evidence.pcieside, named by PCIE_SIDES)
    N_("NVSwitch side"), N_("PCIe, bridged or mesh side"), N_("wiring"), N_("market"),
    # the regimes of the intervals (multigpu.evidence.intervals: FAMILIES, RUN_KINDS, ALL_RUNS)
    N_("within a node"), N_("across nodes"), N_("large messages"), N_("small messages"), N_("training step time"),
    N_("serving throughput"), N_("all runs"),
    # the groups of the held-out training runs (training_groups_table)
    N_("stack"), N_("framework"), N_("GPUs per run"),
    # expert-parallel kernels, their phases and what limits them (ep_table)
    N_("normal"), N_("low-latency"), N_("dispatch"), N_("combine"), N_("NVLink fabric"), N_("network"),
    N_("fixed time"),
    # what a fit's data say of a constant (multigpu.comm.calibration.FIT_STATUSES)
    N_("determined"), N_("loose"), N_("at bound"),
    # units (calibration constants, serving metrics, comparisons)
    N_("1"), N_("bytes"), N_("ratio"), N_("us"), N_("fraction"), N_("tokens/s/GPU"), N_("s"), N_("GB/s"),
    N_("s per iteration"),
    # the regimes of the error statistics (multigpu.evidence.validation.REGIMES)
    N_("all comparisons"), N_("fitted on (in sample)"), N_("held out (reference set, not fitted)"),
    N_("out of sample (published elsewhere)"), N_("out of sample, documented misses left out"),
    N_("not fitted (held out + out of sample)"), N_("collectives"),
    N_("collectives, large messages (>= 64 MiB) and NIC rates"), N_("collectives, small messages (< 64 MiB)"),
    N_("copies"), N_("training iterations"), N_("bandwidths (collectives and copies)"),
    # what a comparison measures (multigpu.evidence.validation: the reference file's rows)
    N_("all-reduce busbw (ring)"), N_("all-reduce busbw (nvls)"), N_("all-reduce busbw (tree)"),
    N_("all-gather busbw (ring)"), N_("reduce-scatter busbw (ring)"), N_("all-to-all busbw (direct)"),
    N_("GPU-GPU copy, one way"), N_("GPU-GPU copy, both ways"), N_("host-to-GPU copy"),
    N_("all-to-all, per-GPU NIC rate"),
    # the out-of-sample checks (multigpu.evidence.measurements.OUT_OF_SAMPLE): chapter 2's messages
    *vocabulary.CHECK_LABELS,
    # their documented misses
    N_("P2P off sends every hop up the x16 switch uplink, 4 flows share it: ~12 GB/s. The measured box cannot "
       "have that wiring (4 GPUs reached 35 GB/s each, more than one x16 uplink carries), so the catalogue's "
       "default puts the GPUs on CPU root ports"),
    N_("host-memory bandwidth, not the PCIe link, limits P2P-off traffic (sjeaugey in the issue); the model "
       "halves the link rate instead, ~24 GB/s for any GPU count"),
    N_("NVIDIA's 600 GB/s read as 12 links; the measured pair behaves like 6 (NV6), the catalogue's default"),
    # the training runs (multigpu.evidence.trainingruns.training_validation) and their sources
    N_("GPT-3 175B, full recompute (row 75) (8 x 16 x 8, TP x PP x DP)"),
    N_("Megatron GPT 22B, SP + selective (8 x 1 x 1, TP x PP x DP)"),
    N_("Megatron GPT 22B, full recompute (8 x 1 x 1, TP x PP x DP)"),
    N_("GPT-3 175B (Megatron shape), SP + selective (8 x 8 x 1, TP x PP x DP)"),
    N_("GPT-3 175B (Megatron shape), full recompute (8 x 8 x 1, TP x PP x DP)"),
    N_("Megatron-Turing NLG 530B, SP + selective (8 x 35 x 1, TP x PP x DP)"),
    N_("Megatron-Turing NLG 530B, full recompute (8 x 35 x 1, TP x PP x DP)"),
    N_("Megatron GPT 1T, SP + selective (8 x 64 x 1, TP x PP x DP)"),
    N_("Megatron GPT 1T, full recompute (8 x 64 x 1, TP x PP x DP)"),
    N_("Megatron-Turing NLG 530B, SP + selective, DP 8 (8 x 35 x 8, TP x PP x DP)"),
    N_("measurements.csv row 75"), N_("Korthikanti et al. 2022, Table 5"), N_("Korthikanti et al. 2022, sec. 6.3"),
    # what a row of the reference file measures (its collective_or_metric column: the coverage table)
    N_("all-reduce busbw"), N_("all-reduce busbw vs GPU count"), N_("all-reduce (NVLS on) busbw"),
    N_("all-reduce (NVLS off) busbw"), N_("all-gather busbw"), N_("reduce-scatter busbw"),
    N_("pairwise copy, unidirectional"), N_("pairwise copy, bidirectional total"), N_("host->device"),
    N_("1x 4GB all-reduce vs 1000x 4MB"), N_("P2P unidirectional write"), N_("P2P bidirectional"),
    N_("all-reduce busbw (peak)"), N_("GPU-GPU copy unidirectional / bidirectional"),
    N_("MoE all-to-all dispatch / combine bottleneck bandwidth"), N_("MoE dispatch / combine latency"),
    N_("MoE dispatch / combine bottleneck bw"), N_("TFLOP/s per GPU"), N_("time-to-train"),
    N_("parallel P2P throughput ratio"),
    # how the model reproduces a row of the reference file, or why it cannot (its model_note column,
    # multigpu.evidence.validation.NOT_COMPARED, the training rows' reasons): the coverage and vendor tables
    N_("NCCL picked ring/LL (<= 1 MiB)"), N_("NCCL picked NVLS/Simple (>= 2 MiB)"), N_("NVLS disabled"),
    N_("NCCL picked ring (NVLS gives no gain at 4 GPUs)"), N_("NCCL picked NVLS"), N_("one direction, GPU 0 -> 1"),
    N_("both directions added"), N_("host memory -> GPU over PCIe Gen5 x16"),
    N_("3722.8 Gb/s = 465.35 GB/s for the single 4 GB call; the 1000 x 4 MB loop (1146.1 Gb/s) is not compared"),
    N_("NVL4 tray; modelled as two GPUs of the NVL72 NVLink domain (900 GB/s per direction each)"),
    N_("maintainer: expected H100 range with NVLink SHARP; size not given beyond <=16GiB, 8 GiB assumed"),
    N_("peak of a sweep up to 4 GiB; above the 450 GB/s wire, so NVLS"),
    N_("P2P disabled: staged through host memory; bidirectional 16.8 not compared"),
    N_("mean of dispatch 153 and combine 158; DeepEP bottleneck bandwidth ~ all-to-all busbw; ~235 MB per rank "
       "(4096 x 7168 x top-8, FP8)"),
    N_("mean of dispatch and combine; compared with the model per-GPU NIC rate. DeepEP counts logical bytes, so "
       "values can exceed the 50 GB/s wire (row 66)"),
    N_("latency of DeepEP's low-latency dispatch / combine kernels (128 tokens, each sent straight to its experts' "
       "GPUs by RDMA writes from the GPU); the collective model has NCCL's algorithms and latencies, not this "
       "kernel's"),
    N_("DeepEP V2 on an SM90 cluster described only as 'EP 8 x 2, 12 SMs': neither the NICs per GPU nor their rate "
       "are given, and the rate counts logical bytes, including tokens that stay in the node"),
    N_("mean of dispatch 726 and combine 740 (64 SMs); 8K tokens"),
    N_("layout, batch and sequence given; 138 TFLOP/s counts hardware FLOPs with full recomputation (SC21 eq. 3), "
       "so the model runs with full recomputation and is compared in iteration time"),
    N_("time-to-train to a quality target: the tokens processed (set by convergence), the numeric precision and "
       "the layout are not in the file"),
    N_("a ratio ('up to 35x') of parallel P2P throughput in a sorting benchmark between a DGX A100 and a PCIe 3.0 "
       "server that is not in the catalogue, with no transfer sizes or pattern in the file"),
    N_("vendor slide: 480 with SHARP (NVLS) vs 370 without"), N_("vendor slide: 850 with SHARP vs 680 without"),
)


def coverage_table() -> pd.DataFrame:
    """:func:`multigpu.evidence.validation.coverage` for print, by ``id``, a row without a note with its
    ``note`` missing instead of empty (shown "—"; the CSV keeps it empty): an empty cell is no word to
    translate."""
    out = validation.coverage().set_index("id")
    return out.assign(note=out["note"].replace("", None))


def out_of_sample_table(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.validation.out_of_sample_table` for print, by ``ref``: ``variant`` named
    ``system_variant`` (a variant of the catalogue's system, not a GPU's market variant as in chapter 1, whose
    header has the same English), and a check without a documented miss with its ``known_miss`` missing
    instead of empty (shown "—"; the CSV keeps it empty): an empty cell is no word to translate."""
    out = validation.out_of_sample_table(table).set_index("ref").rename(columns={"variant": "system_variant"})
    return out.assign(known_miss=out["known_miss"].replace("", None))


# ----------------------------------------------------------------------------- published sweeps


#: when the sealed sweeps were compared with the model, each once: those collected first after the collective
#: model's last change at the time, those sealed after that look in a second look after the next changes (both
#: on this day; CHANGELOG.md records what each look found); since then they test no later change unseen
SWEEPS_OPENED = "2026-12-04"


def sweep_summary_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """Median and worst |error| (%) by split (held-out, sealed, fit) and size class (from 64 MiB: large)."""
    summary = sweeps.summary(comparison)
    summary["split"] = pd.Categorical(summary["split"], list(sweeps.SHOWN_SPLITS), ordered=True)
    summary = summary.sort_values(["split", "size_class"])
    out = summary.assign(median_abs_error_pct=100 * summary["median_abs_error"],
                         worst_abs_error_pct=100 * summary["worst_abs_error"])
    return out[["split", "size_class", "points", "median_abs_error_pct", "worst_abs_error_pct"]].round(1)


def sweep_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """One row per compared sweep, held-out, then sealed, then fit: what it measured and the model's median
    |error| (%) on its small and large messages (empty where it has none)."""
    data = comparison.assign(abs_error_pct=100 * comparison["rel_error"].abs())
    errors = data.pivot_table(index="sweep", columns="size_class", values="abs_error_pct", aggfunc="median")
    rows = data.groupby("sweep").agg(split=("split", "first"), system=("system", "first"), op=("op", "first"),
                                     gpus=("gpus", "first"), nodes=("nodes", "first"),
                                     algorithm=("algorithm", "first"), points=("bytes", "size"))
    for size_class in ("small", "large"):
        rows[f"median_abs_error_{size_class}_pct"] = errors.get(size_class)
    rows["split"] = pd.Categorical(rows["split"], list(sweeps.SHOWN_SPLITS), ordered=True)
    return rows.sort_values(["split", "sweep"]).round(1)


def spread_table() -> pd.DataFrame:
    """Two published runs the model cannot tell apart (:func:`multigpu.evidence.sweeps.deployment_spread`, fit
    and held-out sweeps), small messages first, widest spread first: by how much (%) the slower takes longer,
    and the floor (%) under any model's error on both."""
    spread = sweeps.deployment_spread(("holdout", "fit"))
    spread["size_class"] = pd.Categorical(spread["size_class"], ["small", "large"], ordered=True)
    spread = spread.sort_values(["size_class", "spread_pct"], ascending=[True, False])
    return spread[["sweep", "other_sweep", "splits", "system", "op", "size_class", "points", "spread_pct",
                   "floor_pct"]].round(1).reset_index(drop=True)


def spread_facts() -> Facts:
    """How far apart published runs of one machine are (:func:`spread_table`): ``spread_pairs`` (pairs of runs
    with small messages), ``spread_small_median`` and ``spread_large_median`` (their median spread, %),
    ``spread_small_floor`` (the median floor, %), ``spread_small_max`` (the widest, %) and ``spread_widest``
    (text: that pair)."""
    spread = sweeps.deployment_spread(("holdout", "fit"))
    small, large = (spread[spread["size_class"] == c] for c in ("small", "large"))
    widest = small.loc[small["spread_pct"].idxmax()]
    return _values({"spread_pairs": len(small), "spread_small_median": small["spread_pct"].median(),
                    "spread_large_median": large["spread_pct"].median(),
                    "spread_small_floor": small["floor_pct"].median(), "spread_small_max": widest["spread_pct"],
                    "spread_widest": _("`{a}` and `{b}`", a=widest["sweep"], b=widest["other_sweep"])})


def wide_miss_facts(misses: pd.DataFrame) -> Facts:
    """Why the worst case is what it is (``misses``: :func:`multigpu.evidence.sweepchecks.held_out_wide_misses`): ``wm_n`` (held-out large points off
    by more than :data:`~multigpu.evidence.sweeps.WIDE_MISS`), ``wm_sweeps`` (their sweeps), ``wm_twin_near`` (points with a twin the
    model is within the limit of), ``wm_limit`` (%), ``wm_reach`` (the widest ratio of two times one prediction
    can be within the limit of, x); the widest held-out pair: ``wm_pair`` (text), ``wm_pair_size`` (text),
    ``wm_pair_ratio`` (x), ``wm_pair_versions`` (text: their NCCL versions) and ``wm_verdict`` (text: whether
    a model of these inputs can meet the limit on the held-out sweeps)."""
    reach = sweeps.reachable_ratio(WIDE_MISS)
    pair = sweepchecks.widest_pair(misses)
    out: dict[str, object] = {
        "wm_n": len(misses), "wm_sweeps": misses["sweep"].nunique(), "wm_limit": 100 * WIDE_MISS,
        "wm_twin_near": int((misses["nearest_error"].abs() <= WIDE_MISS).sum()), "wm_reach": reach}
    if pair is None:
        return _values({**out, "wm_pair": _("none"), "wm_pair_size": "-", "wm_pair_ratio": float("nan"),
                        "wm_pair_versions": "-",
                        "wm_verdict": _("no two held-out runs with the same inputs are that far apart")})
    version = {s.sweep: s.library_version or _("not stated") for s in sweeps.sweeps()}
    feasible = pair["widest_ratio"] <= reach
    return _values({**out, "wm_pair": _("`{a}` and `{b}`", a=pair["sweep"], b=pair["widest"]),
                    "wm_pair_size": units.format_size(pair["bytes"]), "wm_pair_ratio": pair["widest_ratio"],
                    "wm_pair_versions": _("NCCL {a} and {b}", a=version[pair["sweep"]], b=version[pair["widest"]]),
                    "wm_verdict": _("one time can still be within {pct:.0f} % of both", pct=100 * WIDE_MISS)
                    if feasible else _("no one time is within {pct:.0f} % of both, so no model that reads only these "
                                       "inputs meets a worst case of {pct:.0f} % on the held-out sweeps",
                                       pct=100 * WIDE_MISS)})


def latency_factor_table(points: pd.DataFrame) -> pd.DataFrame:
    """Each held-out sweep with its own latency factor (``points``:
    :func:`multigpu.evidence.deployment.sweep_points`) and its median absolute error (%) on small and large
    messages, as shipped and with that factor."""
    data = points.assign(shipped=100 * points["rel_error"].abs(), fitted=100 * points["rel_error_fitted"].abs())
    errors = data.pivot_table(index="sweep", columns="size_class", values=["shipped", "fitted"], aggfunc="median")
    out = data.groupby("sweep").agg(latency_factor_x=("factor", "first"))
    for size_class in ("small", "large"):
        out[f"median_abs_error_{size_class}_pct"] = errors.get(("shipped", size_class))
        out[f"fitted_error_{size_class}_pct"] = errors.get(("fitted", size_class))
    return out.sort_values("latency_factor_x").round(2)


def anchored_table(points: pd.DataFrame) -> pd.DataFrame:
    """By split (held-out first) and size class, the points a factor anchored on each sweep's smallest sizes
    (``points``: :func:`multigpu.evidence.sweepchecks.anchored_points`) has not seen: how many sweeps and points, and their median absolute
    error (%) as shipped and with the anchored factor."""
    unseen = points[~points["fitted_on"]]
    data = unseen.assign(shipped=100 * unseen["rel_error"].abs(), anchored=100 * unseen["rel_error_fitted"].abs())
    out = data.groupby(["split", "size_class"], observed=True).agg(
        sweeps=("sweep", "nunique"), points=("bytes", "size"), median_abs_error_pct=("shipped", "median"),
        anchored_error_pct=("anchored", "median")).reset_index()
    out["split"] = pd.Categorical(out["split"], list(sweeps.SHOWN_SPLITS), ordered=True)
    out["size_class"] = pd.Categorical(out["size_class"], ["small", "large"], ordered=True)
    return out.sort_values(["split", "size_class"]).round(1).reset_index(drop=True)


def anchored_facts(points: pd.DataFrame) -> Facts:
    """The anchored factor (``points``: :func:`multigpu.evidence.sweepchecks.anchored_points`): ``an_count`` (sizes it is fitted on),
    ``an_max_KiB`` (the largest an anchor may be, KiB), and per split ``hold``/``sealed``: ``an_<split>_sweeps``
    and the median absolute error (%) on the points it has not seen, ``an_<split>_<size>_shipped`` and
    ``an_<split>_<size>`` for size ``small``/``large``."""
    table = anchored_table(points).set_index(["split", "size_class"])
    out: dict[str, object] = {"an_count": deployment.ANCHOR_POINTS, "an_max_KiB": deployment.ANCHOR_MAX_BYTES / 1024}
    for split, short in (("holdout", "hold"), ("sealed", "sealed")):
        out[f"an_{short}_sweeps"] = int(points[points["split"] == split]["sweep"].nunique())
        for size in ("small", "large"):
            out[f"an_{short}_{size}_shipped"] = table.loc[(split, size), "median_abs_error_pct"]
            out[f"an_{short}_{size}"] = table.loc[(split, size), "anchored_error_pct"]
    return _values(out)


def latency_factor_facts(points: pd.DataFrame) -> Facts:
    """One latency factor per held-out sweep (``points``: :func:`multigpu.evidence.deployment.sweep_points`):
    ``lf_n`` sweeps, ``lf_min`` and ``lf_max`` (their factors, x), the median absolute error (%) over their points
    ``lf_small_shipped``, ``lf_small_fitted``, ``lf_large_shipped`` and ``lf_large_fitted``."""
    out: dict[str, object] = {"lf_n": points["sweep"].nunique(), "lf_min": points["factor"].min(),
                              "lf_max": points["factor"].max()}
    for size_class in ("small", "large"):
        part = points[points["size_class"] == size_class]
        out[f"lf_{size_class}_shipped"] = 100 * part["rel_error"].abs().median()
        out[f"lf_{size_class}_fitted"] = 100 * part["rel_error_fitted"].abs().median()
    return _values(out)


def fitted_constants_table(cal: Calibration | None = None) -> pd.DataFrame:
    """The constants fitted on the fit sweeps (:data:`multigpu.evidence.sweepfit.FITTED`): value, unit, the
    fit's standard error and what it says of the constant (:mod:`multigpu.evidence.fitquality`), and the fit
    sweeps that move them."""
    cal = calibration.resolve(cal)
    rows = []
    for parameter in sweepfit.FITTED:
        constant = cal.constant(*parameter.ident)
        rows.append({"constant": f"{constant.name}/{constant.key}", "value": constant.value, "unit": constant.unit,
                     "standard_error": constant.std_error, "fit_status": constant.fit_status,
                     "fit_sweeps": len(constant.fitted_sweeps), "fitted_on": ", ".join(constant.fitted_sweeps)})
    return pd.DataFrame(rows).set_index("constant")


def fit_status_facts(cal: Calibration | None = None) -> Facts:
    """What the fits' data say of their constants (``fit_status`` in ``data/calibration.csv`` and
    ``data/compute_efficiency.csv``): ``fit_constants_n`` (constants fitted anywhere in the model),
    ``fit_determined_n`` (those whose standard error is at most ``fit_determined_pct`` % of their value) and
    ``fit_loose`` (the others, loose or at a bound, as code names, in the current language's list)."""
    status = {f"{c.name}/{c.key}": c.fit_status for c in calibration.resolve(cal).constants if c.fit_status}
    status |= {name: row.fit_status for name, row in efficiency.rows().items() if row.fit_status}
    status |= {f"{stack}/{name}": row.fit_status for (stack, name), row in efficiency.stack_rows().items()
               if row.fit_status}
    loose = [f"`{name}`" for name, s in status.items() if s != calibration.DETERMINED]
    return _values({"fit_constants_n": len(status), "fit_determined_n": len(status) - len(loose),
                    "fit_determined_pct": 100 * fitquality.DETERMINED_REL_SE, "fit_loose": _(", ").join(loose)})


def scale_facts(points: pd.DataFrame) -> Facts:
    """The scale-out series (``points``: :func:`multigpu.evidence.sweepchecks.scale_points`): ``sc_runs``, ``sc_hold`` and ``sc_fit`` (how many
    node counts, held out, fit), ``sc_nodes_min`` and ``sc_nodes_max``; at the largest size ``sc_size_hi``
    (text) ``sc_meas_lo`` and
    ``sc_meas_hi`` (measured busbw on the fewest and the most nodes, GB/s), ``sc_model_lo`` and ``sc_model_hi``
    (the model's), ``sc_bound_hi`` (the NIC bound on the most nodes); the point furthest off: ``sc_worst_pct``
    (signed error, %), ``sc_worst_nodes``, ``sc_worst_size`` (text), ``sc_worst_meas`` and ``sc_worst_model``
    (GB/s); ``sc_hold_median`` (median absolute error of the held-out points, %)."""
    runs_ = points.drop_duplicates("sweep")
    largest = points[points["bytes"] == points["bytes"].max()].set_index("nodes")
    lo, hi = largest.index.min(), largest.index.max()
    worst = points.loc[points["rel_error"].abs().idxmax()]
    return _values({
        "sc_runs": len(runs_), "sc_hold": int((runs_["split"] == "holdout").sum()),
        "sc_fit": int((runs_["split"] == "fit").sum()), "sc_nodes_min": int(lo), "sc_nodes_max": int(hi),
        "sc_size_hi": units.format_size(points["bytes"].max()),
        "sc_meas_lo": largest.loc[lo, "measured"], "sc_meas_hi": largest.loc[hi, "measured"],
        "sc_model_lo": largest.loc[lo, "predicted"], "sc_model_hi": largest.loc[hi, "predicted"],
        "sc_bound_hi": largest.loc[hi, "bound"], "sc_worst_pct": 100 * worst["rel_error"],
        "sc_worst_nodes": int(worst["nodes"]), "sc_worst_size": units.format_size(worst["bytes"]),
        "sc_worst_meas": worst["measured"], "sc_worst_model": worst["predicted"],
        "sc_hold_median": 100 * points[points["split"] == "holdout"]["rel_error"].abs().median()})


def sweep_facts(comparison: pd.DataFrame, cal: Calibration | None = None) -> Facts:
    """The published sweeps (``comparison``: :func:`multigpu.evidence.sweepchecks.comparison`).

    Counts: ``sw_n_<split>`` (sweeps per split), ``sw_n_unmodelled``, ``sw_pts_<split>`` (compared points);
    ``sw_next_sealed`` (text: a sentence on ``sealed2``, the next sealed set);
    ``sw_nvls_off`` (text: the all-reduce sweeps outside ``sealed2`` left to NCCL's choice whose run switched NVLS
    off, modelled so);
    errors (%): ``sw_<split>_<size>_median`` and ``..._worst`` for split ``hold``/``sealed``/``fit`` and size
    ``large``/``small``; text (in the current language): ``sw_hold_worst`` (the held-out sweep with the
    largest median error), the sealed sweeps' (opened once, :data:`SWEEPS_OPENED`, also a fact):
    ``sw_sealed_small_within`` (% of their small points within :data:`~multigpu.evidence.sweeps.SMALL_SIDE`), ``sw_sealed_large_over`` (their
    large points off by more than :data:`~multigpu.evidence.sweeps.WIDE_MISS`), ``sw_sealed_wide`` (text: the sealed sweeps whose large
    messages are off by more than :data:`~multigpu.evidence.sweeps.WIDE_MISS` at the median),
    ``sw_small_fast`` and ``sw_small_slow`` (held-out sweeps whose small messages the model makes faster or
    slower than measured by more than :data:`~multigpu.evidence.sweeps.SMALL_SIDE`, at the median);
    the latency of the smallest messages on AWS EFA (:func:`multigpu.evidence.sweeps.small_message_latency`):
    ``efa_lat_n`` sweeps, ``efa_lat_min_us`` and ``efa_lat_max_us`` (their medians, us), ``efa_lat_model_min_us``
    and ``efa_lat_model_max_us`` (the model's, us);
    constants: ``sw_fitted`` (how many were fitted on the sweeps), ``ramp_exponent``, ``ramp_full_MiB`` (the
    size at which an 8-GPU node reaches its full bandwidth, MiB), ``latency_scale`` and ``latency_scale_net``
    (measured NCCL latencies over the tuner's, inside a node and on a hop between nodes, x), ``ramp_net_ms``
    (the network's fill time on InfiniBand: an all-reduce across nodes that would take this long at full
    bandwidth reaches ``ramp_net_share_pct`` % of it, ms; ``ramp_net_exponent`` the ramp's exponent q),
    ``ramp_net_efa_ms`` and ``ramp_net_tcp_ms`` (the same on EFA and over TCP, ms), ``harness_us``
    (torch.distributed's cost per call, us), ``launch_us`` (nccl-tests' launch cost per GPU of one thread, us)
    and ``launch_sweeps`` (the compared sweeps whose thread drove several GPUs).
    """
    cal = calibration.resolve(cal)
    summary = sweeps.summary(comparison).set_index(["split", "size_class"])
    index = pd.DataFrame([{"split": s.split, "reason": s.reason} for s in sweeps.sweeps()])
    out: dict[str, object] = {f"sw_n_{split}": int((index["split"] == split).sum()) for split in sweeps.SPLITS}
    out["sw_n_unmodelled"] = int((index["reason"] != "").sum())
    out["sw_next_sealed"] = _("{n} sweeps collected since fell in the sealed third; they form the next sealed set, "
                              "which nothing on this page reads.", n=out["sw_n_sealed2"]) if out["sw_n_sealed2"] else \
        _("No sweep collected since has fallen in the sealed third; the next that does starts the next sealed set, "
          "which nothing on this page reads.")
    out["sw_nvls_off"] = _(", ").join(f"`{s.sweep}`" for s in sweeps.sweeps() if not s.nvls and s.split != "sealed2"
                                      and s.op == "allreduce" and s.algorithm == "auto") or _("none")
    for split, short in (("holdout", "hold"), ("sealed", "sealed"), ("fit", "fit")):
        out[f"sw_pts_{short}"] = int((comparison["split"] == split).sum())
        for size in ("large", "small"):
            out[f"sw_{short}_{size}_median"] = 100 * summary.loc[(split, size), "median_abs_error"]
            out[f"sw_{short}_{size}_worst"] = 100 * summary.loc[(split, size), "worst_abs_error"]
    per_sweep = sweep_table(comparison)
    held = per_sweep[per_sweep["split"] == "holdout"]
    out["sw_hold_worst"] = f"`{held[['median_abs_error_small_pct', 'median_abs_error_large_pct']].max(axis=1).idxmax()}`"
    out.update(_sealed_facts(comparison[comparison["split"] == "sealed"]))
    small = comparison[(comparison["split"] == "holdout") & (comparison["size_class"] == "small")]
    signed = small.groupby("sweep")["rel_error"].median()
    for name, side in (("sw_small_fast", signed > SMALL_SIDE), ("sw_small_slow", signed < -SMALL_SIDE)):
        out[name] = _(", ").join(f"`{sweep}`" for sweep in signed[side].index) or _("none")
    out.update(_constant_facts(cal))
    return _values(out)


def _constant_facts(cal: Calibration) -> Facts:
    """The latency of the smallest messages on AWS EFA and the constants fitted on the sweeps: see
    :func:`sweep_facts`."""
    efa = sweeps.small_message_latency("efa", cal=cal)
    out: Facts = {"efa_lat_n": len(efa), "efa_lat_min_us": efa["measured_us"].min(),
                  "efa_lat_max_us": efa["measured_us"].max(), "efa_lat_model_min_us": efa["predicted_us"].min(),
                  "efa_lat_model_max_us": efa["predicted_us"].max()}
    out.update({"sw_fitted": len(sweepfit.FITTED), "ramp_exponent": cal.value("bandwidth_ramp", "exponent"),
                "ramp_full_MiB": 8 * cal.value("bandwidth_ramp", "bytes_per_rank") / 2**20,
                "latency_scale": cal.latency_scale("hopper"),
                "latency_scale_net": cal.latency_scale("hopper", network=True),
                "ramp_net_ms": cal.net_fill_time_us("ib", "hopper") / 1e3,
                "ramp_net_exponent": cal.value("bandwidth_ramp", "net.exponent"),
                "ramp_net_share_pct": 100 * 2 ** -cal.value("bandwidth_ramp", "net.exponent"),
                "ramp_net_efa_ms": cal.net_fill_time_us("efa", "hopper") / 1e3,
                "ramp_net_tcp_ms": cal.net_fill_time_us("tcp", "hopper") / 1e3,
                "harness_us": cal.value("harness_overhead_us", "torch"),
                "launch_us": cal.value("harness_launch_us", "nccl-tests"),
                "launch_sweeps": sum(s.gpus_per_thread > 1 and not s.reason and s.split != "sealed2"
                                     for s in sweeps.sweeps())})
    return out


def _sealed_facts(sealed: pd.DataFrame) -> Facts:
    """The sealed sweeps' points (``sealed``), opened once: see :func:`sweep_facts`."""
    errors = sealed.assign(abs_error=sealed["rel_error"].abs())
    small, large = (errors[errors["size_class"] == c] for c in ("small", "large"))
    by_sweep = large.groupby("sweep")["abs_error"].median()
    return {"sw_opened": SWEEPS_OPENED, "sw_sealed_small_within": 100 * (small["abs_error"] <= SMALL_SIDE).mean(),
            "sw_sealed_large_over": int((large["abs_error"] > WIDE_MISS).sum()),
            "sw_sealed_wide": _(", ").join(f"`{sweep}`" for sweep in by_sweep[by_sweep > WIDE_MISS].index) or _("none")}


# ----------------------------------------------------------------------------- published training and serving runs

_SPLIT_ORDER = ["holdout", "fit", "sealed"]
#: every split: the sealed rows of the training and serving runs were opened once, after the model's last change
#: for them, and are reported apart (the sealed collective sweeps stay sealed)
_ALL_SPLITS = ("fit", "holdout", "sealed")


def training_runs_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.runs.compare` for print, held-out runs first: layout, measured and predicted
    seconds per step, and the error of the step time (%)."""
    table = comparison.assign(split=pd.Categorical(comparison["split"], _SPLIT_ORDER, ordered=True),
                              error_pct=100 * comparison["rel_error"])
    table = table.sort_values(["split", "id"])
    return table[["id", "split", "gpu", "dtype", "gpus", "layout", "measured_step_s", "predicted_step_s",
                  "error_pct"]].set_index("id").round(2)


#: The scales the training runs are grouped by: the most GPUs a run of the group uses.
RUN_SCALES = (8, 64, 512)


def _scale(gpus: int) -> str:
    """The group of a run of ``gpus`` GPUs, by :data:`RUN_SCALES`: ``1-8``, ``9-64``, ``65-512`` or ``513+``."""
    low = 1
    for high in RUN_SCALES:
        if gpus <= high:
            return f"{low}-{high}"
        low = high + 1
    return f"{low}+"


def training_groups_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """The held-out runs of :func:`multigpu.evidence.runs.compare` by the training stack they are priced with, by
    framework (as published) and by GPUs per run (:data:`RUN_SCALES`): runs, median |error| and signed median
    error of the step time (%, positive: the model slower), and the worst (%)."""
    held = comparison[comparison["split"] == "holdout"].assign(error_pct=100 * comparison["rel_error"])
    scales = held["gpus"].map(_scale)
    order = sorted(set(scales), key=lambda g: int(g.split("-")[0].rstrip("+")))
    groups = [("stack", held["stack"].map(vocabulary.TRAINING_STACK_NAMES)), ("framework", held["framework"]),
              ("GPUs per run", pd.Categorical(scales, order, ordered=True))]
    rows = [{"kind": kind, "group": name, "runs": len(part), "median_abs_error_pct": part["error_pct"].abs().median(),
             "median_error_pct": part["error_pct"].median(), "worst_abs_error_pct": part["error_pct"].abs().max()}
            for kind, keys in groups for name, part in held.groupby(keys, sort=True, observed=True)]
    return pd.DataFrame(rows).set_index(["kind", "group"]).round(1)


def training_misses_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """The held-out runs the training model misses most (:func:`multigpu.evidence.runmisses.misses`) for print:
    the run, its stack, the error of the step time (%), its hidden size, and the counts on which it lies
    outside the runs its stack was fitted on (:data:`~multigpu.evidence.runmisses.COUNTS`; none: empty)."""
    misses = runmisses.misses(comparison)
    outside = misses.apply(lambda row: ", ".join(word for column, word in runmisses.COUNTS.items() if row[column]),
                           axis=1)
    return pd.DataFrame({"run": misses["run"], "stack": misses["stack"].map(vocabulary.TRAINING_STACK_NAMES),
                         "error_pct": misses["error_pct"].round(1),
                         "hidden_size": misses["hidden"],
                         "outside_its_fit_runs": outside.replace("", None)}).set_index("run")


def _counts_text(text: str) -> str:
    """A cell of ``outside_its_fit_runs`` (words of :data:`~multigpu.evidence.runmisses.COUNTS`, comma-separated)
    in the current language."""
    return lang.label(", ").join(lang.label(word) for word in text.split(", "))


def training_miss_facts(training: pd.DataFrame) -> Facts:
    """The held-out training run the model misses most, in words (``training``:
    :func:`multigpu.evidence.runs.compare`): ``tr_miss``, :func:`multigpu.evidence.runmisses.finding` of it in the
    current language."""
    worst = runmisses.misses(training, 1).iloc[0]
    return {"tr_miss": runmisses.finding(worst).render(vocabulary.label)}


def serving_runs_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.serving.compare` for print, held-out rows first: metric, measured, predicted
    (seconds, or tokens/s per GPU) and the error (%)."""
    table = comparison.assign(split=pd.Categorical(comparison["split"], _SPLIT_ORDER, ordered=True),
                              error_pct=100 * comparison["rel_error"])
    table = table.sort_values(["split", "metric", "id"])
    return table[["id", "split", "metric", "model_id", "system_id", "tp", "batch", "dtype", "measured", "predicted",
                  "unit", "error_pct"]].set_index("id").round(3)


# ----------------------------------------------------------------------------- the PCIe side, apart

#: The sides of :mod:`multigpu.evidence.pcieside` as the tables name them.
PCIE_SIDES = {pcieside.NVSWITCH: "NVSwitch side", pcieside.PCIE: "PCIe, bridged or mesh side"}


def pcie_side_table(held: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.pcieside.errors` of the held-out points ``held`` for print: kind, side (named),
    points, median and worst |error| (%)."""
    table = pcieside.errors(held)
    return table.assign(side=table["side"].map(PCIE_SIDES)).set_index(["kind", "side"]).round(1)


def pcie_pairs_table(paired: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.pcieside.pairs` summed up for print, held-out pairs first: per split, kind and
    effect (``wiring``: one GPU family on both sides; ``market``: two GPUs), the pairs and the median and worst
    |ratio error| (%)."""
    data = paired.assign(effect=paired["same_gpu"].map({True: "wiring", False: "market"}),
                         abs_error_pct=100 * paired["ratio_error"].abs(),
                         split=pd.Categorical(paired["split"], _SPLIT_ORDER, ordered=True))
    table = (data.groupby(["split", "kind", "effect"], observed=True)["abs_error_pct"]
             .agg(pairs="size", median_abs_error_pct="median", worst_abs_error_pct="max"))
    return table.astype({"pairs": int}).round(1)


#: An MLPerf Inference submission as :func:`multigpu.evidence.pcieside.source_doc` names it: the round and submitter.
_MLPERF_SUBMISSION = re.compile(r"inference_results_v([0-9.]+)/blob/[^/]+/closed/([^/]+)$")
_GITHUB_REPO = re.compile(r"^https://github\.com/([^/]+/[^/]+)")


def published_by(doc: str) -> str:
    """Who published a source document, for people: "MLPerf Inference v4.1, ASUSTeK" for a submitter's round,
    the owner/repository of another GitHub file, else the document as cited."""
    submission = _MLPERF_SUBMISSION.search(doc)
    if submission:
        return f"MLPerf Inference v{submission.group(1)}, {submission.group(2).replace('_', ' ')}"
    repo = _GITHUB_REPO.match(doc)
    return repo.group(1) if repo else doc


def _published_jobs() -> dict[str, tuple[str, int | None]]:
    """Each open training and serving run's job as its source names it, by run id: the model (before any
    parenthesis) and the precision, and the GPUs."""
    rows = [*runs.selected(("fit", "holdout")), *serving.load(("fit", "holdout"))]
    return {row.id: (f"{row.model.split(' (')[0].strip()}, {(row.dtype or '').upper()}".rstrip(", "), row.gpus)
            for row in rows}


def wiring_pairs_table(paired: pd.DataFrame) -> pd.DataFrame:
    """The held-out pairs of one GPU family on two wirings (``same_gpu`` pairs of
    :func:`multigpu.evidence.pcieside.pairs` whose split is ``holdout``), one row each: the kind; the job as
    published (model and precision) and the GPUs of the run off NVSwitch; the GPU family; the NVSwitch system and
    the other wiring (names); who published the two runs; the time off NVSwitch over the time on it, measured and
    predicted; and the predicted ratio's error (%)."""
    held = paired[paired["same_gpu"] & (paired["split"] == "holdout")]
    jobs = _published_jobs()
    return pd.DataFrame({
        "kind": held["kind"], "job": held["pcie_id"].map(lambda i: jobs[i][0]),
        "gpus": held["pcie_id"].map(lambda i: jobs[i][1]), "gpu": held["gpu_family"],
        "nvswitch_system": held["nvswitch_system"].map(lambda s: vocabulary.system_name(s, "en")),
        "other_wiring": held["pcie_system"].map(lambda s: vocabulary.system_name(s, "en")),
        "published_by": held["source_doc"].map(published_by), "measured_ratio": held["measured_ratio"],
        "predicted_ratio": held["predicted_ratio"], "ratio_error_pct": 100 * held["ratio_error"],
    }).sort_values(["kind", "published_by", "job"]).round({"measured_ratio": 2, "predicted_ratio": 2,
                                                          "ratio_error_pct": 1})


def _half_width_pct(half_log_width: float) -> float:
    """A half log-width as the percentage a reader reads: 0.10 is +10.5 % (exp(0.10) - 1)."""
    return 100 * math.expm1(half_log_width)


def interval_table(coverage: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.intervals.coverage` (and :func:`~multigpu.evidence.intervals.run_coverage`) for
    print, by kind and scope (the regime's family): the calibration points; the interval of a measurement around the prediction (%
    from and to: a time for collectives and training, a throughput for serving); the held-out points, how many
    fall inside and how many a calibrated interval puts inside (two-sided 95 % binomial region); the share inside
    by point and by group (a sweep, or a run's source) (%); the interval's half width and the goal for it (% =
    exp(half log-width) - 1); and the mean interval score (log units)."""
    kinds = {"large": "large messages", "small": "small messages"}
    out = pd.DataFrame({
        "kind": coverage["size"].map(lambda size: kinds.get(size, size)), "scope": coverage["family"],
        "calibration_points": coverage["calibration_points"], "from_pct": 100 * (coverage["low"] - 1),
        "to_pct": 100 * (coverage["high"] - 1), "points": coverage["points"],
        "inside": coverage["inside"],
        "expected_inside": [f"{a}–{b}" for a, b in zip(coverage["acceptance_low"], coverage["acceptance_high"])],
        "inside_pct": 100 * coverage["share_points"], "sweeps_or_sources": coverage["sweeps"],
        "inside_by_group_pct": 100 * coverage["share_by_sweep"],
        "half_width_pct": coverage["half_log_width"].map(_half_width_pct),
        "goal_half_width_pct": coverage["goal"].map(_half_width_pct), "interval_score": coverage["winkler"]})
    return out.set_index(["kind", "scope"]).round({"from_pct": 0, "to_pct": 0,
                                                          "inside_pct": 0, "inside_by_group_pct": 0,
                                                          "half_width_pct": 0, "goal_half_width_pct": 0,
                                                          "interval_score": 2})


def layout_order_table(scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.layoutorder.scores` for print, by sweep: the model, GPUs and training stack, the
    layouts the model expressed and refused, the rank correlation, the model's rank of the layout measured
    fastest, the median error of the step times (%, negative: the model too fast), and whether the sweep meets
    the goal."""
    names = {mid: models.plain_name(mid) for mid in scores["model_id"].unique()}
    out = pd.DataFrame({"sweep": scores["sweep"], "model": scores["model_id"].map(names), "gpus": scores["gpus"],
                        "stack": scores["stack"].map(vocabulary.TRAINING_STACK_NAMES), "layouts": scores["layouts"],
                        "refused": scores["refused"],
                        "rank_correlation": scores["spearman"], "model_rank_of_best": scores["best_rank"],
                        "median_error_pct": scores["median_error_pct"],
                        "meets_goal": scores["meets_goal"].map({True: _("yes"), False: _("no")})})
    return out.set_index("sweep").round({"rank_correlation": 2, "median_error_pct": 0})


def scaleout_table(scaled: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.scaleout.series` for print: the model, GPU, precision and framework of each
    series, the fewest and the larger GPU count, the measured and predicted change of the rate per GPU (%), the
    model's less the measured (percentage points) and the held-out runs of the two."""
    out = pd.DataFrame({"model": scaled["model_id"].map(models.plain_name),
                        "gpu": scaled["gpu"].map(lambda g: catalog.gpu(g).name), "dtype": scaled["dtype"],
                        "framework": scaled["framework"], "from_gpus": scaled["from_gpus"],
                        "to_gpus": scaled["to_gpus"], "measured_change_pct": scaled["measured_change_pct"],
                        "predicted_change_pct": scaled["predicted_change_pct"],
                        "Model less measured (points)": scaled["gap_points"],
                        "held_out_runs": scaled["held_out_runs"]})
    return out.set_index("model").round({"measured_change_pct": 1, "predicted_change_pct": 1,
                                         "Model less measured (points)": 1})


def scaleout_facts(scaled: pd.DataFrame) -> Facts:
    """Scaling series in figures (``scaled``: :func:`multigpu.evidence.scaleout.series`): ``sc_series``,
    ``sc_pairs`` (a larger count against the fewest), ``sc_median_gap`` (median |model less measured|,
    percentage points), ``sc_optimistic`` (comparisons where the model loses less rate per GPU than measured);
    NVIDIA's recipes (the ``nemo`` stack): the largest measured loss of rate per GPU ``sc_nvidia_loss`` (%) at
    ``sc_nvidia_to`` GPUs and the model's largest, ``sc_nvidia_model_loss``; on a PCIe server
    (:func:`pcieside.side`): the largest measured loss ``sc_pcie_loss`` (%) from ``sc_pcie_from`` to
    ``sc_pcie_to`` GPUs and the model's there, ``sc_pcie_model_loss``."""
    loss = lambda change: 0.0 - float(change)  # noqa: E731  (a loss of rate, %; 0.0 - x: no negative zero)
    nvidia = scaled[scaled["stack"] == "nemo"]
    worst = nvidia.loc[nvidia["measured_change_pct"].idxmin()]
    pcie = scaled[scaled["system_id"].map(pcieside.side) == pcieside.PCIE]
    pc = pcie.loc[pcie["measured_change_pct"].idxmin()]
    return _values({
        "sc_series": int(scaled["series"].nunique()), "sc_pairs": len(scaled),
        "sc_median_gap": float(scaled["gap_points"].abs().median()),
        "sc_optimistic": int((scaled["gap_points"] > 0).sum()),
        "sc_nvidia_loss": loss(worst["measured_change_pct"]), "sc_nvidia_to": int(worst["to_gpus"]),
        "sc_nvidia_model_loss": loss(nvidia["predicted_change_pct"].min()),
        "sc_pcie_loss": loss(pc["measured_change_pct"]), "sc_pcie_from": int(pc["from_gpus"]),
        "sc_pcie_to": int(pc["to_gpus"]), "sc_pcie_model_loss": loss(pc["predicted_change_pct"])})


def ep_table(compared: pd.DataFrame) -> pd.DataFrame:
    """:func:`multigpu.evidence.epfit.compare` for print, one row per published dispatch or combine, by system:
    the kernel (normal or low-latency), its release, GPUs and nodes, the SMs it ran on (where published), the
    phase, the measured and predicted time (microseconds), the side the model finds limiting, and the error (%,
    negative: the model too fast)."""
    kind = {"deepep": "normal", "deepep-ll": "low-latency"}
    side = {"nvlink": "NVLink fabric", "network": "network", "latency": "fixed time"}
    out = pd.DataFrame({"system": compared["system_id"].map(lambda s: catalog.system(s).name),
                        "kernel": compared["kernel"].map(kind), "release": compared["release"],
                        "gpus": compared["gpus"], "nodes": compared["nodes"],
                        "SMs": compared["sms"].map(lambda n: "" if pd.isna(n) else str(int(n))),
                        "phase": compared["phase"],
                        "measured_us": compared["measured_us"], "predicted_us": compared["predicted_us"],
                        "limited_by": compared["bottleneck"].map(side),
                        "error_pct": 100 * compared["rel_error"]})
    return out.set_index("system").round({"measured_us": 0, "predicted_us": 0, "error_pct": 0})


def ep_facts(cal: Calibration | None = None) -> Facts:
    """Expert-parallel dispatch and combine against DeepEP's tables (:mod:`multigpu.evidence.epfit`): ``ep_rows``
    and, by split, ``ep_fit``, ``ep_holdout`` and ``ep_sealed``; held out, the normal kernels' ``ep_normal_n``
    rows and median error ``ep_normal_median`` (%), the low-latency kernels' ``ep_ll_n`` and ``ep_ll_median``, and
    the worst row ``ep_worst`` (%); the fitted shares of line rate ``ep_nvl_pct`` and ``ep_net_pct``; and one
    DeepSeek-V3 layer's dispatch on 4 nodes of HGX H100 (4,096 tokens per GPU, at most 4 nodes per token):
    ``ep_bytes_x`` (the network bytes of an all-to-all of one copy per expert over DeepEP's) and ``ep_time_x``
    (its time over DeepEP's), with that example's inputs ``ep_ex_nodes``, ``ep_ex_tokens`` and ``ep_ex_limit``;
    the goals ``ep_goal_normal`` and ``ep_goal_ll`` (%) and ``ep_goal_rows``."""
    cal = calibration.resolve(cal)
    nodes, tokens, limit = 4, 4096, 4  # the example: one DeepSeek-V3 layer on HGX H100 nodes
    every = epfit.load(epfit.SPLITS)
    held = epfit.compare(("holdout",), cal=cal)
    normal, ll = held[held["kernel"] == "deepep"], held[held["kernel"] == "deepep-ll"]
    m = models.model("deepseek-v3")
    routing = expert.Routing(tokens, m.hidden, m.experts_per_token, m.experts, node_limit=limit)
    deepep, nccl = (expert.phase(routing, "hgx-h100", 8 * nodes, nodes, kernel=k, cal=cal)
                    for k in ("deepep", "nccl"))
    return _values({
        "ep_rows": len(every), **{f"ep_{s}": sum(r.split == s for r in every) for s in epfit.SPLITS},
        "ep_normal_n": len(normal), "ep_normal_median": 100 * float(normal["rel_error"].abs().median()),
        "ep_ll_n": len(ll), "ep_ll_median": 100 * float(ll["rel_error"].abs().median()),
        "ep_worst": 100 * float(held["rel_error"].abs().max()),
        "ep_nvl_pct": 100 * cal.value("ep_efficiency", "nvlink"), "ep_net_pct": 100 * cal.value("ep_efficiency", "net"),
        "ep_bytes_x": nccl.network_bytes / deepep.network_bytes, "ep_time_x": nccl.time_us / deepep.time_us,
        "ep_ex_nodes": nodes, "ep_ex_tokens": tokens, "ep_ex_limit": limit,
        "ep_goal_normal": 100 * epfit.GOAL_MEDIAN["deepep"], "ep_goal_ll": 100 * epfit.GOAL_MEDIAN["deepep-ll"],
        "ep_goal_rows": epfit.GOAL_ROWS})


def layout_order_facts(scores: pd.DataFrame) -> Facts:
    """The order of layouts in figures, from ``scores`` (:func:`multigpu.evidence.layoutorder.scores` of the
    held-out sweeps): ``lo_sweeps``, ``lo_meets`` (sweeps meeting the goal), ``lo_best_top`` (sweeps whose
    measured best is in the model's top), ``lo_median_rho``, ``lo_refused`` (layouts refused), the goal
    (``lo_goal_rho``, ``lo_top``), the noise taken as ties (``lo_noise_pct``, %) and the other splits' sweeps
    (``lo_fit``, ``lo_sealed``); how many times the model's step time the runs take (the median over sweeps of
    their median measured / predicted): ``lo_megatron_slower`` on the sweeps run as Megatron (Hagemann et
    al.'s), and on nanotron's ``lo_nanotron_slower_small`` at the fewest GPUs (``lo_nanotron_small_gpus``) and
    ``lo_nanotron_slower_large`` at the most (``lo_nanotron_large_gpus``)."""
    slower = lambda part: 1 / (1 + float(part["median_error_pct"].median()) / 100)  # noqa: E731
    nano = scores[scores["stack"] == "nanotron"]
    small, large = nano["gpus"].min(), nano["gpus"].max()
    return _values({
        "lo_sweeps": len(scores), "lo_meets": int(scores["meets_goal"].sum()),
        "lo_best_top": int((scores["best_rank"] <= layoutorder.TOP).sum()),
        "lo_median_rho": float(scores["spearman"].median()),
        "lo_goal_rho": layoutorder.GOAL_RHO, "lo_top": layoutorder.TOP, "lo_noise_pct": 100 * layoutorder.NOISE,
        "lo_fit": len(layoutorder.selected("fit")), "lo_sealed": len(layoutorder.selected("sealed")),
        "lo_megatron_slower": slower(scores[scores["stack"] == "megatron"]),
        "lo_nanotron_slower_small": slower(nano[nano["gpus"] == small]), "lo_nanotron_small_gpus": small,
        "lo_nanotron_slower_large": slower(nano[nano["gpus"] == large]), "lo_nanotron_large_gpus": large})


def interval_rows() -> pd.DataFrame:
    """The held-out coverage of every interval: the collectives' regimes, then the published runs'."""
    return pd.concat([intervals.coverage(), intervals.run_coverage()], ignore_index=True)


def interval_facts(coverage: pd.DataFrame) -> Facts:
    """The intervals' figures, from ``coverage`` (:func:`interval_rows`: the collectives' regimes and the runs'):
    ``iv_level`` and ``iv_folds``; ``iv_regimes``, ``iv_calibrated`` (regimes whose held-out count lies in its
    binomial region) and ``iv_sharp`` (regimes as sharp as their goal); per regime ``iv_<size>_<family>`` (half
    width, %; family ``node`` or ``nodes``; for the runs ``iv_training`` and ``iv_serving``), ``iv_goal_<...>``
    (its goal, %) and ``iv_share_<...>`` (held-out points inside, %); ``iv_sharp_text``, the regimes that meet
    their goal, in words; ``iv_training_top`` and ``iv_training_runs``, the training interval's upper factor and
    its calibration runs; ``iv_least``, the calibration points a 90 % interval needs; ``iv_miss_weight``, what the
    interval score charges per log unit of a miss; ``iv_strict_sizes``, the slow sizes ``validate --strict``
    needs; and ``iv_alarms`` of ``iv_alarm_sweeps`` held-out sweeps (``iv_alarm_pct`` %) that fail
    ``validate --strict`` (:func:`multigpu.evidence.health.false_alarms`)."""
    calibrated = coverage[(coverage["inside"] >= coverage["acceptance_low"])
                          & (coverage["inside"] <= coverage["acceptance_high"])]
    sharp = coverage[coverage["half_log_width"] <= coverage["goal"]]
    out: dict[str, object] = {"iv_level": 100 * intervals.LEVEL, "iv_folds": intervals.FOLDS,
                              "iv_regimes": len(coverage), "iv_calibrated": len(calibrated), "iv_sharp": len(sharp)}
    for row in coverage.itertuples():
        name = (row.size.split()[0] if row.family == intervals.ALL_RUNS
                else f"{row.size}_{'node' if row.family == 'within a node' else 'nodes'}")
        out[f"iv_{name}"] = _half_width_pct(row.half_log_width)
        out[f"iv_goal_{name}"] = _half_width_pct(row.goal)
        out[f"iv_share_{name}"] = 100 * row.share_points
    names = [_("{size} messages {family}", size=_(r.size), family=_(r.family)) if r.size in intervals.SIZES
             else _(r.size) for r in sharp.itertuples()]
    out["iv_sharp_text"] = _(" and ").join(names) if names else _("none of them")
    failed, total = health.false_alarms()
    out["iv_alarms"], out["iv_alarm_sweeps"], out["iv_alarm_pct"] = failed, total, 100 * failed / total
    out["iv_training_top"] = float(coverage[coverage["size"] == "training step time"]["high"].iloc[0])
    out["iv_training_runs"] = int(coverage[coverage["size"] == "training step time"]["calibration_points"].iloc[0])
    out["iv_least"] = intervals.least_points(intervals.LEVEL)
    out["iv_miss_weight"] = intervals.miss_weight(intervals.LEVEL)
    out["iv_strict_sizes"] = health.STRICT_SIZES
    return _values(out)


def diagnosis_facts(scored: pd.DataFrame) -> Facts:
    """How ``validate``'s diagnosis does on published logs (``scored``:
    :func:`multigpu.evidence.diagnosis.evidence`): per split ``fit`` and ``holdout``, ``dg_<split>_known`` (logs
    whose cause is known), ``dg_<split>_right``, ``dg_<split>_wrong`` and ``dg_<split>_none`` (the fault named is
    one of the causes, another, none), ``dg_<split>_healthy`` (logs with no known cause) and
    ``dg_<split>_false`` (of them, given a fault); ``dg_variants``, the faults the model draws."""
    out: dict[str, object] = {"dg_variants": len(diagnosis.VARIANTS)}
    for split in ("fit", "holdout"):
        part = scored[scored["split"] == split]
        known = part[part["causes"] != ""]
        out[f"dg_{split}_known"], out[f"dg_{split}_healthy"] = len(known), len(part) - len(known)
        for outcome, name in (("right", "right"), ("wrong", "wrong"), ("none named", "none"),
                              ("false alarm", "false")):
            out[f"dg_{split}_{name}"] = int((part["outcome"] == outcome).sum())
    return _values(out)


def pcie_side_facts(held: pd.DataFrame, open_points: pd.DataFrame) -> Facts:
    """The PCIe side's figures: ``ps_<kind>_<side>`` (median |error|, %, NaN without a point) and
    ``ps_<kind>_<side>_n`` for every kind and side of the held-out points ``held``; of the pairs of the open
    points ``open_points`` (fit and held out; :func:`multigpu.evidence.pcieside.pairs`): ``ps_pairs_n``,
    ``ps_pairs_holdout_n``, ``ps_pairs_median`` (median |ratio error|, %) and ``ps_pairs_rows_median`` (median
    |error| of the runs those pairs join, %); ``ps_least_pairs``, the held-out pairs the ratio's band needs;
    ``ps_shut_training`` and ``ps_shut_serving``, the PCIe side's sealed rows not opened yet."""
    paired = pcieside.pairs(open_points)
    table = pcieside.errors(held).set_index(["kind", "side"])
    out: dict[str, object] = {}
    for kind in pcieside.KINDS:
        for side in pcieside.SIDES:
            found = (kind, side) in table.index
            out[f"ps_{kind}_{side}_n"] = int(table.loc[(kind, side), "points"]) if found else 0
            out[f"ps_{kind}_{side}"] = float(table.loc[(kind, side), "median_abs_error_pct"]) if found else math.nan
    joined = open_points[open_points["id"].isin(pd.concat([paired["nvswitch_id"], paired["pcie_id"]]))]
    return _values({**out, "ps_pairs_n": len(paired), "ps_pairs_holdout_n": int((paired["split"] == "holdout").sum()),
                    "ps_pairs_median": 100 * float(paired["ratio_error"].abs().median()),
                    "ps_pairs_rows_median": 100 * float(joined["rel_error"].abs().median()),
                    "ps_least_pairs": pcieside.MIN_PAIRS,
                    "ps_shut_training": sum(map(runs.unopened, runs.runs())),
                    "ps_shut_serving": sum(map(serving.unopened, serving.load(serving.SPLITS, include_unopened=True)))})


def sealed_peer_facts(training: pd.DataFrame) -> Facts:
    """The worst sealed training run (``training``: :func:`multigpu.evidence.runs.compare` over every split)
    beside the published run of the same model, GPU and precision that processes the most tokens per GPU-second:
    ``tr_sealed_worst_id``, ``tr_peer_id``, ``tr_peer_ratio`` (its tokens per GPU-second over the worst run's)
    and ``tr_peer_error`` (the model's signed error on it, %)."""
    rows = {r.id: r for r in runs.runs()}
    rate = training["id"].map(lambda i: rows[i].global_batch * rows[i].seq / rows[i].gpus) / training[
        "measured_step_s"]
    sealed = training[training["split"] == "sealed"]
    worst = sealed.loc[sealed["rel_error"].abs().idxmax()]
    same = (training[["model_id", "gpu", "dtype"]] == worst[["model_id", "gpu", "dtype"]].to_numpy()).all(axis=1)
    peer = rate[same].idxmax()
    return {"tr_sealed_worst_id": f"`{worst['id']}`", "tr_peer_id": f"`{training.loc[peer, 'id']}`",
            "tr_peer_ratio": float(rate[peer] / rate[worst.name]),
            "tr_peer_error": 100 * float(training.loc[peer, "rel_error"])}


def table5_facts(cal: Calibration | None = None) -> Facts:
    """Korthikanti et al.'s Table 5 out of sample, and what the compute line rests on instead
    (:mod:`multigpu.evidence.computefit`): ``t5_n``, ``t5_mean`` and ``t5_worst`` (mean and largest absolute
    error, %), ``t5_fast_n`` (runs the model makes faster than measured), ``calc_mean`` and ``calc_worst``
    (Calculon's, in sample, %); ``lt_n`` and ``lt_worst`` (the layer timings and the largest error on them, %),
    ``eta_ref_pct`` (the A100's best matmul over its peak, %), ``k_ref``, ``sp_share_pct`` (the share of it that
    sequence parallelism splits, %); per training stack with constants of
    its own (``-`` in its name written ``_``), ``share_<stack>_pct`` (its share of the GEMM ceiling, %),
    ``k_<stack>`` and ``fit_n_<stack>`` (the fit-split runs or serving rows it rests on); ``dp8_measured_s``
    and ``dp8_model_s`` (what 8-way data parallelism adds to the 530B iteration, measured and in the model, s),
    ``dp8_gpus`` (the GPUs of that run)."""
    errors = trainingruns.table5_errors(cal)["error_pct"]
    layers = computefit.layer_errors()["error_pct"].abs()
    runs_ = trainingruns.training_validation(cal).set_index("run")
    alone, with_dp = (runs_.loc[f"{models.model('turing-530b').name}, SP + selective{tail}"] for tail in ("", ", DP 8"))
    out: dict[str, object] = {
        "t5_n": len(errors), "t5_mean": float(errors.abs().mean()), "t5_worst": float(errors.abs().max()),
        "t5_fast_n": int((errors < 0).sum()), "calc_mean": trainingruns.CALCULON_TABLE5_PCT["mean"],
        "calc_worst": trainingruns.CALCULON_TABLE5_PCT["worst"], "lt_n": len(layers), "lt_worst": float(layers.max()),
        "eta_ref_pct": 100 * efficiency.constants().gemm_efficiency_max,
        "k_ref": efficiency.constants().traffic_per_hidden,
        "sp_share_pct": 100 * efficiency.constants().sp_traffic_share,
        "dp8_measured_s": float(with_dp["measured_s"] - alone["measured_s"]),
        "dp8_model_s": float(with_dp["model_s"] - alone["model_s"]), "dp8_gpus": int(with_dp["gpus"])}
    for (stack, parameter), row in efficiency.stack_rows().items():
        name = stack.replace("-", "_")
        key = f"share_{name}_pct" if parameter == "share" else f"k_{name}"
        out[key] = 100 * row.value if parameter == "share" else row.value
        out[f"fit_n_{name}"] = row.fit_runs
    return _values(out)


def _fp4_facts(served: pd.DataFrame) -> dict[str, object]:
    """FP4 serving against its published rows: ``sv_fp4_n``, ``sv_fp4_median`` (%) and ``sv_fp4_fast`` (rows
    predicted too fast) of the held-out FP4 rows of TensorRT-LLM's performance page on NVSwitch systems (B200,
    GB200), and ``sv_fp4_page_fp8_median`` (%), the held-out FP8 rows of the same page, measured the same way on
    Hopper; ``sv_fp4_mlperf_n``, ``sv_fp4_mlperf_min`` and ``_max`` (%, signed), MLPerf's fit and held-out
    Offline FP4 runs on those systems; ``sv_fp4_ceiling_pct`` and ``sv_bf16_ceiling_pct``, B200's best measured
    FP4 and BF16 matmul as a share of its dense peak (%, :func:`multigpu.compute.gemm.ceiling`)."""
    switched = served[(served["system_id"].map(pcieside.side) == pcieside.NVSWITCH) & (served["split"] != "sealed")]
    held = switched[(switched["split"] == "holdout") & (switched["kind"] != "mlperf")]
    fp4 = held[held["dtype"] == "fp4"]["rel_error"]
    pages = set(held.loc[held["dtype"] == "fp4", "source"])
    fp8 = held[(held["dtype"] == "fp8") & held["source"].isin(pages)]["rel_error"]
    mlperf = switched[(switched["kind"] == "mlperf") & (switched["dtype"] == "fp4")]["rel_error"]
    return {"sv_fp4_ceiling_pct": 100 * gemm.ceiling("b200", "fp4"),
            "sv_bf16_ceiling_pct": 100 * gemm.ceiling("b200", "bf16"),
            "sv_fp4_n": len(fp4), "sv_fp4_median": 100 * float(fp4.abs().median()),
            "sv_fp4_fast": int((fp4 > 0).sum()), "sv_fp4_page_fp8_median": 100 * float(fp8.abs().median()),
            "sv_fp4_mlperf_n": len(mlperf), "sv_fp4_mlperf_min": 100 * float(mlperf.min()),
            "sv_fp4_mlperf_max": 100 * float(mlperf.max())}


def _mlperf_facts(served: pd.DataFrame) -> dict[str, object]:
    """MLPerf's Offline runs, compared at their dataset's mean lengths: ``sv_mlperf`` (fit and held-out rows),
    ``sv_mlperf_median`` (%, |error|) and ``sv_mlperf_fast`` (rows predicted too fast), and ``sv_mlperf_l2_in``,
    the mean prompt of Llama 2 70B's dataset (tokens, ``data/mlperf_datasets.csv``)."""
    rows = served[(served["kind"] == "mlperf") & (served["split"] != "sealed")]["rel_error"]
    return {"sv_mlperf": len(rows), "sv_mlperf_median": 100 * float(rows.abs().median()),
            "sv_mlperf_fast": int((rows > 0).sum()),
            "sv_mlperf_l2_in": serving.mlperf_datasets()["llama2-70b"].mean_input_tokens}


def release_table() -> pd.DataFrame:
    """:func:`multigpu.evidence.releasefit.held_out_effect` for print, indexed by release: each TensorRT-LLM
    release's decode-time factor, its rows, and its held-out rows' median |error| (%) without and with it."""
    return releasefit.held_out_effect().set_index("release").round(2)


def _release_facts() -> dict[str, object]:
    """TensorRT-LLM's releases' decode-time factors (:mod:`multigpu.evidence.releasefit`): ``rl_n`` (releases
    with one), ``rl_min_fit`` and ``rl_min_held`` (the rows a release needs), ``rl_min`` and ``rl_max`` (the
    smallest and largest factor); ``rl_held_n``, ``rl_before`` and ``rl_after`` (%), the median |error| of those
    releases' held-out throughput rows at the model's kernels and with the factors; the newest release's factor
    and standard error (``rl_newest_factor``, ``rl_newest_se``), and ``rl_newest_pct``, how much shorter the
    model's decode kernels are than that release's (%)."""
    table, errors = releasefit.held_out_effect(), releasefit.held_out_errors()
    newest = releasefit.newest()
    return {"rl_n": len(table), "rl_min_fit": efficiency.MIN_FIT_RUNS, "rl_min_held": efficiency.MIN_HOLDOUT_RUNS,
            "rl_min": float(table["decode_time_factor_x"].min()), "rl_max": float(table["decode_time_factor_x"].max()),
            "rl_held_n": len(errors), "rl_before": 100 * float(errors["error_without"].abs().median()),
            "rl_after": 100 * float(errors["error_with"].abs().median()), "rl_newest_factor": newest.decode_time_factor,
            "rl_newest_se": newest.std_error, "rl_newest_pct": 100 * (1 - 1 / newest.decode_time_factor)}


def _waves_facts() -> dict[str, object]:
    """The held-out throughput rows whose source states how many requests the run queued, priced as that many
    requests in waves (:mod:`multigpu.compute.offline`): ``sv_waves_n`` (rows), ``sv_waves_min`` and
    ``sv_waves_max`` (their request counts), and their median |error| (%) with the waves, ``sv_waves_after``,
    and as a steady state with the same release factors, ``sv_waves_steady``."""
    rows = [r for r in serving.load(("holdout",)) if r.requests]
    waves = serving.compare_rows(rows)
    steady = serving.compare_rows([r.model_copy(update={"requests": None}) for r in rows])
    waves, steady = (frame[frame["metric"] == "throughput"] for frame in (waves, steady))
    counts = [r.requests for r in rows if r.id in set(waves["id"])]
    return {"sv_waves_n": len(waves), "sv_waves_min": min(counts), "sv_waves_max": max(counts),
            "sv_waves_after": 100 * float(waves["rel_error"].abs().median()),
            "sv_waves_steady": 100 * float(steady["rel_error"].abs().median())}


#: The PCIe box whose published serving runs set pipeline depths side by side (TensorRT-LLM's performance page).
PIPELINE_BOX = "pcie-rtxpro6000-8"


def _pipeline_facts(served: pd.DataFrame) -> dict[str, object]:
    """Llama 3.3 70B on :data:`PIPELINE_BOX` by pipeline depth, on its held-out rows: ``sv_pp_n`` (rows), and for
    each depth ``d`` of 1, 2, 4 and 8 ``sv_pp<d>_n`` and ``sv_pp<d>_pct``, the signed median error of the
    throughput (whole %, positive: the model too fast); ``sv_pp_send_pct``, the largest share of a decode step (%) that
    the model gives the sends between stages on those rows of more than one stage; the release's pipeline host
    time per iteration and its standard error (``sv_pp_host_ms``, ``sv_pp_host_se_ms``, ms), and the signed median
    error (%) of those rows with it (``sv_pp_deep_pct``) and without it (``sv_pp_bare_pct``)."""
    held = served[(served["split"] == "holdout") & (served["system_id"] == PIPELINE_BOX)
                  & (served["metric"] == "throughput") & (served["model_id"] == "llama3.1-70b")]
    out: dict[str, object] = {"sv_pp_n": len(held)}
    for depth in (1, 2, 4, 8):
        part = held[held["pp"] == depth]["rel_error"]
        out[f"sv_pp{depth}_n"] = len(part)
        out[f"sv_pp{depth}_pct"] = _whole_pct(part.median()) if len(part) else float("nan")
    deep = held[held["pp"] > 1]
    staged = [inference.run(r.model_id, r.system_id, r.tp, r.batch, r.input_tokens, r.output_tokens, pp=r.pp,
                            dtype=r.dtype) for r in deep.itertuples()]
    out["sv_pp_send_pct"] = max((100 * s.decode_comm_s / s.decode_step_s for s in staged), default=float("nan"))
    releases = set(deep["release"])
    host = efficiency.pipeline_host_rows().get((inference.DEFAULT_STACK, *releases)) if len(releases) == 1 else None
    out["sv_pp_host_ms"] = 1e3 * host.iteration_host_s if host else float("nan")
    out["sv_pp_host_se_ms"] = 1e3 * host.std_error if host and host.std_error is not None else float("nan")
    rows = [r for r in serving.load(("holdout",)) if r.id in set(deep["id"])]
    with efficiency.trying(hosts={(inference.DEFAULT_STACK, r.release): 0.0 for r in rows}):
        bare = serving.compare_rows(rows)["rel_error"]
    out["sv_pp_deep_pct"] = _whole_pct(deep["rel_error"].median())
    out["sv_pp_bare_pct"] = _whole_pct(bare.median())
    return out


def _whole_pct(share: float) -> float:
    """A signed error (a share) as the whole per cent the appendix prints it at, so that a value under half a per
    cent prints as +0, not as a negative zero."""
    return float(round(100 * float(share)))


def fsdp_generation_facts(training: pd.DataFrame) -> Facts:
    """The FSDP stack's held-out runs by GPU generation (``training``: :func:`multigpu.evidence.runs.compare`):
    ``fsdp_a100_pct`` and ``fsdp_h100_pct``, the signed median error of the step time on A100 and on H100
    runs (%, positive: predicted slower than measured), and ``fsdp_held_n``, the runs."""
    held = training[(training["split"] == "holdout") & (training["stack"] == "pytorch-fsdp")]
    by_family = held.groupby("gpu_family")["rel_error"].median()
    return _values({"fsdp_a100_pct": 100 * float(by_family["A100"]), "fsdp_h100_pct": 100 * float(by_family["H100"]),
                    "fsdp_held_n": len(held)})


def runs_facts(training: pd.DataFrame, served: pd.DataFrame) -> Facts:
    """Published runs against the model. Training (``training``: :func:`multigpu.evidence.runs.compare`):
    ``tr_<split>_n``, ``tr_<split>_median``, ``tr_<split>_worst`` (%), ``tr_not`` (fit and held-out runs the
    model cannot express), ``tr_sealed``; serving (``served``: :func:`multigpu.evidence.serving.compare`):
    ``sv_<split>_<metric>_n``/``_median`` (%) for throughput, ttft and tpot, MLPerf (:func:`_mlperf_facts`),
    ``sv_not``, ``sv_sealed``, ``sv_queued`` and ``sv_queued_median`` (%: fit and held-out rows whose
    users outnumber what fits memory, :func:`multigpu.evidence.serving.queued`), FP4 (:func:`_fp4_facts`),
    pipeline depth on a PCIe box (:func:`_pipeline_facts`), TensorRT-LLM's releases (:func:`_release_facts`),
    benchmark runs of a stated number of requests (:func:`_waves_facts`); the
    decode step's memory kernels
    (:func:`multigpu.compute.inference.measured_hbm_fractions`): ``hbm_gpus``,
    ``hbm_write_min_pct``/``_max_pct`` (kernels that write) and ``hbm_read_min_pct``/``_max_pct`` (dot); the
    layers' fixed kernel time (:mod:`multigpu.evidence.decodefit`): ``layer_us``, ``dec_fit_n``,
    ``dec_<split>_n`` and ``dec_<split>_median`` (%) for holdout and sealed. Frames that hold sealed rows give
    the same figures for ``sealed``."""
    out: dict[str, object] = {}
    for split in _SPLIT_ORDER:
        errors = training.loc[training["split"] == split, "rel_error"].abs()
        out.update({f"tr_{split}_n": len(errors), f"tr_{split}_median": 100 * float(errors.median()),
                    f"tr_{split}_worst": 100 * float(errors.max())})
        for metric in ("throughput", "ttft", "tpot"):
            part = served[(served["split"] == split) & (served["metric"] == metric)]["rel_error"].abs()
            out[f"sv_{split}_{metric}_n"] = len(part)
            out[f"sv_{split}_{metric}_median"] = 100 * float(part.median()) if len(part) else float("nan")
    out.update(_fp4_facts(served))
    out.update(_mlperf_facts(served))
    out.update(_pipeline_facts(served))
    out.update(_release_facts())
    out.update(_waves_facts())
    waited = served[serving.queued(served) & (served["split"] != "sealed")]["rel_error"].abs()
    out.update({"sv_queued": len(waited), "sv_queued_median": 100 * float(waited.median()) if len(waited) else 0.0})
    out.update({"tr_not": len(runs.not_modelled()), "tr_sealed": len(runs.selected(("sealed",))),
                "sv_not": len(serving.not_modelled()),
                "sv_sealed": len(serving.load(("sealed",)))})
    hbm = pd.DataFrame(inference.measured_hbm_fractions())
    reads = hbm[hbm["kernel"] == "dot"]["fraction"]
    writes = hbm[hbm["kernel"] != "dot"]["fraction"]
    out.update({"layer_us": 1e6 * efficiency.constants().decode_layer_overhead_s,
                "dec_fit_n": len(decodefit.load(("fit",)))})
    for split in ("holdout", "sealed"):
        decode = decodefit.compare((split,))
        out.update({f"dec_{split}_n": len(decode),
                    f"dec_{split}_median": 100 * float(decode["rel_error"].abs().median())})
    out.update({"hbm_gpus": hbm["gpu"].nunique(),
                "hbm_write_min_pct": 100 * writes.min(), "hbm_write_max_pct": 100 * writes.max(),
                "hbm_read_min_pct": 100 * reads.min(), "hbm_read_max_pct": 100 * reads.max()})
    return _values(out)


# ----------------------------------------------------------------------------- the prose's values

#: The system most reference rows come from, named in the prose.
H200 = "hgx-h200"
#: The comparisons the prose discusses one by one: their errors are glued as ``e_<ref>`` (``#10`` -> ``e_10``).
DISCUSSED = ("#9", "#10", "#11", "#63", "#65", "#66", "#67", "#73", "O2", "O6", "O7", "O9", "O10", "O11", "O12", "O13")
#: Rows of data/measurements.csv whose busbw miss the prose also states as a time gap (``gap<id>``, us).
GAP_ROWS = (10, 11)
#: The prose lists the comparisons off by more than this (%).
MISS_PCT = 10.0


def _values(pairs: dict[str, object]) -> Facts:
    """``pairs`` with every numpy scalar made a plain Python number."""
    return {name: plain(value) for name, value in pairs.items()}


def coverage_facts(table: pd.DataFrame, cal: Calibration | None = None) -> Facts:
    """What is compared, and what is not (``table``: :func:`multigpu.evidence.validation.comparisons`).

    Row counts: ``cov_rows`` (measured rows of the reference file), ``cov_yes`` (compared with the model),
    ``cov_collective``, ``cov_copy``, ``cov_training``, ``cov_no`` (by how); ``ref_rows``, ``ref_systems``
    and ``ref_h200`` (collective and copy rows of the reference file, their systems, those of the HGX
    H200); ``train_k22`` (Korthikanti et al.'s runs); text, in the current language: ``harness_rows`` (what
    the harness overhead was fitted on: "rows #8 and #9", or the fit sweeps by id).
    """
    coverage = validation.coverage()
    compared = coverage["compared"].value_counts()
    reference = validation.reference_table(table)
    training = validation.training_table(table)
    harness = calibration.resolve(cal).constant("harness_overhead_us", "torch")
    return _values({
        "cov_rows": len(coverage), "cov_yes": int((coverage["compared"] != "no").sum()),
        **{f"cov_{kind}": int(compared.get(kind, 0)) for kind in (*validation.KINDS, "no")},
        "harness_rows": _fitted_on(harness),
        "ref_rows": len(reference), "ref_systems": reference["system"].nunique(),
        "ref_h200": int((reference["system"] == H200).sum()),
        "train_k22": int(training["source"].str.startswith(trainingruns.K22_SOURCE).sum())})


def _fitted_on(constant: calibration.Constant) -> str:
    """What a constant was fitted on, in words of the current language: "rows #8 and #9" or "the fit sweeps
    `a` and `b`"."""
    if constant.fitted_ids:
        return _("rows {ids}", ids=_(" and ").join(f"#{i}" for i in constant.fitted_ids))
    return _("the fit sweeps {ids}", ids=_(" and ").join(f"`{s}`" for s in constant.fitted_sweeps))


def summary_facts(table: pd.DataFrame) -> Facts:
    """Error statistics by regime (``table``: :func:`multigpu.evidence.validation.comparisons`).

    For each key of :data:`multigpu.evidence.validation.REGIMES`: ``<key>_rows`` and ``<key>_within``
    (rows, and rows within +-10 %), ``<key>_median`` and ``<key>_worst`` (median and worst absolute error,
    %), ``<key>_bias`` (signed median error, %), ``<key>_worst_ref`` (the worst row's ref, text),
    ``<key>_direction`` ("fast" if the model's signed median is above the measurements, else "slow", in the
    current language).
    """
    summary = validation.error_summary(table).set_index("regime")
    out: dict[str, object] = {}
    for key, regime in validation.REGIMES.items():
        if regime not in summary.index:  # a regime with no rows
            continue
        row = summary.loc[regime]
        out.update({f"{key}_rows": int(row["rows"]), f"{key}_median": float(row["median_abs_error_pct"]),
                    f"{key}_direction": _("fast") if row["median_error_pct"] > 0 else _("slow"),
                    f"{key}_worst": float(row["worst_abs_error_pct"]), f"{key}_worst_ref": row["worst_ref"],
                    f"{key}_within": int(row["within_10pct"]), f"{key}_bias": float(row["median_error_pct"])})
    return _values(out)


def out_of_sample_facts(table: pd.DataFrame) -> Facts:
    """The out-of-sample collectives (``table``: :func:`multigpu.evidence.validation.comparisons`):
    ``oos_coll_rows`` (checks), ``oos_coll_within`` (within their tolerance), ``oos_coll_known`` (with a
    documented cause of a miss); counts."""
    oos = validation.out_of_sample_table(table)
    return _values({"oos_coll_rows": len(oos), "oos_coll_within": int(oos["within_tolerance"].sum()),
                    "oos_coll_known": int((oos["known_miss"] != "").sum())})


def weakness_facts(table: pd.DataFrame, cal: Calibration | None = None) -> Facts:
    """Where the model is weak, and why (``table``: :func:`multigpu.evidence.validation.comparisons`).

    ``e_<ref>`` (error of each comparison of :data:`DISCUSSED`, %); ``gap<id>`` (measured minus predicted
    time of each row of :data:`GAP_ROWS`, us); calibration constants: ``nvls_latency`` (NVLS latency per
    hop, us), ``bounce_pct`` (host-staged PCIe rate, % of the link's), ``sm_default_pct`` (default NVLink
    SM efficiency, %); counts: ``n_weak`` (comparisons off by more than :data:`MISS_PCT`), ``n_small``
    (small-message collectives), ``mlperf_rows`` (MLPerf time-to-train rows); text: ``small_systems`` (the
    systems of the small-message rows, listed in the current language's way).
    """
    cal = calibration.resolve(cal)
    errors = table.set_index("ref")["error_pct"]
    small = table[(table["kind"] == "collective") & (table["size_class"] == "small")]
    coverage = validation.coverage()
    out: dict[str, object] = {f"e_{ref.strip('#').lower()}": float(errors.loc[ref]) for ref in DISCUSSED}
    out.update({f"gap{row_id}": topology.time_gap_us(row_id, cal)["gap_us"] for row_id in GAP_ROWS})
    out.update({
        "nvls_latency": cal.value("hop_latency_us", "nvlink.nvls.simple"),
        "bounce_pct": 100 * cal.value("bounce", "rate_factor"),
        "sm_default_pct": 100 * cal.value("sm_efficiency", "nvlink.default"),
        "n_weak": len(validation.misses(table, above_pct=MISS_PCT)), "n_small": len(small),
        "small_systems": _(", ").join(sorted(vocabulary.short_system_name(s) for s in small["system"].unique())),
        "mlperf_rows": int(coverage["note"].str.startswith("time-to-train").sum())})
    return _values(out)


def vendor_facts(cal: Calibration | None = None) -> Facts:
    """Vendor-modelled and vendor-presented rows beside the model.

    NVIDIA's Table 3 (Llama 3.1 70B, H200, TP=2): ``nv_benefit_1``, ``nv_benefit_32`` (NVIDIA's switch over
    mesh throughput at batch 1 and 32, x), ``our_benefit_1``, ``our_benefit_32`` (ours at FP8, x),
    ``bf16_lo``/``bf16_hi`` and ``fp8_lo``/``fp8_hi`` (range of NVIDIA's throughput over ours, x); the
    conference slides: ``v<id>`` (the model against each vendor row, %).
    """
    f = bottlenecks.compare_fixed_batch(cal=cal).set_index("batch")
    out: dict[str, object] = {
        "nv_benefit_1": float(f["nvidia_benefit_x"].iloc[0]), "nv_benefit_32": float(f.loc[32, "nvidia_benefit_x"]),
        "our_benefit_32": float(f.loc[32, "fp8_benefit_x"]), "our_benefit_1": float(f["fp8_benefit_x"].iloc[0])}
    for dtype in ("bf16", "fp8"):  # NVIDIA / ours, mesh and switch, as in chapter 3
        both = pd.concat([f["nvidia_mesh"] / f[f"{dtype}_mesh"], f["nvidia_switch"] / f[f"{dtype}_switch"]])
        out[f"{dtype}_lo"], out[f"{dtype}_hi"] = float(both.min()), float(both.max())
    vendor = validation.vendor_statements(cal)
    out.update({f"v{int(i)}": float(d) for i, d in zip(vendor["id"], vendor["difference_pct"])})
    return _values(out)


def _in_both(make: Callable[[], Facts]) -> Facts:
    """``make()``'s facts in English, and each text fact's Chinese (``make()`` again, in Chinese) as
    ``<name>_zh``; numbers once (:func:`multigpu.book.glue.per_language` keeps them in both)."""
    made = lang.per_language(make)
    return {**made["en"], **{f"{name}_zh": value for name, value in made["zh"].items() if isinstance(value, str)}}


def facts(cal: Calibration | None = None) -> Facts:
    """Every value the appendix's prose cites, by glue name (the union of the ``*_facts`` functions; units
    as they state), with calibration ``cal`` (None: the shipped one). Each text fact is there in English and,
    as ``<name>_zh``, in Chinese (a ref or an id is the same in both); the numbers once, for both editions."""
    table = validation.comparisons(cal)
    comparison = sweepchecks.comparison(cal)
    trained = runs.compare(splits=_ALL_SPLITS, cal=cal)
    return {**_in_both(lambda: coverage_facts(table, cal)), **_in_both(lambda: summary_facts(table)),
            **out_of_sample_facts(table), **_in_both(lambda: weakness_facts(table, cal)), **vendor_facts(cal),
            **_in_both(lambda: sweep_facts(comparison, cal)), **_in_both(spread_facts),
            **_in_both(lambda: wide_miss_facts(sweepchecks.held_out_wide_misses(comparison))),
            **latency_factor_facts(deployment.sweep_points(("holdout",), cal)), **anchored_facts(sweepchecks.anchored_points(cal)),
            **_in_both(lambda: scale_facts(sweepchecks.scale_points(comparison))),
            **runs_facts(trained, serving.compare(splits=_ALL_SPLITS, cal=cal)), **fsdp_generation_facts(trained),
            **_in_both(lambda: sealed_peer_facts(trained)), **_in_both(lambda: fit_status_facts(cal)),
            **_in_both(lambda: training_miss_facts(trained)),
            **pcie_side_facts(pcieside.comparisons(("holdout",), cal), pcieside.comparisons(("fit", "holdout"), cal)),
            **_in_both(functools.partial(interval_facts, interval_rows())),
            **layout_order_facts(layoutorder.scores()), **scaleout_facts(scaleout.series(cal=cal)), **table5_facts(cal),
            **ep_facts(cal),
            **diagnosis_facts(diagnosis.evidence())}
