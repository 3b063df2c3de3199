"""Where the size of the NVLink domain decides a mixture-of-experts model's time: chapter 3's MoE section.

The case is DeepSeek-V3 as its report trains it (arXiv:2412.19437, section 3.2: pipeline parallelism over 16
stages, expert parallelism over 64 GPUs, ZeRO-1 data parallelism, FP8 with FP8 dispatch; the memory savers of
:data:`RECIPE`), on three kinds of machine: 8-GPU NVSwitch nodes joined by InfiniBand, whose expert-parallel
group spans 8 nodes; racks of 72 GPUs on one NVLink domain (GB200 NVL72), where it stays inside one; and PCIe
servers joined by 100 GbE, which have no NVLink and use NCCL's all-to-all.

- :func:`dispatch_table`: one MoE layer's dispatch and combine on each (:mod:`multigpu.comm.expert`);
- :func:`training_table`: a training step of the layout under three kinds of software (Megatron's all-to-all,
  DeepEP's kernels, DeepEP with DualPipe; :mod:`multigpu.compute.training`);
- :func:`rack_premium`: from those steps, the most an NVL72 GPU-hour may cost over an 8-GPU node's and still
  train as cheaply (the break-even premium), and how much of it is the rack's faster GPU rather than its wiring;
- :func:`serving_table`: serving the model with its experts over 8, 16 and 64 GPUs and attention in data-parallel
  groups of 8 (:func:`multigpu.compute.inference.run` with ``ep``), on the nodes and on the racks.

Times in seconds or milliseconds as the column names say; bytes per GPU in MB (1e6 bytes), one direction.
"""

from __future__ import annotations

import pandas as pd

from multigpu.comm import expert
from multigpu.comm.calibration import Calibration
from multigpu.compute import inference, models, training
from multigpu.evidence import intervals

MODEL = "deepseek-v3"
#: Expert-parallel GPUs, tokens per GPU in one micro-batch (one 4,096-token sequence), pipeline stages and GPUs.
EP, TOKENS, PP, GPUS = 64, 4096, 16, 2048
#: Micro-batches per pipeline in a step (the report's last batch size, 15,360 sequences, over 128 pipelines).
MICROBATCHES = 120
#: What the report says the run kept memory down with (section 3.2.3 and 3.3.3): recomputed norms and MLA
#: up-projections, the experts' SwiGLU output recomputed, activations cached in FP8, BF16 Adam moments.
RECIPE = dict(recompute="selective", recompute_modules=("layernorm", "mla_up_proj", "moe_act"),
              activation_cache="fp8", moment_dtype="bf16")
#: The machines compared: (label, catalogue system, nodes the expert-parallel group spans, dispatch kernel).
MACHINES = (("8 x 8 B200, NVSwitch + InfiniBand", "dgx-b200", 8, "deepep"),
            ("GB200 NVL72, one NVLink domain", "gb200-nvl72", 1, "deepep"),
            ("8 x 8 L40S, PCIe + 100 GbE", "pcie-l40s-8", 8, "nccl"))
#: The two that train the model (the PCIe server cannot hold it): 8-GPU nodes and NVL72 racks.
NODES, RACK = MACHINES[0], MACHINES[1]
#: Software, by label: (dispatch kernel, pipeline schedule).
SOFTWARE = {"Megatron all-to-all, 1F1B": ("nccl", "1f1b"), "DeepEP, 1F1B": ("deepep", "1f1b"),
            "DeepEP, DualPipe": ("deepep", "dualpipe")}
#: What limits a phase, in words (:attr:`multigpu.comm.expert.EpPhase.bottleneck`; NCCL's links all mean network
#: here, where the group spans nodes).
LIMITS = {"network": "network", "nvlink": "NVLink fabric", "latency": "fixed time"}


def _limit(phase: expert.EpPhase) -> str:
    return LIMITS.get(phase.bottleneck, "network" if phase.nodes > 1 else "NVLink fabric")


def dispatch_table(cal: Calibration | None = None) -> pd.DataFrame:
    """One MoE layer of :data:`MODEL` on :data:`EP` GPUs, :data:`TOKENS` tokens each, on each of :data:`MACHINES`:
    the network and NVLink bytes one GPU sends in the dispatch (FP8), the dispatch's and the combine's (BF16)
    times and their sum, and what limits the dispatch. Node-limited routing (at most 4 nodes a token) where the
    group spans 8 nodes and DeepEP's kernels carry it."""
    m = models.model(MODEL)
    rows = []
    for label, system, nodes, kernel in MACHINES:
        routing = expert.Routing(tokens=TOKENS, hidden=m.hidden, topk=m.experts_per_token, experts=m.experts,
                                 node_limit=training.node_limit(m, nodes) if kernel == "deepep" else None)
        dispatch, combine = expert.layer(routing, system, EP, nodes, kernel=kernel, cal=cal)
        rows.append({"setup": label, "kernel": kernel, "network_MB": dispatch.network_bytes / 1e6,
                     "nvlink_MB": dispatch.intra_node_bytes / 1e6, "dispatch_ms": dispatch.time_us / 1e3,
                     "combine_ms": combine.time_us / 1e3, "layer_ms": (dispatch.time_us + combine.time_us) / 1e3,
                     "limit": _limit(dispatch)})
    return pd.DataFrame(rows)


def training_table(cal: Calibration | None = None) -> pd.DataFrame:
    """A training step of :data:`MODEL` (:data:`GPUS` GPUs: PP :data:`PP`, EP :data:`EP`, ZeRO-1 DP, FP8, FP8
    dispatch, :data:`RECIPE`) on the 8-GPU nodes and the NVL72 racks, under each of :data:`SOFTWARE`: the step, its
    compute, the all-to-all that compute does not hide, the bubble, the all-to-all's share of the step (%), and
    whether it fits in memory; the step's 90 % prediction interval (``step_s_lo``, ``step_s_hi``: the band of
    published training runs, :func:`multigpu.evidence.intervals.run_band`)."""
    band = intervals.run_band("training step time")
    rows = []
    for label, system, _, _ in (NODES, RACK):
        for software, (kernel, schedule) in SOFTWARE.items():
            s = training.step(MODEL, system, GPUS, 1, PP, GPUS // PP * MICROBATCHES, 1, seq=TOKENS, dtype="fp8",
                              ep=EP, etp=1, ep_dispatch="fp8", ep_kernel=kernel, pp_schedule=schedule, cal=cal,
                              **RECIPE)
            rows.append({"setup": label, "software": software, "step_s": s.step_time_s,
                         **band.bounds("step_s", s.step_time_s), "compute_s": s.compute_s,
                         "exposed_alltoall_s": s.exposed_comm_s.ep, "bubble_s": s.bubble_s,
                         "alltoall_pct": 100 * s.exposed_comm_s.ep / s.step_time_s, "fits": s.fits})
    return pd.DataFrame(rows)


def rack_premium(steps: pd.DataFrame) -> pd.DataFrame:
    """Per software of :func:`training_table`: the step on the nodes and on the racks (s), the break-even premium
    of an NVL72 GPU-hour over a node's (%: the nodes' step over the racks' less one, the same GPUs and tokens), and
    the part of it the racks' faster compute alone would give (%: the nodes' compute over the racks' less one)."""
    by = steps.set_index(["software", "setup"])
    rows = []
    for software in SOFTWARE:
        nodes, rack = by.loc[(software, NODES[0])], by.loc[(software, RACK[0])]
        rows.append({"software": software, "step_on_nodes_s": nodes["step_s"], "step_on_racks_s": rack["step_s"],
                     "break_even_premium_pct": 100 * (nodes["step_s"] / rack["step_s"] - 1),
                     "faster_compute_pct": 100 * (nodes["compute_s"] / rack["compute_s"] - 1)})
    return pd.DataFrame(rows)


#: Serving (:func:`serving_table`): FP8 weights, prompt and answer tokens, queries in flight per GPU, the
#: tensor-parallel width of each attention group, and the expert-parallel widths compared.
SERVE_DTYPE, SERVE_INPUT, SERVE_OUTPUT, SERVE_PER_GPU, SERVE_TP = "fp8", 2048, 512, 32, 8
SERVE_EPS = (8, 16, 64)


def serving_table(cal: Calibration | None = None) -> pd.DataFrame:
    """Serving :data:`MODEL` on the 8-GPU nodes and the NVL72 racks with its routed experts over each of
    :data:`SERVE_EPS` GPUs, attention in groups of :data:`SERVE_TP` (DP-attention) and :data:`SERVE_PER_GPU`
    queries in flight per GPU: the nodes the run spans, the time per output token, the part of a decode step
    that is dispatch and combine (DeepEP's low-latency kernels), both in ms, and output tokens/s per GPU with its
    90 % prediction interval (``tokens_per_s_per_gpu_lo``, ``_hi``: the band of published serving runs)."""
    band = intervals.run_band("serving throughput")
    rows = []
    for label, system, _, _ in (NODES, RACK):
        for ep in SERVE_EPS:
            run = inference.run(MODEL, system, SERVE_TP, SERVE_PER_GPU * ep, SERVE_INPUT, SERVE_OUTPUT,
                                dtype=SERVE_DTYPE, ep=ep, cal=cal)
            rows.append({"setup": label, "ep": ep, "nodes": run.nodes, "tpot_ms": 1e3 * run.tpot_s,
                         "dispatch_and_combine_ms": 1e3 * run.decode_ep_comm_s,
                         "tokens_per_s_per_gpu": run.tokens_per_s_per_gpu,
                         **band.bounds("tokens_per_s_per_gpu", run.tokens_per_s_per_gpu), "fits": run.fits})
    return pd.DataFrame(rows)


def serving_premium(served: pd.DataFrame) -> pd.Series:
    """Per expert-parallel width of :func:`serving_table`: the break-even premium of an NVL72 GPU-hour for serving
    (%: the racks' output tokens/s per GPU over the nodes' less one)."""
    by = served.set_index(["ep", "setup"])["tokens_per_s_per_gpu"]
    return pd.Series({ep: 100 * (by.loc[(ep, RACK[0])] / by.loc[(ep, NODES[0])] - 1) for ep in SERVE_EPS},
                     name="break_even_premium_pct")
