"""Chapter 3 (communication bottlenecks): its tables and the values its prose cites (its figures are
:mod:`multigpu.book.ch03_figures`).

Everything is computed by :mod:`multigpu.evidence.bottlenecks` (training,
inference and collective models) and :mod:`multigpu.evidence.claims.bottlenecks`
(the article's claims); this module lays it out for the page:

- ``*_facts`` return the values one section of the prose cites, by glue name
  (:data:`multigpu.book.glue.Facts`), and :func:`facts` all of them: the
  notebook glues them with one call, ``glue_all(ch03.facts(cal))``;
- :func:`verdict_table` is the table of the chapter's claims.

Units follow the glue names and the columns they come from: ``_s`` seconds,
``_ms`` milliseconds, ``_pct`` percent, ``_x`` ratios, ``_GB``/``_MB`` 1e9/1e6
bytes; tokens, sequences, batches and GPUs are counts. Nothing here depends on
a price file: chapter 3 has no costs.

Its words come in both editions' languages (:mod:`multigpu.book.lang`): the tables' Chinese headers and label cells are the
messages of :data:`TABLE_HEADERS` and the ``*_LABELS`` tuples, and
:func:`facts` holds every text fact in English and, as ``<name>_zh``, in
Chinese.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from multigpu.book import claim_values, glue, lang, vocabulary
from multigpu.book.glue import Facts, plain, verdict_facts
from multigpu.book.lang import N_, _
from multigpu.book.money import fmt
from multigpu.comm.calibration import Calibration
from multigpu.compute import inference, models
from multigpu.evidence import bottlenecks, claims, moe, serving, trainingruns, underload
from multigpu.evidence.bottlenecks import Cluster
from multigpu.evidence.claims import bottlenecks as claim_checks
from multigpu.hardware import catalog

# ----------------------------------------------------------------------------- the words of figures and tables
# The evidence layer names its setups, layouts, cases and rows in English; these messages are their Chinese
# (multigpu.book.lang.label: a label missing here fails the notebook in Chinese, not just the catalog check).

#: The setups of :data:`multigpu.evidence.bottlenecks.TRAINING_SETUPS`, ``DP_SETUPS`` and ``DECODE_CASES``.
SETUP_LABELS = (N_("8x A100, PCIe"), N_("8x A100, NVSwitch"), N_("8x H200, NVLink mesh"), N_("8x H200, NVSwitch"),
                N_("4 x 8 H200, NVSwitch + IB"), N_("4 x 8 A100, PCIe + 100 GbE"), N_("32 x 8 H200, NVSwitch + IB"))
#: The layouts of :data:`multigpu.evidence.bottlenecks.LAYOUTS` and the parts of a training step
#: (:data:`multigpu.evidence.bottlenecks.PART_NAMES`).
LAYOUT_LABELS = (N_("DP only"), N_("TP 8"), N_("TP 2 x PP 2"))
PART_LABELS = (N_("compute"), N_("pipeline bubble"), N_("optimizer step"), N_("exposed TP communication"), N_("exposed PP communication"),
               N_("exposed DP communication"))
#: The cases of :func:`multigpu.evidence.bottlenecks.sensitivity` and the rows of ``transfer_times``.
CASE_LABELS = (N_("training, DP 8"), N_("training, TP 8"), N_("decode, TP 8"))
METHOD_LABELS = (N_("article: 20 GB / bidirectional GB/s"), N_("20 GB / per-direction GB/s"),
                 N_("one 20 GB all-reduce, collective model"), N_("query schedule: prefill all-reduces"),
                 N_("query schedule: decode all-reduces"), N_("query schedule: total"))
#: The sources of ``compare_at_rate`` and ``training_validation``, the runs of the latter and the reasons of
#: ``training_measurements`` (the rows' words; names and numbers in them stay as they are).
SOURCE_LABELS = (N_("NVIDIA (vendor-modelled)"), N_("our model, bf16"), N_("our model, fp8"),
                 N_("measurements.csv row 75"), N_("Korthikanti et al. 2022, Table 5"),
                 N_("Korthikanti et al. 2022, sec. 6.3"))
RUN_LABELS = (N_("GPT-3 175B, full recompute (row 75)"), N_("Megatron GPT 22B, SP + selective"),
              N_("Megatron GPT 22B, full recompute"), N_("GPT-3 175B (Megatron shape), SP + selective"),
              N_("GPT-3 175B (Megatron shape), full recompute"), N_("Megatron-Turing NLG 530B, SP + selective"),
              N_("Megatron-Turing NLG 530B, full recompute"), N_("Megatron GPT 1T, SP + selective"),
              N_("Megatron GPT 1T, full recompute"), N_("Megatron-Turing NLG 530B, SP + selective, DP 8"))
WHY_LABELS = (
    N_("layout, batch and sequence given; 138 TFLOP/s counts hardware FLOPs with full recomputation (SC21 eq. 3), "
       "so the model runs with full recomputation and is compared in iteration time"),
    N_("time-to-train to a quality target: the tokens processed (set by convergence), the numeric precision and "
       "the layout are not in the file"))
#: The machines, software and limits of the MoE section (:mod:`multigpu.evidence.moe`).
MOE_LABELS = (N_("8 x 8 B200, NVSwitch + InfiniBand"), N_("GB200 NVL72, one NVLink domain"),
              N_("8 x 8 L40S, PCIe + 100 GbE"), N_("Megatron all-to-all, 1F1B"), N_("DeepEP, 1F1B"),
              N_("DeepEP, DualPipe"), N_("network"), N_("NVLink fabric"), N_("fixed time"))
#: The columns whose cells are words to translate, in every table the notebook shows through
#: :func:`multigpu.book.tables.use_for_dataframes` (the rest is data: numbers, ids, model names).
LABEL_COLUMNS = claim_values.label_columns("setup", "layout", "case", "method", "source", "why", "verdict",
                                           "software", "limit")
#: The units of the published training measurements (:func:`multigpu.evidence.trainingruns.training_measurements`).
MEASUREMENT_UNITS = (N_("TFLOP/s/GPU (44% of 312)"), N_("minutes"))
#: The same for the table of :func:`multigpu.evidence.trainingruns.training_validation`, whose ``layout`` is data
#: ("8 x 16 x 8"): the notebook shows it with :func:`multigpu.book.tables.show_table`.
VALIDATION_LABEL_COLUMNS = ("run", "source")

#: The headers of the chapter's tables (:func:`multigpu.book.tables.header` of their columns), as messages.
TABLE_HEADERS = (
    N_("Setup"), N_("Layout"), N_("TP"), N_("PP"), N_("DP"), N_("Step (s)"), N_("Compute (%)"), N_("Bubble (%)"),
    N_("TP (%)"), N_("PP (%)"), N_("DP (%)"), N_("MFU (%)"), N_("Batch"), N_("Weights (ms)"), N_("KV cache (ms)"),
    N_("Layer fixed (ms)"), N_("Other compute (ms)"), N_("All-reduce (ms)"), N_("Step (ms)"), N_("All-reduce (%)"),
    N_("Fits"),
    N_("One GPU (s)"), N_("Compute (s)"), N_("Exposed communication (s)"), N_("Communication (%)"),
    N_("Speedup (×)"), N_("Compute only speedup (×)"), N_("Limit (×)"), N_("GPUs"), N_("Sequences per GPU"),
    N_("Tokens per GPU"), N_("Share at 1 (%)"), N_("Case"), N_("Bytes per GPU (GB)"), N_("Time (s)"),
    N_("Half bandwidth (%)"), N_("Double latency (%)"), N_("Dtype"), N_("Per token (MB)"), N_("Per query (GB)"),
    N_("Per query (GiB)"), N_("System"), N_("Per step (MB)"), N_("All-reduce per token (µs)"), N_("Method"),
    N_("h200-p2p-8 (ms)"), N_("hgx-h200 (ms)"), N_("Ratio (×)"), N_("NVIDIA mesh"), N_("NVIDIA switch"),
    N_("NVIDIA benefit (×)"), N_("BF16 mesh"), N_("BF16 switch"), N_("BF16 benefit (×)"), N_("FP8 mesh"),
    N_("FP8 switch"), N_("FP8 benefit (×)"), N_("Rate (tokens/s per user)"), N_("Source"), N_("TP 1 batch"),
    N_("TP 1 (tokens/s per GPU)"), N_("Mesh batch"), N_("Mesh (tokens/s per GPU)"), N_("Switch batch"),
    N_("Switch (tokens/s per GPU)"), N_("Benefit (×)"), N_("Mesh printed"), N_("Mesh identity"), N_("Mesh ratio"),
    N_("Switch printed"), N_("Switch identity"), N_("Switch ratio"), N_("ID"), N_("Benchmark"), N_("Value"),
    N_("Unit"), N_("Comparable"), N_("Why"), N_("Run"), N_("Measured (s)"), N_("Model (s)"), N_("Error (%)"),
    N_("Fitted"), N_("Verdict"), N_("Seed value"), N_("Model value"), N_("Prefill (s)"),
    N_("Capacity (requests/s)"), N_("Within limits (requests/s)"), N_("Share of capacity (%)"),
    N_("Prefill copies"), N_("Prefill TP"), N_("Decode copies"), N_("Decode TP"), N_("KV transfer (ms)"),
    N_("Network (MB)"), N_("NVLink (MB)"), N_("Dispatch (ms)"), N_("Combine (ms)"), N_("Layer (ms)"),
    N_("Limit"), N_("Software"), N_("Exposed all-to-all (s)"), N_("Bubble (s)"), N_("All-to-all (%)"),
    N_("Step on nodes (s)"), N_("Step on racks (s)"), N_("Break-even premium (%)"), N_("Faster compute (%)"),
    N_("EP"), N_("Nodes"), N_("TPOT (ms)"), N_("Dispatch and combine (ms)"), N_("Tokens/s per GPU"),
)


# ----------------------------------------------------------------------------- plots (in the current language)


# ----------------------------------------------------------------------------- figures
# Each draws in the current language (multigpu.book.lang): the notebook shows both with plotting.show_both.


# ----------------------------------------------------------------------------- the prose's values

def _setup(system: str, nodes: int = 1) -> Cluster:
    """The training setup of ``nodes`` nodes of catalogue system ``system``."""
    return next(s for s in bottlenecks.TRAINING_SETUPS if (s.system, s.nodes) == (system, nodes))


#: The training setups the prose names, by the key of their glue names (``tb_pcie_...``, ``sc_mesh_...``).
SETUPS: dict[str, Cluster] = {"pcie": _setup("pcie-a100-8"), "a100sw": _setup("dgx-a100"),
                              "mesh": _setup(bottlenecks.MESH), "h200sw": _setup(bottlenecks.SWITCH),
                              "multi": _setup(bottlenecks.SWITCH, 4)}
#: The layouts of :data:`multigpu.evidence.bottlenecks.LAYOUTS` by the key of their glue names.
LAYOUT_KEYS: dict[str, str] = {"dp": "DP only", "tp8": "TP 8", "tp2pp2": "TP 2 x PP 2"}
#: The data-parallel setups of the batch sweep that the prose names (labels of
#: :data:`multigpu.evidence.bottlenecks.DP_SETUPS`).
ETHERNET = next(s for s in bottlenecks.DP_SETUPS if (s.system, s.nodes) == ("pcie-a100-8", 4))
LARGE_IB = next(s for s in bottlenecks.DP_SETUPS if (s.system, s.nodes) == (bottlenecks.SWITCH, 32))
#: The rows of :func:`multigpu.evidence.bottlenecks.transfer_times` by the key of their glue names.
TRANSFER_KEYS: dict[str, str] = {
    "art": "article: 20 GB / bidirectional GB/s", "dir": "20 GB / per-direction GB/s",
    "one": "one 20 GB all-reduce, collective model", "pre": "query schedule: prefill all-reduces",
    "dec": "query schedule: decode all-reduces", "tot": "query schedule: total"}
#: Exercise 3: sequences per GPU per step it starts from, and the exposed share (%) to get under.
EXERCISE_SEQS, EXERCISE_SHARE_PCT = 4, 10.0


def _values(pairs: dict[str, object]) -> Facts:
    """``pairs`` with every numpy scalar made a plain Python number."""
    return {name: plain(value) for name, value in pairs.items()}


def training_step_facts(cal: Calibration | None = None) -> Facts:
    """Where a training step's time goes.

    ``seq`` (tokens per sequence), ``seqs_per_gpu`` (sequences per GPU per step), ``mesh_link`` (GB/s per
    direction of one link of the H200 mesh); for each setup key of :data:`SETUPS` and layout key of
    :data:`LAYOUT_KEYS`, ``tb_<setup>_<layout>_comm`` (exposed communication, % of the step),
    ``..._step`` (step time, s) and ``..._mfu`` (%); ``tb_pcie_tp8_slow`` (TP 8 step on PCIe over the
    same on NVSwitch, x) and ``tb_bubble_max`` (largest pipeline bubble, % of the step).
    """
    table = bottlenecks.training_breakdown(cal=cal)
    b = table.set_index(["setup", "layout"])
    out: dict[str, object] = {
        "seq": bottlenecks.SEQ, "seqs_per_gpu": bottlenecks.SEQS_PER_GPU,
        "mesh_link": catalog.link(catalog.system(bottlenecks.MESH).nvlink).per_link_GBps_per_dir}
    for key, setup in SETUPS.items():
        for lkey, layout in LAYOUT_KEYS.items():
            row = b.loc[(setup.label, layout)]
            out[f"tb_{key}_{lkey}_comm"] = row["comm_pct"]
            out[f"tb_{key}_{lkey}_step"] = row["step_s"]
            out[f"tb_{key}_{lkey}_mfu"] = row["mfu_pct"]
    tp8 = LAYOUT_KEYS["tp8"]
    out["tb_pcie_tp8_slow"] = (b.loc[(SETUPS["pcie"].label, tp8), "step_s"]
                               / b.loc[(SETUPS["a100sw"].label, tp8), "step_s"])
    out["tb_bubble_max"] = table["bubble_pct"].max()
    return _values(out)


def decode_step_facts(cal: Calibration | None = None) -> Facts:
    """Where a decode step's time goes (Llama 3.1 70B, BF16).

    ``isl`` and ``osl`` (prompt and output tokens), ``dec_allreduces`` (all-reduces per decode step: two per
    layer); ``dec_<case>_ar...`` the step's all-reduce time (ms), ``..._pct`` its share of the step (%),
    ``dec_pcie8_w`` the weight reads (ms) and ``dec_sw2_step32`` the whole step (ms): ``pcie8``/``pcie4``
    TP 8/4 on the A100 PCIe server, ``a100sw8`` TP 8 behind the A100 NVSwitch, ``mesh2``/``sw2`` TP 2 on the
    H200 mesh/switch (``ar1``, ``ar32``: batch 1, 32), ``h200_8`` TP 8 behind the H200 switch; ``dec_layers``,
    ``dec_fixed_ms`` (the layers' fixed kernel time of a step, ms, the same in every case) and ``dec_other_ms``
    (the most any case's math takes beyond its reads, ms); ``dec_h200_8_fixed_pct`` and ``dec_h200_8_w_pct``: the
    fixed time's and the weight reads' share of the batch-1 step at TP 8 behind the H200 switch (%).
    """
    d = bottlenecks.decode_breakdown(cal=cal).set_index(["setup", "tp", "batch"])
    pcie, a100sw, mesh, h200sw = (SETUPS[k].label for k in ("pcie", "a100sw", "mesh", "h200sw"))
    return _values({
        "isl": bottlenecks.INPUT_TOKENS, "osl": bottlenecks.OUTPUT_TOKENS,
        "dec_pcie8_ar": d.loc[(pcie, 8, 1), "allreduce_ms"], "dec_pcie8_pct": d.loc[(pcie, 8, 1), "allreduce_pct"],
        "dec_pcie8_w": d.loc[(pcie, 8, 1), "weights_ms"], "dec_pcie4_pct": d.loc[(pcie, 4, 1), "allreduce_pct"],
        "dec_a100sw8_pct": d.loc[(a100sw, 8, 1), "allreduce_pct"],
        "dec_mesh2_ar1": d.loc[(mesh, 2, 1), "allreduce_ms"], "dec_sw2_ar1": d.loc[(h200sw, 2, 1), "allreduce_ms"],
        "dec_mesh2_ar32": d.loc[(mesh, 2, 32), "allreduce_ms"], "dec_sw2_ar32": d.loc[(h200sw, 2, 32), "allreduce_ms"],
        "dec_sw2_step32": d.loc[(h200sw, 2, 32), "step_ms"], "dec_h200_8_pct": d.loc[(h200sw, 8, 1), "allreduce_pct"],
        "dec_allreduces": 2 * models.model(bottlenecks.SERVE_MODEL).layers,
        "dec_layers": models.model(bottlenecks.SERVE_MODEL).layers, "dec_fixed_ms": d["layer_fixed_ms"].max(),
        "dec_other_ms": d["other_compute_ms"].max(),
        "dec_h200_8_fixed_pct": 100 * d.loc[(h200sw, 8, 1), "layer_fixed_ms"] / d.loc[(h200sw, 8, 1), "step_ms"],
        "dec_h200_8_w_pct": 100 * d.loc[(h200sw, 8, 1), "weights_ms"] / d.loc[(h200sw, 8, 1), "step_ms"]})


def scaling_facts(cal: Calibration | None = None) -> Facts:
    """Scaling efficiency against GPU count.

    ``strong_batch`` (sequences per step of the strong-scaling runs); for the four single-node setups of
    :data:`SETUPS`, ``sc_<setup>_<kind><n>`` the efficiency (%) of ``kind`` (tp, dp, pp) at ``n`` GPUs and
    ``sc_<setup>_tp8_compute`` the same with compute alone (%); ``sc_mesh_dp2`` 2-way DP on the mesh (%).
    """
    sc = bottlenecks.scaling(cal=cal).set_index(["setup", "kind", "gpus"])
    per_node = catalog.system(SETUPS["pcie"].system).gpus_per_node
    out: dict[str, object] = {"strong_batch": bottlenecks.SEQS_PER_GPU * per_node}
    for key in ("pcie", "a100sw", "mesh", "h200sw"):
        label = SETUPS[key].label
        for kind, n in (("TP", 8), ("TP", 2), ("DP", 8), ("DP", 64), ("PP", 8), ("PP", 32)):
            out[f"sc_{key}_{kind.lower()}{n}"] = sc.loc[(label, kind, n), "efficiency_pct"]
        out[f"sc_{key}_tp8_compute"] = sc.loc[(label, "TP", 8), "compute_efficiency_pct"]
    out["sc_mesh_dp2"] = sc.loc[(SETUPS["mesh"].label, "DP", 2), "efficiency_pct"]
    return _values(out)


def amdahl_facts(cal: Calibration | None = None) -> Facts:
    """Amdahl's limit of 8-way tensor parallelism.

    For the four single-node setups of :data:`SETUPS`: ``am_<setup>_limit`` (one GPU's step over the
    exposed communication, x), ``am_<setup>_speedup`` (reached, x), ``am_<setup>_comm`` (exposed share of
    the step, %); ``am_pcie_c_pct`` (exposed communication on PCIe as a share of one GPU's step, %).
    """
    a = bottlenecks.amdahl(cal=cal).set_index("setup")
    out: dict[str, object] = {}
    for key in ("pcie", "a100sw", "mesh", "h200sw"):
        row = a.loc[SETUPS[key].label]
        out[f"am_{key}_limit"] = row["limit_x"]
        out[f"am_{key}_speedup"] = row["speedup_x"]
        out[f"am_{key}_comm"] = row["comm_pct"]
    pcie = a.loc[SETUPS["pcie"].label]
    out["am_pcie_c_pct"] = 100 * pcie["exposed_comm_s"] / pcie["one_gpu_s"]
    return _values(out)


def dp_batch_facts(cal: Calibration | None = None) -> Facts:
    """When data-parallel communication stops dominating.

    ``cx_pcie``/``cx_eth``: the fewest sequences per GPU per step at which exposed DP communication is under
    half the step on one A100 PCIe server / four of them on 100 GbE, ``..._tokens`` the same in tokens,
    ``..._at1`` the exposed share with one sequence per GPU (%); ``cx_ib_at1`` that share on 32 H200 nodes
    with InfiniBand (%); ``cx_eth_32`` the share at 32 sequences per GPU on 100 GbE (%).
    """
    sweep = bottlenecks.dp_batch_sweep(cal=cal)
    c = bottlenecks.dp_crossover(sweep).set_index("setup")
    pcie, eth = SETUPS["pcie"].label, ETHERNET.label
    return _values({
        "cx_pcie": c.loc[pcie, "seqs_per_gpu"], "cx_pcie_tokens": c.loc[pcie, "tokens_per_gpu"],
        "cx_pcie_at1": c.loc[pcie, "share_at_1_pct"], "cx_eth": c.loc[eth, "seqs_per_gpu"],
        "cx_eth_tokens": c.loc[eth, "tokens_per_gpu"], "cx_eth_at1": c.loc[eth, "share_at_1_pct"],
        "cx_ib_at1": c.loc[LARGE_IB.label, "share_at_1_pct"],
        "cx_eth_32": sweep.set_index(["setup", "seqs_per_gpu"]).loc[(eth, 32), "dp_comm_pct"]})


def _decode_sentences(found: dict, above: pd.Series, pcie: str) -> Facts:
    """The decode-ratio sentences in the current language: ``dr_above_text``, ``dr_trend_text``,
    ``dr_takeaway`` and ``c16_where`` (see :func:`decode_ratio_facts`)."""
    where = glue.render(claim_checks.pcie8_finding(found))
    if above.empty:
        above_text = _("No case lies above the line: even TP 8 across the sockets of the PCIe server stays below it.")
    elif set(above.index.get_level_values(0)) == {pcie}:
        above_text = _("Only one case lies above the line: TP 8 across the sockets of the PCIe server, {where}.",
                       where=where)
    else:
        above_text = _("{count} setups lie above the line at some batch.",
                       count=above.index.get_level_values(0).nunique())
    trend = (_("rises with batch: the messages grow with it and stop being latency-bound, while the weight "
               "reads stay the same") if found["pcie8"]["rises"] else
             _("falls with batch: compute (KV-cache reads) grows faster than the latency-bound all-reduces"))
    takeaway = (_("on PCIe across sockets they outlast the compute {where}", where=where)
                if found["pcie8"]["first_batch"] else
                _("even on PCIe across sockets they stay shorter than the compute"))
    c16_where = (_("nowhere in the cases modelled") if found["pcie8"]["first_batch"] is None else
                 _("only where tensor parallelism crosses PCIe between CPU sockets ({where})", where=where))
    return {"dr_above_text": above_text, "dr_trend_text": trend, "dr_takeaway": takeaway, "c16_where": c16_where}


def decode_ratio_facts(cal: Calibration | None = None) -> Facts:
    """Decode all-reduce time over compute time (ratio): ``dr_pcie8_1`` and ``dr_pcie8_128`` (TP 8 on the
    A100 PCIe server, batch 1 and 128), ``dr_sw2_1`` (TP 2, H200 switch, batch 1), ``dr_mesh2_32`` (TP 2,
    H200 mesh, batch 32), ``dr_h200_8_1`` (TP 8, H200 switch, batch 1); sentences that follow the model, in
    English and, as ``<name>_zh``, in Chinese: ``dr_above_text`` (which cases lie above the line),
    ``dr_trend_text`` (how the PCIe ratio moves with batch, and why), ``dr_takeaway`` and ``c16_where`` (where
    communication outlasts compute)."""
    r = bottlenecks.decode_ratio(cal=cal).set_index(["setup", "tp", "batch"])["ratio"]
    pcie, mesh, h200sw = (SETUPS[k].label for k in ("pcie", "mesh", "h200sw"))
    found = claim_checks.decode_outlasts(cal)
    out = _values({"dr_pcie8_1": r.loc[(pcie, 8, 1)], "dr_pcie8_128": r.loc[(pcie, 8, 128)],
                   "dr_sw2_1": r.loc[(h200sw, 2, 1)], "dr_mesh2_32": r.loc[(mesh, 2, 32)],
                   "dr_h200_8_1": r.loc[(h200sw, 8, 1)]})
    return out | glue.per_language(lambda: _decode_sentences(found, r[r > 1], pcie))


def sensitivity_facts(cal: Calibration | None = None) -> Facts:
    """Data against tensor parallelism when every bandwidth halves or every latency doubles.

    ``se_dp_GB``/``se_tp_GB`` (GB each GPU sends per training step, DP 8 / TP 8 on the A100 PCIe server),
    ``se_dec_MB`` (MB per batch-1 decode step, TP 8); ``se_<setup>_<case>_bw`` and ``..._lat``: how much
    longer the step gets (%) with bandwidth halved / latency doubled, on the PCIe server (``pcie``) and
    behind NVSwitch (``sw``); ``se_pcie_dp_lat`` as text
    (:func:`multigpu.book.money.fmt`: a value under the 0.1 % that ``.1f`` shows reads as two significant figures,
    not "0.0").
    """
    z = bottlenecks.sensitivity(cal=cal).set_index(["setup", "case"])
    p, s = SETUPS["pcie"].label, SETUPS["a100sw"].label
    dp, tp, dec = "training, DP 8", "training, TP 8", "decode, TP 8"
    dp_lat = float(z.loc[(p, dp), "double_latency_pct"])
    return glue.per_language(lambda: {"se_pcie_dp_lat": fmt(dp_lat, ".1f")}) | _values({
        "se_dp_GB": z.loc[(p, dp), "bytes_per_gpu_GB"], "se_tp_GB": z.loc[(p, tp), "bytes_per_gpu_GB"],
        "se_dec_MB": 1e3 * z.loc[(p, dec), "bytes_per_gpu_GB"],
        "se_pcie_dp_bw": z.loc[(p, dp), "half_bandwidth_pct"],
        "se_pcie_tp_bw": z.loc[(p, tp), "half_bandwidth_pct"], "se_pcie_tp_lat": z.loc[(p, tp), "double_latency_pct"],
        "se_pcie_dec_bw": z.loc[(p, dec), "half_bandwidth_pct"],
        "se_pcie_dec_lat": z.loc[(p, dec), "double_latency_pct"],
        "se_sw_tp_bw": z.loc[(s, tp), "half_bandwidth_pct"], "se_sw_dec_lat": z.loc[(s, dec), "double_latency_pct"],
        "se_sw_dp_bw": z.loc[(s, dp), "half_bandwidth_pct"]})


def hybrid_facts(cal: Calibration | None = None) -> Facts:
    """Hybrid sharding on a slow and a fast network (:func:`multigpu.evidence.bottlenecks.hybrid_sharding`):
    ``hs_gpus``, ``hs_nodes``, ``hs_seq``, ``hs_model`` (the job); ``hs_slow_name`` and ``hs_fast_name`` (the two
    systems); ``hs_<slow|fast>_<full|node>_s`` (the step, s, sharded over every GPU or within each node);
    ``hs_<slow|fast>_<full|node>_dp_s`` (the data-parallel communication left exposed, s); ``hs_mem_<full|node>_GB``
    (GB a GPU holds, on the fast system)."""
    frame = bottlenecks.hybrid_sharding(cal).set_index(["system_id", "shard_group"])
    slow, fast = bottlenecks.HYBRID_SYSTEMS
    job = bottlenecks.HYBRID_JOB
    out: dict[str, object] = {"hs_gpus": job["gpus"], "hs_seq": job["seq"],
                              "hs_nodes": job["gpus"] // catalog.system(fast).gpus_per_node}
    for key, system_id in (("slow", slow), ("fast", fast)):
        for name, group in (("full", 0), ("node", catalog.system(system_id).gpus_per_node)):
            row = frame.loc[(system_id, group)]
            out[f"hs_{key}_{name}_s"], out[f"hs_{key}_{name}_dp_s"] = row["step_time_s"], row["dp_exposed_s"]
            if key == "fast":
                out[f"hs_mem_{name}_GB"] = row["memory_per_gpu_GB"]
    names = glue.per_language(lambda: {"hs_slow_name": vocabulary.system_name(slow),
                                       "hs_fast_name": vocabulary.system_name(fast),
                                       "hs_model": models.model(job["model_id"]).name})
    return _values(out) | names


def verdicts(cal: Calibration | None = None) -> dict[str, claims.Verdict]:
    """The chapter's claims (:data:`multigpu.evidence.claims.bottlenecks.CLAIM_IDS`) checked with ``cal``."""
    inputs = claims.Inputs(cal=cal)
    return {cid: claims.check(cid, inputs) for cid in claim_checks.CLAIM_IDS}


def verdict_table(cal: Calibration | None = None) -> pd.DataFrame:
    """The chapter's claims: ``verdict``, ``seed_value`` (the article's), ``model_value`` and ``unit`` (the
    model's), indexed by claim ``id``."""
    frame = pd.DataFrame([v.to_dict() for v in verdicts(cal).values()])
    return frame[["id", "verdict", "seed_value", "model_value", "unit"]].set_index("id")


def volume_facts(checked: dict[str, claims.Verdict]) -> Facts:
    """The verdicts, and the article's "20 GB per query" (C12).

    ``<id>_verdict`` (the verdict in bold, Markdown text) and ``<id>_tests`` (what decided it) for every claim
    of ``checked`` (see :func:`verdicts`), with their Chinese as ``<id>_verdict_zh`` and ``<id>_tests_zh``;
    ``hidden`` (elements of one token's activation); ``c12_bf16`` (GB each GPU sends per
    query, BF16, TP=2: C12's value), ``c12_gib`` (the same in GiB), ``c12_fp8`` (FP8, GB), ``c12_tp8`` (BF16,
    TP=8, GB), ``c12_token`` (MB per token, BF16, TP=2).
    """
    out: dict[str, object] = glue.per_language(lambda: verdict_facts(checked))
    q = bottlenecks.tp_bytes_per_query().set_index(["dtype", "tp"])
    out.update(hidden=models.model(bottlenecks.SERVE_MODEL).hidden, c12_bf16=checked["C12"].model_value,
               c12_gib=q.loc[("bf16", 2), "per_query_GiB"], c12_fp8=q.loc[("fp8", 2), "per_query_GB"],
               c12_tp8=q.loc[("bf16", 8), "per_query_GB"], c12_token=q.loc[("bf16", 2), "per_token_MB"])
    return _values(out)


def batching_facts(cal: Calibration | None = None) -> Facts:
    """Batching and decode all-reduces (C13): ``c13_sw_1``, ``c13_sw_64``, ``c13_mesh_64`` (all-reduce time
    of one decode step at batch 1 / 64, H200 switch / mesh, TP 2, ms), ``c13_tok_1``, ``c13_tok_64`` (the
    same per generated token, switch, us)."""
    v = bottlenecks.volume_vs_batch(cal=cal).set_index(["system", "batch"])
    sw, mesh = bottlenecks.SWITCH, bottlenecks.MESH
    return _values({"c13_sw_1": v.loc[(sw, 1), "allreduce_ms"], "c13_sw_64": v.loc[(sw, 64), "allreduce_ms"],
                    "c13_mesh_64": v.loc[(mesh, 64), "allreduce_ms"],
                    "c13_tok_1": v.loc[(sw, 1), "allreduce_per_token_us"],
                    "c13_tok_64": v.loc[(sw, 64), "allreduce_per_token_us"]})


def transfer_facts(cal: Calibration | None = None) -> Facts:
    """156 ms against 22 ms (C18): for each row key of :data:`TRANSFER_KEYS`, ``c18_<key>_mesh`` and
    ``c18_<key>_sw`` (ms on the H200 mesh and switch) and ``c18_<key>_x`` (mesh over switch, x)."""
    t = bottlenecks.transfer_times(cal=cal).set_index("method")
    mesh, switch = f"{bottlenecks.MESH}_ms", f"{bottlenecks.SWITCH}_ms"
    out: dict[str, object] = {}
    for key, method in TRANSFER_KEYS.items():
        out[f"c18_{key}_mesh"] = t.loc[method, mesh]
        out[f"c18_{key}_sw"] = t.loc[method, switch]
        out[f"c18_{key}_x"] = t.loc[method, "ratio_x"]
    return _values(out)


def _nvidia_over_ours(fixed: pd.DataFrame, dtype: str) -> pd.Series:
    """NVIDIA's Table 3 throughput per GPU over ours at ``dtype``, mesh and switch rows together (x)."""
    return pd.concat([fixed["nvidia_mesh"] / fixed[f"{dtype}_mesh"],
                      fixed["nvidia_switch"] / fixed[f"{dtype}_switch"]])


def fixed_batch_facts(cal: Calibration | None = None) -> Facts:
    """NVIDIA's Table 3 beside ours (TP=2, H200).

    At batch ``b`` in (1, 32): ``fx_<src>_<b>`` (switch over mesh throughput, x), ``fx_<src>_mesh_<b>`` and
    ``fx_<src>_sw_<b>`` (tokens/s per GPU) for ``src`` = ``nv`` (NVIDIA), ``bf16``, ``fp8`` (ours);
    ``fx_ratio_<dtype>_lo``/``_hi``: the range of NVIDIA's throughput over ours across batches, mesh and
    switch (x).
    """
    f = bottlenecks.compare_fixed_batch(cal=cal).set_index("batch")
    out: dict[str, object] = {}
    for batch in (1, 32):
        for src, col in (("nv", "nvidia"), ("bf16", "bf16"), ("fp8", "fp8")):
            out[f"fx_{src}_{batch}"] = f.loc[batch, f"{col}_benefit_x"]
        for src, col in (("nv", "nvidia"), ("bf16", "bf16"), ("fp8", "fp8")):
            out[f"fx_{src}_mesh_{batch}"] = f.loc[batch, f"{col}_mesh"]
        for src, col in (("nv", "nvidia"), ("bf16", "bf16"), ("fp8", "fp8")):
            out[f"fx_{src}_sw_{batch}"] = f.loc[batch, f"{col}_switch"]
    for dtype in ("bf16", "fp8"):
        both = _nvidia_over_ours(f, dtype)
        out[f"fx_ratio_{dtype}_lo"], out[f"fx_ratio_{dtype}_hi"] = both.min(), both.max()
    return _values(out)


def at_rate_facts(cal: Calibration | None = None) -> Facts:
    """NVIDIA's Table 2 beside ours, and its identity (C17, C23).

    ``ar_fp8_lo``/``_hi`` and ``ar_nv_lo``/``_hi``: range of the switch-over-mesh throughput across the
    per-user rates, ours at FP8 and NVIDIA's (x); at 30 tokens/s per user, ours at FP8: ``ar30_tp1``,
    ``ar30_mesh``, ``ar30_sw`` (tokens/s per GPU on one H200, the mesh, the switch) with their batches
    ``..._b``, and at BF16 ``ar30_bf16_mesh``, ``ar30_bf16_sw`` (tokens/s per GPU); ``ar_bf16_max_rate``
    (highest per-user rate the BF16 switch meets, tokens/s); ``id_lo``/``id_hi`` (NVIDIA's printed
    throughput over batch x rate / 2, x), ``id30_mesh``/``id30_sw`` (that identity at 30 tokens/s, tokens/s
    per GPU), ``nv30_tp1`` (NVIDIA's one-GPU throughput at 30, tokens/s per GPU), ``ar_db_lo``/``_hi``
    (how many queries larger our FP8 batches are than NVIDIA's); ``our_id_lo``/``_hi`` (our FP8 picks over
    the same product, x) and ``ar_fp8_vs_nv`` ("higher" or "lower": our FP8 throughput per GPU against
    NVIDIA's, at the median over rates and systems; ``ar_fp8_vs_nv_zh`` in Chinese).
    """
    at_rate = bottlenecks.compare_at_rate(cal=cal)
    identity = bottlenecks.nvidia_identity()
    nv2 = bottlenecks.nvidia_table2()
    ar = at_rate.set_index(["rate_tokens_per_s_per_user", "source"])
    fp8_rows = at_rate[at_rate["source"] == "our model, fp8"]
    o30, b30 = ar.loc[(30.0, "our model, fp8")], ar.loc[(30.0, "our model, bf16")]
    bf16_met = at_rate[(at_rate["source"] == "our model, bf16") & (at_rate["switch_batch"] > 0)]
    ratios = identity[["mesh_ratio", "switch_ratio"]].to_numpy()
    id30 = identity.set_index("rate_tokens_per_s_per_user").loc[30.0]
    nvr = nv2.set_index("rate_tokens_per_s_per_user")
    f8r = fp8_rows.set_index("rate_tokens_per_s_per_user")
    dbatch = pd.concat([f8r["mesh_batch"] - nvr["mesh_batch"], f8r["switch_batch"] - nvr["switch_batch"]])
    ours = bottlenecks.model_identity("fp8", cal=cal)[["mesh_ratio", "switch_ratio"]].to_numpy()
    over_nv = pd.concat([f8r["mesh_tokens_per_s_per_gpu"] / nvr["mesh_tokens_per_s_per_gpu"],
                         f8r["switch_tokens_per_s_per_gpu"] / nvr["switch_tokens_per_s_per_gpu"]])
    higher = bool(over_nv.median() > 1)
    words = glue.per_language(lambda: {"ar_fp8_vs_nv": _("higher") if higher else _("lower")})
    return words | _values({
        "ar_fp8_lo": fp8_rows["benefit_x"].min(), "ar_fp8_hi": fp8_rows["benefit_x"].max(),
        "ar_nv_lo": nv2["benefit_x"].min(), "ar_nv_hi": nv2["benefit_x"].max(),
        "ar30_tp1": o30["tp1_tokens_per_s_per_gpu"], "ar30_tp1_b": int(o30["tp1_batch"]),
        "ar30_mesh": o30["mesh_tokens_per_s_per_gpu"], "ar30_mesh_b": int(o30["mesh_batch"]),
        "ar30_sw": o30["switch_tokens_per_s_per_gpu"], "ar30_sw_b": int(o30["switch_batch"]),
        "ar30_bf16_mesh": b30["mesh_tokens_per_s_per_gpu"], "ar30_bf16_sw": b30["switch_tokens_per_s_per_gpu"],
        "ar_bf16_max_rate": bf16_met["rate_tokens_per_s_per_user"].max(),
        "id_lo": ratios.min(), "id_hi": ratios.max(),
        "id30_mesh": id30["mesh_identity"], "id30_sw": id30["switch_identity"],
        "nv30_tp1": nvr.loc[30.0, "tp1_tokens_per_s_per_gpu"],
        "ar_db_lo": int(dbatch.min()), "ar_db_hi": int(dbatch.max()),
        "our_id_lo": float(np.nanmin(ours)), "our_id_hi": float(np.nanmax(ours))})


def measured_run_facts(cal: Calibration | None = None) -> Facts:
    """The training model against measured runs.

    ``v75_model``, ``v75_measured`` (s per iteration of measurement 75, Megatron-LM's GPT-3 175B run),
    ``v75_err`` (model / measured - 1, %), ``v75_tflops`` (the TFLOP/s per GPU the model's time implies);
    ``v_out_n`` (runs compared, none of them in a fit), ``v_out_max`` (largest absolute error, %),
    ``v_fast_n`` (runs the model makes faster than measured), ``v_out_worst`` (the name of the worst run, text;
    in Chinese ``v_out_worst_zh``).
    """
    validation = trainingruns.training_validation(cal=cal)
    row75 = validation.iloc[0]
    reported = float(trainingruns.training_measurements().set_index("id").loc[75, "value"])  # TFLOP/s per GPU
    out = validation[~validation["fitted"]]
    worst = out.loc[out["error_pct"].abs().idxmax(), "run"]
    return glue.per_language(lambda: {"v_out_worst": lang.label(worst)}) | _values({
        "v75_model": row75["model_s"], "v75_measured": row75["measured_s"], "v75_err": row75["error_pct"],
        "v75_tflops": reported * row75["measured_s"] / row75["model_s"],
        "v_out_max": out["error_pct"].abs().max(), "v_fast_n": int((out["error_pct"] < 0).sum()),
        "v_out_n": len(out)})


def exercise_facts(cal: Calibration | None = None) -> Facts:
    """The exercises' solutions.

    1. FP8, TP=4 on the H200 switch: ``ex1_fp8_tp4`` (GB each GPU sends per query), ``ex1_tp4_factor``
       (buffers sent per GPU by a 4-GPU all-reduce, 2(n-1)/n), ``ex1_per_dir`` (the H200's NVLink GB/s per
       direction), ``ex1_ms`` (the query's bytes at that rate, ms), ``ex1_dec_GB`` (GB of the decode part),
       ``ex1_dec_ideal_ms`` (those at the link rate, ms), ``ex1_dec_n`` (decode all-reduces per query),
       ``ex1_dec_ms`` (the model's time for them, ms).
    2. Amdahl on the A100 PCIe server: ``ex2_t1`` (one GPU's step, s), ``ex2_c`` (exposed all-reduce at
       TP 8, s), ``ex2_c_half`` (half of it, s), ``ex2_limit_half`` (the bound with it halved, x).
    3. Data parallelism on four PCIe servers over 100 GbE: ``ex3_share4`` (exposed share at
       :data:`EXERCISE_SEQS` sequences per GPU, %), ``ex3_under10`` (fewest sequences per GPU under
       :data:`EXERCISE_SHARE_PCT`), ``ex3_global`` (the global batch that makes, sequences).
    """
    tp = 4
    q = bottlenecks.tp_bytes_per_query().set_index(["dtype", "tp"]).loc[("fp8", tp)]
    per_dir = catalog.gpu(catalog.system(bottlenecks.SWITCH).gpu).nvlink_GBps_per_dir
    dec_GB = q["per_token_MB"] * bottlenecks.OUTPUT_TOKENS / 1e3
    r = inference.run(bottlenecks.SERVE_MODEL, bottlenecks.SWITCH, tp, 1, bottlenecks.INPUT_TOKENS,
                      bottlenecks.OUTPUT_TOKENS, dtype="fp8", cal=cal)
    a = bottlenecks.amdahl(cal=cal).set_index("setup").loc[SETUPS["pcie"].label]
    sweep = bottlenecks.dp_batch_sweep(cal=cal)
    s = sweep.set_index(["setup", "seqs_per_gpu"])
    ok = sweep[(sweep["setup"] == ETHERNET.label) & (sweep["dp_comm_pct"] < EXERCISE_SHARE_PCT)]
    under = ok["seqs_per_gpu"].min()
    return _values({
        "ex1_fp8_tp4": q["per_query_GB"], "ex1_tp4_factor": 2 * (tp - 1) / tp, "ex1_per_dir": per_dir,
        "ex1_ms": 1e3 * q["per_query_GB"] / per_dir,
        "ex2_t1": a["one_gpu_s"], "ex2_c": a["exposed_comm_s"], "ex2_c_half": a["exposed_comm_s"] / 2,
        "ex2_limit_half": 2 * a["limit_x"],
        "ex3_share4": s.loc[(ETHERNET.label, EXERCISE_SEQS), "dp_comm_pct"], "ex3_under10": under,
        "ex3_global": under * ETHERNET.gpus,
        "ex1_dec_GB": dec_GB, "ex1_dec_ideal_ms": 1e3 * dec_GB / per_dir,
        "ex1_dec_n": 2 * models.model(bottlenecks.SERVE_MODEL).layers * bottlenecks.OUTPUT_TOKENS,
        "ex1_dec_ms": 1e3 * r.decode_comm_s * bottlenecks.OUTPUT_TOKENS})


def _moe_sentence(premium: pd.Series) -> str:
    """Whether the software or the rack decides the MoE's training time, in the current language, from the
    break-even premiums (%, by software) of :func:`multigpu.evidence.moe.rack_premium`."""
    worst, best = premium["Megatron all-to-all, 1F1B"], premium["DeepEP, DualPipe"]
    if best < worst / 2:
        return _("Most of what the rack is worth to this training run, software can also win on 8-GPU nodes: "
                 "sending each token once per node and hiding the all-to-all behind computation cuts the "
                 "break-even premium from {worst:.0f} % to {best:.0f} %.", worst=worst, best=best)
    return _("Software leaves most of the rack's worth in place: with DeepEP's kernels and DualPipe the "
             "break-even premium is still {best:.0f} %, against {worst:.0f} % with Megatron's all-to-all.",
             worst=worst, best=best)


def _moe_serving_sentence(rows: int) -> str:
    """What the serving figures have been scored against, in the current language: ``rows`` published serving runs
    with expert parallelism (:mod:`multigpu.evidence.serving`)."""
    if rows:
        return _("The validation appendix scores the serving model on {rows} published runs with expert "
                 "parallelism.", rows=rows)
    return _("No published serving run with expert parallelism has been scored against these figures yet: they "
             "rest on DeepEP's kernel timings and on the decode model.")


def moe_serving_facts(cal: Calibration | None = None) -> Facts:
    """The MoE section's serving values (:func:`multigpu.evidence.moe.serving_table`): the break-even premium of
    an NVL72 GPU-hour for serving at the narrowest and the widest expert parallelism (``moe_srv_narrow``,
    ``moe_srv_wide``, %, at ``moe_srv_ep_narrow`` and ``moe_srv_ep_wide`` GPUs; ``moe_srv_ep_mid`` between), the
    nodes' and the racks' output tokens/s per GPU at the widest (``moe_srv_nodes_tps``, ``moe_srv_rack_tps``),
    dispatch and combine's share of the nodes' decode step there (``moe_srv_comm_pct``), the case
    (``moe_srv_per_gpu`` queries per GPU, ``moe_srv_tp``, ``moe_srv_in``, ``moe_srv_out``), and
    ``moe_srv_checked_text``."""
    served = moe.serving_table(cal)
    premium = moe.serving_premium(served)
    narrow, mid, wide = moe.SERVE_EPS
    at = served.set_index(["ep", "setup"])
    nodes = at.loc[(wide, moe.NODES[0])]
    rows = sum(1 for row in serving.load() if (row.ep or 1) > 1)
    out = _values({"moe_srv_narrow": premium[narrow], "moe_srv_wide": premium[wide], "moe_srv_ep_narrow": narrow,
                   "moe_srv_ep_mid": mid, "moe_srv_ep_wide": wide,
                   "moe_srv_nodes_tps": nodes["tokens_per_s_per_gpu"],
                   "moe_srv_rack_tps": at.loc[(wide, moe.RACK[0]), "tokens_per_s_per_gpu"],
                   "moe_srv_comm_pct": 100 * nodes["dispatch_and_combine_ms"] / nodes["tpot_ms"],
                   "moe_srv_per_gpu": moe.SERVE_PER_GPU, "moe_srv_tp": moe.SERVE_TP, "moe_srv_in": moe.SERVE_INPUT,
                   "moe_srv_out": moe.SERVE_OUTPUT})
    return out | glue.per_language(lambda: {"moe_srv_checked_text": _moe_serving_sentence(rows)})


def moe_facts(cal: Calibration | None = None) -> Facts:
    """The MoE section's values (:mod:`multigpu.evidence.moe`): one layer's dispatch and combine on the 8-GPU
    nodes, the NVL72 rack and the PCIe servers (``moe_nodes_ms``, ``moe_rack_ms``, ``moe_pcie_ms``), the nodes
    over the rack (``moe_rack_x``) and the PCIe servers over the nodes (``moe_pcie_x``), the network MB one GPU
    sends in a dispatch on the nodes (``moe_net_MB``) and the MoE layers of the model (``moe_layers``); the
    exposed all-to-all's share of a step on the nodes with Megatron's all-to-all and with DualPipe
    (``moe_nccl_pct``, ``moe_dual_pct``); the break-even premium of an NVL72 GPU-hour under each software
    (``moe_premium_nccl``, ``moe_premium_deepep``, ``moe_premium_dual``, %) and the percentage points of it the
    rack's faster compute gives (``moe_compute_pct``); the GPUs, stages and expert-parallel GPUs of the run
    (``moe_gpus``, ``moe_pp``, ``moe_ep``, ``moe_tokens``); the nodes the expert-parallel group spans on the 8-GPU
    nodes and the PCIe servers and their GPUs each (``moe_nodes``, ``moe_node_gpus``); and ``moe_software_text``."""
    dispatch = moe.dispatch_table(cal).set_index("setup")
    steps = moe.training_table(cal)
    premium = moe.rack_premium(steps).set_index("software")
    share = steps.set_index(["setup", "software"])["alltoall_pct"]
    nodes, rack, pcie = (m[0] for m in moe.MACHINES)
    out = _values({
        "moe_nodes_ms": dispatch.loc[nodes, "layer_ms"], "moe_rack_ms": dispatch.loc[rack, "layer_ms"],
        "moe_pcie_ms": dispatch.loc[pcie, "layer_ms"],
        "moe_pcie_x": dispatch.loc[pcie, "layer_ms"] / dispatch.loc[nodes, "layer_ms"],
        "moe_rack_x": dispatch.loc[nodes, "layer_ms"] / dispatch.loc[rack, "layer_ms"],
        "moe_net_MB": dispatch.loc[nodes, "network_MB"], "moe_layers": models.model(moe.MODEL).moe_layers,
        "moe_nccl_pct": share.loc[(nodes, "Megatron all-to-all, 1F1B")],
        "moe_dual_pct": share.loc[(nodes, "DeepEP, DualPipe")],
        "moe_premium_nccl": premium.loc["Megatron all-to-all, 1F1B", "break_even_premium_pct"],
        "moe_premium_deepep": premium.loc["DeepEP, 1F1B", "break_even_premium_pct"],
        "moe_premium_dual": premium.loc["DeepEP, DualPipe", "break_even_premium_pct"],
        "moe_compute_pct": premium["faster_compute_pct"].max(),
        "moe_gpus": moe.GPUS, "moe_pp": moe.PP, "moe_ep": moe.EP, "moe_tokens": moe.TOKENS,
        "moe_nodes": moe.NODES[2], "moe_node_gpus": catalog.system(moe.NODES[1]).gpus_per_node})
    return out | glue.per_language(lambda: {"moe_software_text": _moe_sentence(premium["break_even_premium_pct"])})


def under_load_facts(cal: Calibration | None = None) -> Facts:
    """Serving under load (:mod:`multigpu.evidence.underload`): the workload (``ul_isl``, ``ul_osl``), MLPerf's
    limits (``ul_ttft_limit_s``, ``ul_tpot_limit_ms``); the A100 PCIe server and NVSwitch box at their best
    tensor-parallel degree (``ul_pcie_tp``, ``ul_a100sw_tp``), a lone prompt's prefill (s: ``ul_pcie_prefill_s``,
    ``ul_a100sw_prefill_s``) and the requests per second per server within the limits (``ul_pcie_within``,
    ``ul_a100sw_within``) and flat out (``ul_pcie_capacity``, ``ul_a100sw_capacity``); each pair's ratios
    (``ul_a100_cap_x``, ``ul_a100_within_x``, ``ul_h200_cap_x``, ``ul_h200_within_x``); ``ul_gap_text``; the PCIe
    server split into prefill and decode pools (:func:`multigpu.evidence.underload.split_layouts`): its requests
    within the limits (``ul_split_within``), that over its colocated ones (``ul_split_x``) and as a share of the
    NVSwitch box's colocated ones (``ul_split_share_pct``), one KV transfer (``ul_split_kv_ms``) and
    ``ul_split_text``."""
    picks = underload.best(underload.layouts(cal=cal))
    table = picks.set_index("setup")
    pcie, switch = table.loc["8x A100, PCIe"], table.loc["8x A100, NVSwitch"]
    gaps = underload.gaps(picks)
    a100, h200 = gaps.iloc[0], gaps.iloc[1]
    out = _values({
        "ul_isl": underload.WORKLOAD["input_tokens"], "ul_osl": underload.WORKLOAD["output_tokens"],
        "ul_ttft_limit_s": underload.LIMITS.ttft_p99_s, "ul_tpot_limit_ms": 1e3 * underload.LIMITS.tpot_p99_s,
        "ul_pcie_tp": int(pcie["tp"]), "ul_a100sw_tp": int(switch["tp"]),
        "ul_pcie_prefill_s": pcie["prefill_s"], "ul_a100sw_prefill_s": switch["prefill_s"],
        "ul_pcie_within": pcie["within_limits_requests_per_s"],
        "ul_a100sw_within": switch["within_limits_requests_per_s"],
        "ul_pcie_capacity": pcie["capacity_requests_per_s"], "ul_a100sw_capacity": switch["capacity_requests_per_s"],
        "ul_a100_cap_x": a100["capacity_x"], "ul_a100_within_x": a100["within_x"],
        "ul_h200_cap_x": h200["capacity_x"], "ul_h200_within_x": h200["within_x"]})
    split = underload.split_layouts(cal=cal).set_index("setup").loc["8x A100, PCIe"]
    pcie_split, switch_within = split["within_limits_requests_per_s"], switch["within_limits_requests_per_s"]
    out |= _values({"ul_split_within": pcie_split, "ul_split_x": pcie_split / pcie["within_limits_requests_per_s"],
                    "ul_split_share_pct": 100 * pcie_split / switch_within, "ul_split_kv_ms": split["kv_transfer_ms"]})
    return out | glue.per_language(lambda: {
        "ul_gap_text": _load_sentence(a100["capacity_x"], a100["within_x"]),
        "ul_split_text": _split_sentence(split, pcie_split / switch_within)})


#: The share of the NVSwitch box's requests within the limits above which the split PCIe server is said to recover
#: most of what its wiring cost.
SPLIT_RECOVERS = 0.5


def _split_sentence(split: pd.Series, share: float) -> str:
    """What splitting the PCIe server into prefill and decode pools does, in the current language: its best split
    (a row of :func:`multigpu.evidence.underload.split_layouts`) and its requests within the limits as a share
    of the NVSwitch box's colocated ones (``share``)."""
    layout = {"p": int(split["prefill_copies"]), "p_tp": int(split["prefill_tp"]), "d": int(split["decode_copies"]),
              "d_tp": int(split["decode_tp"]), "share": 100 * share}
    if share >= SPLIT_RECOVERS:
        return _("Split into {p} x TP {p_tp} for prefill and {d} x TP {d_tp} for decode, the PCIe server serves "
                 "{share:.0f} % of what the NVSwitch box serves colocated: keeping the prompts off the decoders "
                 "recovers most of what its wiring cost under these limits.", **layout)
    return _("Split into {p} x TP {p_tp} for prefill and {d} x TP {d_tp} for decode, the PCIe server still serves "
             "only {share:.0f} % of what the NVSwitch box serves colocated: its wiring still decides under these "
             "limits.", **layout)


#: How far the ratio within the latency limits must move from the ratio flat out for the sentence to call it a
#: change: 25 %, above the spread of that ratio between seeds (about 17 % from lowest to highest over 5 seeds at
#: :data:`multigpu.evidence.underload.REQUESTS`).
GAP_CHANGE = 1.25


def _load_sentence(capacity_x: float, within_x: float) -> str:
    """What latency limits do to the A100 NVSwitch box's lead over the PCIe server, in the current language, from
    the two ratios of :func:`multigpu.evidence.underload.gaps` (flat out, and within the limits)."""
    if within_x > GAP_CHANGE * capacity_x:
        return _("Latency limits widen the gap: flat out, the NVSwitch box completes {cap:.1f} times the requests "
                 "of the PCIe server; within the limits, {within:.1f} times.", cap=capacity_x, within=within_x)
    if within_x < capacity_x / GAP_CHANGE:
        return _("Latency limits narrow the gap: flat out, the NVSwitch box completes {cap:.1f} times the requests "
                 "of the PCIe server; within the limits, only {within:.1f} times.", cap=capacity_x, within=within_x)
    return _("Latency limits leave the gap about where it was: the NVSwitch box completes {cap:.1f} times the "
             "requests of the PCIe server flat out and {within:.1f} times within the limits.",
             cap=capacity_x, within=within_x)


def in_short(f: Facts) -> str:
    """The chapter's answer in three sentences in the current language, from its training-step, decode-step and
    under-load facts (``f``: :func:`facts`' values, shares in %): the third is :func:`_load_sentence`'s."""
    load = _load_sentence(f["ul_a100_cap_x"], f["ul_a100_within_x"])
    return _steps_in_short(f) + ("" if lang.current() == "zh" else " ") + load


def _steps_in_short(f: Facts) -> str:
    return _("Communication costs most where it sits on every step's critical path: tensor parallelism over 8 PCIe "
             "GPUs leaves {pcie_tp8:.0f} % of a training step to exposed communication, against {switch_tp8:.0f} % "
             "behind NVSwitch, while data parallelism hides most of it ({pcie_dp:.0f} % on PCIe). In decoding, the "
             "all-reduces take {pcie_decode:.0f} % of a step on 8 PCIe GPUs and {switch_decode:.0f} % behind the "
             "switch.", pcie_tp8=f["tb_pcie_tp8_comm"], switch_tp8=f["tb_a100sw_tp8_comm"],
             pcie_dp=f["tb_pcie_dp_comm"], pcie_decode=f["dec_pcie8_pct"], switch_decode=f["dec_a100sw8_pct"])


def facts(cal: Calibration | None = None) -> Facts:
    """Every value the chapter's prose cites, by glue name (the union of the ``*_facts`` functions; units
    as they state), with calibration ``cal`` (None: the shipped one). Each text fact is there in English and,
    as ``<name>_zh``, in Chinese (:func:`multigpu.book.glue.per_language`); the numbers once, for both."""
    out: Facts = {}
    for section in (training_step_facts, decode_step_facts, scaling_facts, amdahl_facts, dp_batch_facts,
                    decode_ratio_facts, sensitivity_facts, batching_facts, transfer_facts, fixed_batch_facts,
                    at_rate_facts, measured_run_facts, exercise_facts, moe_facts, moe_serving_facts,
                    under_load_facts, hybrid_facts):
        out.update(section(cal))
    out.update(volume_facts(verdicts(cal)))
    out.update(glue.per_language(lambda: {"in_short": in_short(out)}))
    return out
