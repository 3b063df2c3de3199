"""A training job's parallel layout: the value object the memory model (:mod:`multigpu.compute.models`), the
step-time model (:mod:`multigpu.compute.training`) and the layout search take instead of long parameter lists.

A leaf of the compute layer beside :mod:`multigpu.compute.shapes`: it holds the layout and the choices a layout
names (recompute policies, attention kernels, gradient and dispatch precisions, FP8 recipes, training methods),
and checks nothing that needs a model. Whether a layout divides a model is
:func:`multigpu.compute.training.make_layout`'s question.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from multigpu.compute.shapes import ATTENTION_KERNELS, RECOMPUTE, RECOMPUTE_MODULES

#: Precisions of the gradient buffer and its data-parallel reduction (``grad_dtype``), the default first:
#: ``fp32``, Megatron-LM's (``accumulate_allreduce_grads_in_fp32`` for BF16 training); ``bf16``, as NVIDIA's
#: performance recipes run (Megatron-Bridge ``scripts/performance/utils/overrides.py``
#: ``set_basic_perf_overrides``: every recipe; NeMo ``scripts/performance/helpers.py`` ``set_precision_configs``:
#: FP8 recipes; ``grad_reduce_in_fp32 = False``).
GRAD_DTYPES = ("fp32", "bf16")
DEFAULT_GRAD_DTYPE = GRAD_DTYPES[0]
#: The precisions a training layout takes (``train --dtype``), the default first: BF16, FP16, FP8 (Transformer
#: Engine: FP8 GEMMs, BF16 elsewhere), TF32 (FP32 weights and activations, GEMMs on TF32 tensor cores, as
#: PyTorch's ``torch.backends.cuda.matmul.allow_tf32 = True`` runs them) and FP32 (GEMMs without TF32:
#: PyTorch's default for matrix multiplies since 1.12, https://docs.pytorch.org/docs/stable/notes/cuda.html,
#: "TensorFloat-32 (TF32) on Ampere (and later) devices").
TRAINING_DTYPES = ("bf16", "fp16", "fp8", "tf32", "fp32")
#: Precision of the MoE dispatch all-to-all, the default first: BF16, as Megatron-Core and NeMo send it; ``fp8``
#: is DeepSeek-V3's low-precision communication (DeepSeek-V3 Technical Report, arXiv:2412.19437, section 3.3.3):
#: the activations before the experts' up-projections are quantized to FP8 before dispatch, and so are the
#: activation gradients before the down-projections (sent towards the experts in the backward pass); the
#: combine traffic, forward and backward (what comes back from the experts), stays in BF16.
EP_DISPATCH_DTYPES = ("bf16", "fp8")
#: FP8 scaling recipes, the default first: delayed scaling, Transformer Engine's default recipe and NeMo's
#: ``bf16_with_fp8_mixed``; Megatron-Bridge's performance pages name ``FP8-CS`` (current scaling, per tensor).
FP8_RECIPES = ("delayed", "current")
DEFAULT_FP8_RECIPE = FP8_RECIPES[0]
#: How the activations kept for the backward pass are stored, the default first: in the training precision's
#: 16 bits (BF16 under FP8), or ``fp8``: DeepSeek-V3's FP8 cache of the linear layers' inputs (arXiv:2412.19437
#: section 3.3.3), with FP8 training only.
ACTIVATION_CACHES = ("bf16", "fp8")
#: Precisions of Adam's two moments, the default first: FP32, or BF16 as DeepSeek-V3 kept them (section 3.3.3)
#: and Megatron-Core's precision-aware optimizer does with ``--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16``.
#: The FP32 master weights stay.
MOMENT_DTYPES = ("fp32", "bf16")
#: Training methods: pre-training, full fine-tuning (the same maths) and LoRA.
METHODS = ("pretrain", "full", "lora")
#: The kernels that carry a training step's MoE dispatch and combine, the default first (the names of
#: :data:`multigpu.comm.expert.KERNELS`): ``nccl``, Megatron-Core's all-to-all token dispatcher
#: (``--moe-token-dispatcher-type alltoall``), one copy per (token, expert); ``deepep``, DeepEP's normal kernels
#: (Megatron-Core's ``--moe-token-dispatcher-type flex --moe-enable-deepep``; DeepSeek-V3's own), one network copy
#: per destination node, forwarded over NVLink.
EP_KERNELS = ("nccl", "deepep")
#: Pipeline schedules, the default first: ``1f1b`` (one forward, one backward; interleaved with ``interleave`` >
#: 1) and ``dualpipe``, DeepSeek-V3's bidirectional schedule (arXiv:2412.19437 section 3.2.1; deepseek-ai/DualPipe
#: at 3da1bbe, README.md): micro-batches fed from both ends, each GPU holding two stages (2x parameters, PP + 1
#: micro-batches' activations), a forward and a backward chunk overlapped so that each hides the other's
#: all-to-all and stage-to-stage traffic, and a bubble of (PP/2 - 1)(F&B + B - 3W) against 1F1B's (PP - 1)(F + B).
PP_SCHEDULES = ("1f1b", "dualpipe")


@dataclass(frozen=True)
class TrainingStack:
    """What a training framework does that a step's time sees: switches taken from its source, no fitted
    constant."""

    name: str
    #: tensor-parallel collectives split into chunks and overlapped with the GEMMs next to them (Transformer
    #: Engine's userbuffers: ``tp_comm_overlap``), so a pass shows only what outlasts its own compute
    tp_comm_overlap: bool
    #: pipeline stages balanced by compute cost: the last stage, which also runs the output layer, holds fewer
    #: transformer layers (the layout's ``pp_last_layers`` chosen for the fastest step where not stated)
    balanced_stages: bool
    source: str
    #: data parallelism alone: every GPU holds the whole model and optimizer state and all-reduces the gradients
    #: (PyTorch DDP, ZeRO 0); no tensor, pipeline, context or expert parallelism
    data_parallel_only: bool = False
    #: the ZeRO stage the stack always runs (None: any, ZeRO 1 unless given): 0 under PyTorch DDP, 3 under FSDP,
    #: which gathers each layer's parameters before it runs and reduce-scatters its gradients
    zero_stage: int | None = None


#: Training stacks by the name ``train --stack`` takes, the default first:
#:
#: - ``megatron``: Megatron-LM and Megatron-Core as their defaults run (``--tp-comm-overlap`` is off unless given,
#:   ``megatron/training/arguments.py``; layers split evenly over the stages, the output layer on the last);
#: - ``nemo``: NeMo 2 and Megatron-Bridge performance recipes, which turn on ``tp_comm_overlap`` with
#:   userbuffers (Megatron-Bridge ``src/megatron/bridge/recipes/llama/llama3_70b.py`` and ``llama31_405b.py``;
#:   NeMo ``nemo/collections/llm/recipes/llama31_405b.py``, ``pretrain_performance_optimizations``);
#: - ``nanotron``: Hugging Face nanotron, which assigns the pipeline's blocks to stages by their compute cost,
#:   the output layer counted as a block (``src/nanotron/models/llama.py``, ``get_block_compute_costs``);
#: - ``pytorch-ddp``: plain PyTorch in eager mode with data parallelism, as NVIDIA's DeepLearningExamples BERT
#:   fine-tuning runs it (``PyTorch/LanguageModeling/BERT/run_squad.py``: apex ``DistributedDataParallel``, AMP
#:   O2, ``FusedAdam``, the gradients clipped and the loss read back to the host every step); no fused
#:   transformer kernels, and data parallelism alone (:attr:`TrainingStack.data_parallel_only`);
#: - ``pytorch-fsdp``: PyTorch's fully sharded data parallelism (ZeRO 3) with the framework's own kernels, as
#:   MosaicML's llm-foundry (FSDP, ``FULL_SHARD``) and torchtitan (FSDP2, ``fully_shard`` in
#:   ``torchtitan/models/llama3/parallelize.py``) run it; torchtitan adds tensor and pipeline parallelism, so
#:   any layout is allowed, at ZeRO 3;
#: - ``maxtext``: MaxText on JAX and XLA, as NVIDIA's DGX Cloud recipe runs it (``maxtext/configure.sh`` of
#:   NVIDIA/dgxc-benchmarking v25.04): its ``fsdp`` axes shard the weights and optimizer state (ZeRO 3), over
#:   every GPU or, with ``dcn_data_parallelism``, over groups of them (:attr:`Layout.shard_group`); XLA pipelines
#:   the all-gathers and reduce-scatters behind compute.
TRAINING_STACKS = {stack.name: stack for stack in (
    TrainingStack("megatron", False, False, "https://github.com/NVIDIA/Megatron-LM/blob/307dcf37f03d44da131ba2199"
                  "9278abe4112d2ad/megatron/training/arguments.py"),
    TrainingStack("nemo", True, False, "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/203599bf3f798a01f2e5e"
                  "7dcf01cffc2c22e7bc6/src/megatron/bridge/recipes/llama/llama3_70b.py"),
    TrainingStack("nanotron", False, True, "https://github.com/huggingface/nanotron/blob/4796d2d9107a1f04d4ee70b09d3"
                  "df22aca3a1d45/src/nanotron/models/llama.py"),
    TrainingStack("pytorch-ddp", False, False, "https://github.com/NVIDIA/DeepLearningExamples/blob/f8b3a63f810049b"
                  "0da23711f67c6df6d5569c1e0/PyTorch/LanguageModeling/BERT/run_squad.py", data_parallel_only=True,
                  zero_stage=0),
    TrainingStack("pytorch-fsdp", False, False, "https://github.com/pytorch/torchtitan/blob/b5bcd76c66d0acb1a08b176d96"
                  "39425bc55e0b2a/torchtitan/models/llama3/parallelize.py", zero_stage=3),
    TrainingStack("maxtext", False, False, "https://github.com/NVIDIA/dgxc-benchmarking/blob/v25.04/maxtext/"
                  "configure.sh", zero_stage=3),
)}
DEFAULT_TRAINING_STACK = "megatron"

__all__ = ["ACTIVATION_CACHES", "ATTENTION_KERNELS", "DEFAULT_FP8_RECIPE", "DEFAULT_GRAD_DTYPE",
           "DEFAULT_TRAINING_STACK", "EP_DISPATCH_DTYPES", "EP_KERNELS", "FP8_RECIPES", "GRAD_DTYPES", "METHODS",
           "MOMENT_DTYPES", "PP_SCHEDULES", "RECOMPUTE", "RECOMPUTE_MODULES", "TRAINING_STACKS", "Layout",
           "TrainingStack"]


@dataclass(frozen=True, kw_only=True)
class Layout:
    """A parallel layout of one training job: ``tp`` x ``cp`` x ``pp`` x ``dp`` GPUs, each pipeline fed
    micro-batches of ``micro_batch`` sequences of ``seq`` tokens.

    The degrees (``tp``, ``pp``, ``dp``, ``micro_batch``, ``interleave``, ``ep``, ``cp``) are numbers or numpy
    arrays that broadcast together: one layout or many layouts of one job at once (the search evaluates a
    vector of them in one call). The options after them are shared by all the layouts.
    """

    tp: Any = 1  #: tensor-parallel degree
    pp: Any = 1  #: pipeline stages
    dp: Any = 1  #: data-parallel replicas
    micro_batch: Any = 1  #: sequences per micro-batch
    interleave: Any = 1  #: virtual pipeline stages per GPU (interleaved 1F1B)
    ep: Any = 1  #: expert-parallel degree
    cp: Any = 1  #: context parallelism: each sequence split over ``cp`` GPUs (ring attention)
    #: sequences per step; None where only memory is asked for: as many micro-batches as stages are in flight
    global_batch: int | None = None
    seq: Any = 2048  #: tokens per sequence
    recompute: str = "none"  #: activation recomputation (:data:`RECOMPUTE`)
    #: with ``recompute`` full, the layers of each virtual stage fully recomputed, the others not recomputed
    #: (Megatron's ``--recompute-num-layers`` with ``--recompute-method block``); 0 = every layer
    recompute_layers: Any = 0
    #: with ``recompute`` selective, the parts of each layer recomputed (:data:`RECOMPUTE_MODULES`); empty = the
    #: attention scores (``core_attn``), Megatron-Core's default
    recompute_modules: tuple[str, ...] = ()
    sequence_parallel: bool = False
    dtype: str = "bf16"  #: the GEMMs' precision
    zero_stage: Any = 1  #: ZeRO stage of the data-parallel sharding (0 to 3)
    #: hybrid sharding (HSDP, ``ShardingStrategy.HYBRID_SHARD``; MaxText's ``dcn_data_parallelism``): the ZeRO
    #: shards span groups of this many data-parallel ranks (of ``dp x cp``), and the groups hold copies of the
    #: same shards; 0 = one group of every data-parallel rank
    shard_group: Any = 0
    attention: str = "flash"  #: attention kernel (:data:`ATTENTION_KERNELS`)
    method: str = "pretrain"  #: training method (:data:`METHODS`)
    lora_rank: int = 0  #: LoRA adapter rank (``method`` lora)
    etp: int = 0  #: expert tensor parallelism: 0 = ``tp`` (experts split like the dense layers), 1 = whole experts
    grad_dtype: str = DEFAULT_GRAD_DTYPE  #: gradient buffer and data-parallel reduction precision (:data:`GRAD_DTYPES`)
    fp8_recipe: str = DEFAULT_FP8_RECIPE  #: FP8 scaling recipe (:data:`FP8_RECIPES`); used only when dtype is fp8
    ep_dispatch: str = EP_DISPATCH_DTYPES[0]  #: MoE dispatch precision (:data:`EP_DISPATCH_DTYPES`)
    ep_kernel: str = EP_KERNELS[0]  #: the kernels of the MoE dispatch and combine (:data:`EP_KERNELS`)
    pp_schedule: str = PP_SCHEDULES[0]  #: pipeline schedule (:data:`PP_SCHEDULES`)
    #: the interleaved schedule overlaps its stage-to-stage transfers with compute (Megatron-LM's
    #: ``overlap_p2p_comm``: added 2023-05-31, commit f9283c5, the default since 2023-10-12, commit 4eeff55);
    #: False for software before it, whose every transfer blocks (``batch_isend_irecv``, then
    #: ``torch.cuda.synchronize()``, ``megatron/p2p_communication.py`` of 2021-2022)
    overlap_p2p: bool = True
    #: the gradient reduction overlaps the backward pass and the parameter all-gather the next forward pass
    #: (Megatron-LM's ``overlap_grad_reduce``: added 2023-08-16, commit 2d5220a); False for software before it,
    #: which reduced the gradients once the backward pass had ended (``optimizer.reduce_model_grads`` in
    #: ``train_step``, ``megatron/training.py`` of 2021-2022)
    overlap_grad_reduce: bool = True
    activation_cache: str = ACTIVATION_CACHES[0]  #: how kept activations are stored (:data:`ACTIVATION_CACHES`)
    moment_dtype: str = MOMENT_DTYPES[0]  #: precision of Adam's moments (:data:`MOMENT_DTYPES`)
    #: transformer layers on the first and on the last pipeline stage, 0 = an even split (Megatron-Core's
    #: ``decoder_first_pipeline_num_layers`` and ``decoder_last_pipeline_num_layers``)
    pp_first_layers: Any = 0
    pp_last_layers: Any = 0
    stack: str = DEFAULT_TRAINING_STACK  #: training framework (:data:`TRAINING_STACKS`)
    #: the layers run at the reference line itself (Korthikanti et al. 2022's software, whose layers their Table 4
    #: times), not at the stack's fitted kernels (``data/stack_efficiency.csv``)
    reference_kernels: bool = False

    @property
    def gpus(self) -> Any:
        """GPUs the layout uses: tp x cp x pp x dp."""
        return self.tp * self.cp * self.pp * self.dp

    @property
    def shards(self) -> Any:
        """Data-parallel ranks one set of ZeRO shards spans: ``shard_group``, or every ``dp x cp`` rank."""
        group = np.asarray(self.shard_group)
        return np.where(group > 0, group, np.asarray(self.dp) * np.asarray(self.cp))

    @property
    def microbatches(self) -> Any:
        """Micro-batches per pipeline per step: global batch / (micro-batch x dp); None without a global batch."""
        if self.global_batch is None:
            return None
        return self.global_batch // (self.micro_batch * self.dp)

    @property
    def expert_tp(self) -> Any:
        """Ranks each expert is split over: ``tp`` (``etp`` 0) or ``etp``."""
        return self.tp if self.etp == 0 else np.full(np.shape(self.tp), self.etp)

    def stage_layers(self, layers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first, middle, last): transformer layers held by a GPU of the first, of the busiest middle and of
        the last pipeline stage, out of the model's ``layers`` (arrays, broadcast over the layouts).

        A count stated in ``pp_first_layers`` or ``pp_last_layers`` (numbers or arrays, 0 = not stated) is taken
        as given and the other layers are split evenly over the other stages, the busiest holding the rounded-up
        share. Without one, every stage holds the busiest stage's ``ceil(L / (pp v)) v`` (``v`` interleaved
        chunks), which is each stage's count when the layers divide evenly. With one stage, ``first`` is all of
        them and the others 0."""
        pp, v = np.asarray(self.pp), np.asarray(self.interleave)
        first_n, last_n = (np.asarray(n, dtype=float) for n in (self.pp_first_layers, self.pp_last_layers))
        even = np.ceil(layers / (pp * v)) * v
        others = pp - (first_n > 0) - (last_n > 0)
        share = np.where(others > 0, np.ceil((layers - first_n - last_n) / np.maximum(others, 1)), 0.0)
        share = np.where((first_n > 0) | (last_n > 0), share, even)
        first = np.where(first_n > 0, first_n, share)
        last = np.where(pp > 1, np.where(last_n > 0, last_n, share), 0.0)
        return first, np.where(pp > 2, share, 0.0), last

    @property
    def recomputed(self) -> tuple[str, ...]:
        """The parts of each layer selective recomputation recomputes (:data:`RECOMPUTE_MODULES`): those stated,
        else ``core_attn``; none under no or full recomputation."""
        if self.recompute != "selective":
            return ()
        return tuple(self.recompute_modules) or ("core_attn",)

    def recomputed_share(self, layers: int) -> np.ndarray:
        """The share of a GPU's transformer layers that ``recompute`` applies to (arrays, broadcast over the
        layouts): all of them, or ``recompute_layers`` of the ``L / (pp v)`` of each virtual stage."""
        n = np.asarray(self.recompute_layers, dtype=float)
        per_chunk = layers / (np.asarray(self.pp) * np.asarray(self.interleave))
        return np.where(n > 0, np.minimum(n / per_chunk, 1.0), 1.0)

    def batched(self) -> Layout:
        """The same layout with each degree a one-element array (the shape the vectorised step model takes)."""
        one = lambda x: np.atleast_1d(np.asarray(x))  # noqa: E731
        return replace(self, tp=one(self.tp), pp=one(self.pp), dp=one(self.dp), micro_batch=one(self.micro_batch),
                       interleave=one(self.interleave), ep=one(self.ep))
