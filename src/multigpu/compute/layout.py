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

from multigpu.compute.shapes import ATTENTION_KERNELS, RECOMPUTE

#: Precisions of the gradient buffer and its data-parallel reduction (``grad_dtype``), the default first:
#: ``fp32``, Megatron-LM's (``accumulate_allreduce_grads_in_fp32`` for BF16 training); ``bf16``, as NVIDIA's
#: performance recipes run (Megatron-Bridge ``scripts/performance/utils/overrides.py``
#: ``set_basic_perf_overrides``: every recipe; NeMo ``scripts/performance/helpers.py`` ``set_precision_configs``:
#: FP8 recipes; ``grad_reduce_in_fp32 = False``).
GRAD_DTYPES = ("fp32", "bf16")
DEFAULT_GRAD_DTYPE = GRAD_DTYPES[0]
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
#: Training methods: pre-training, full fine-tuning (the same maths) and LoRA.
METHODS = ("pretrain", "full", "lora")

__all__ = ["ATTENTION_KERNELS", "DEFAULT_FP8_RECIPE", "DEFAULT_GRAD_DTYPE", "EP_DISPATCH_DTYPES", "FP8_RECIPES",
           "GRAD_DTYPES", "METHODS", "RECOMPUTE", "Layout"]


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
    sequence_parallel: bool = False
    dtype: str = "bf16"  #: the GEMMs' precision
    zero_stage: Any = 1  #: ZeRO stage of the data-parallel sharding (0 to 3)
    attention: str = "flash"  #: attention kernel (:data:`ATTENTION_KERNELS`)
    method: str = "pretrain"  #: training method (:data:`METHODS`)
    lora_rank: int = 0  #: LoRA adapter rank (``method`` lora)
    etp: int = 0  #: expert tensor parallelism: 0 = ``tp`` (experts split like the dense layers), 1 = whole experts
    grad_dtype: str = DEFAULT_GRAD_DTYPE  #: gradient buffer and data-parallel reduction precision (:data:`GRAD_DTYPES`)
    fp8_recipe: str = DEFAULT_FP8_RECIPE  #: FP8 scaling recipe (:data:`FP8_RECIPES`); used only when dtype is fp8
    ep_dispatch: str = EP_DISPATCH_DTYPES[0]  #: MoE dispatch precision (:data:`EP_DISPATCH_DTYPES`)

    @property
    def gpus(self) -> Any:
        """GPUs the layout uses: tp x cp x pp x dp."""
        return self.tp * self.cp * self.pp * self.dp

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

    def batched(self) -> Layout:
        """The same layout with each degree a one-element array (the shape the vectorised step model takes)."""
        one = lambda x: np.atleast_1d(np.asarray(x))  # noqa: E731
        return replace(self, tp=one(self.tp), pp=one(self.pp), dp=one(self.dp), micro_batch=one(self.micro_batch),
                       interleave=one(self.interleave), ep=one(self.ep))
