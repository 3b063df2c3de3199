"""``python -m multigpu train`` and ``infer``: step time, MFU, latency and throughput of a layout."""

from __future__ import annotations

import argparse
from typing import Any

from multigpu.cli import args as types
from multigpu.common.errors import InputError
from multigpu.compute import disaggregated, efficiency, inference, models, offline, queueing, training
from multigpu.compute.layout import (
    ACTIVATION_CACHES,
    ATTENTION_KERNELS,
    DEFAULT_FP8_RECIPE,
    DEFAULT_GRAD_DTYPE,
    DEFAULT_TRAINING_STACK,
    EP_DISPATCH_DTYPES,
    EP_KERNELS,
    FP8_RECIPES,
    GRAD_DTYPES,
    MOMENT_DTYPES,
    PP_SCHEDULES,
    RECOMPUTE_MODULES,
    TRAINING_DTYPES,
    TRAINING_STACKS,
)
from multigpu.compute.shapes import MAXTEXT_POLICIES, REMAT_POLICIES


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    train = add_command(subparsers, "train", "time, MFU and memory of one training step "
                        "(times in s, TFLOP/s = 1e12 FLOP/s, memory in GB = 1e9 bytes)")
    add_training_job(train)
    train.add_argument("--tp", type=types.count, required=True, help="tensor-parallel degree")
    train.add_argument("--pp", type=types.count, required=True, help="pipeline-parallel degree")
    train.add_argument("--dp", type=types.count, help="data-parallel degree (default: gpus / (tp x pp))")
    train.add_argument("--micro-batch", type=types.count, required=True, help="sequences per micro-batch")
    train.add_argument("--recompute", choices=("none", "selective", "full"), default="none")
    train.add_argument("--recompute-modules", type=_modules, default=(), metavar="PARTS",
                       help="with --recompute selective: the parts of each layer recomputed, comma-separated, by "
                            "Megatron-Core's names (its --recompute-modules): core_attn (the attention scores; the "
                            "default), layernorm (the norms' outputs), mla_up_proj (MLA's queries, keys and "
                            "values), mlp (a dense layer's MLP), moe_act (the routed experts' activation), moe "
                            "(the whole MoE block, its dispatch and combine included), shared_experts; output "
                            "recompute_modules")
    train.add_argument("--remat-policy", choices=REMAT_POLICIES, default=None, metavar="POLICY",
                       help="a named recomputation policy instead of --recompute: MaxText's "
                            + ", ".join(MAXTEXT_POLICIES) + ", or torchtitan's per-operator selective policy, "
                            "torchtitan-op (selective_ac_option op). Each keeps the outputs of the GEMMs it names "
                            "and recomputes the rest of the layer from its input: outputs recompute full, or "
                            "selective with the parts it does not keep in recompute_modules (MaxText's: layernorm, "
                            "mlp_act, and of qkv_proj, context with core_attn, out_proj and mlp_in those it does "
                            "not save; torchtitan-op: layernorm, k_proj, out_proj, mlp_up and mlp_act, every "
                            "second matrix multiply); dense models without MLA only; the offloading policies are "
                            "not priced")
    train.add_argument("--recompute-layers", type=types.count, default=0, metavar="N",
                       help="with --recompute full: the layers of each virtual pipeline stage fully recomputed, the "
                            "others keeping their activations (Megatron's --recompute-num-layers N with "
                            "--recompute-method block; default: every layer); output recompute_layers")
    train.add_argument("--sequence-parallel", action="store_true")
    train.add_argument("--interleave", type=types.count, default=1, help="virtual pipeline stages per GPU")
    train.add_argument("--pp-first-layers", type=types.count, default=0, metavar="N",
                       help="transformer layers on the first pipeline stage (default: an even split); the other "
                            "layers split evenly over the other stages (Megatron-Core's "
                            "decoder_first_pipeline_num_layers)")
    train.add_argument("--pp-last-layers", type=types.count, default=0, metavar="N",
                       help="transformer layers on the last pipeline stage, which also runs the output layer "
                            "(default: an even split; Megatron-Core's decoder_last_pipeline_num_layers)")
    add_training_stack(train)
    train.add_argument("--attention", choices=ATTENTION_KERNELS, default=ATTENTION_KERNELS[0],
                       help="attention kernel: flash (default, FlashAttention: the score matrix never reaches "
                            "memory) or materialised (the score matrix and its softmax go through memory, as "
                            "Megatron's fused softmax kernels do)")
    train.add_argument("--zero", type=int, choices=(0, 1, 2, 3), default=None,
                       help="ZeRO stage of the data-parallel group (default 1: distributed optimizer; 0 under "
                            "pytorch-ddp, which runs data parallelism alone, and 3 under pytorch-fsdp and maxtext)")
    train.add_argument("--ep", type=types.count, default=1, help="expert-parallel degree (MoE models)")
    train.add_argument("--etp", type=int, choices=(0, 1), default=0,
                       help="expert tensor parallelism: 0 (default) splits each expert over the TP ranks, as the "
                            "dense layers; 1 keeps experts whole, so EP may span the TP x DP ranks")
    train.add_argument("--cp", type=types.count, default=1,
                       help="context-parallel degree: each sequence split over CP GPUs (ring attention); "
                            "GPUs = tp x cp x pp x dp")
    add_grad_dtype(train)
    train.add_argument("--fp8-recipe", choices=FP8_RECIPES, default=DEFAULT_FP8_RECIPE,
                       help="FP8 scaling recipe (with --dtype fp8): delayed (default, Transformer Engine's) or "
                            "current (per-tensor current scaling, one more read of each operand for its amax)")
    train.add_argument("--ep-dispatch", choices=EP_DISPATCH_DTYPES, default=EP_DISPATCH_DTYPES[0],
                       help="precision of the MoE dispatch all-to-all: bf16 (default, as Megatron-Core sends it) or "
                            "fp8 (DeepSeek-V3's: what travels towards the experts, forward and backward, in FP8; "
                            "what comes back in BF16); named in the output as ep_dispatch")
    train.add_argument("--ep-kernel", choices=EP_KERNELS, default=EP_KERNELS[0],
                       help="kernels of the MoE dispatch and combine: nccl (default, Megatron-Core's all-to-all "
                            "token dispatcher: one copy per token and expert) or deepep (DeepEP's normal kernels, "
                            "Megatron-Core's flex dispatcher and DeepSeek-V3's: one network copy per node, "
                            "forwarded over NVLink; node-limited where the model routes within groups of "
                            "experts); named in the output as ep_kernel")
    train.add_argument("--pp-schedule", choices=PP_SCHEDULES, default=PP_SCHEDULES[0],
                       help="pipeline schedule: 1f1b (default; interleaved with --interleave) or dualpipe "
                            "(DeepSeek-V3's bidirectional schedule: each GPU holds two stages, a forward and a "
                            "backward chunk overlap and hide each other's all-to-all and stage-to-stage traffic, "
                            "a bubble of (pp/2 - 1)(F&B + B - 3W); needs an even pp and an even number of "
                            "micro-batches, at least 2 x pp); named in the output as pp_schedule")
    train.add_argument("--p2p-overlap", choices=("on", "off"), default="on",
                       help="whether the interleaved schedule (--interleave) overlaps its stage-to-stage transfers "
                            "with compute: on (default; Megatron-LM's overlap_p2p_comm, the default since 2023) or "
                            "off (each transfer waits to complete, as in Megatron-LM before 2023); named in the "
                            "output as overlap_p2p")
    train.add_argument("--grad-reduce-overlap", choices=("on", "off"), default="on",
                       help="whether the data-parallel gradient reduction overlaps the backward pass: on (default; "
                            "Megatron-LM's overlap_grad_reduce, since 2023) or off (the gradients are reduced once "
                            "the backward pass has ended, as in Megatron-LM before 2023); named in the output as "
                            "overlap_grad_reduce")
    train.add_argument("--shard-group", type=types.count, default=None, metavar="N",
                       help="hybrid sharding (PyTorch's HSDP, MaxText's dcn_data_parallelism): the ZeRO shards span "
                            "groups of N data-parallel ranks, which hold copies of the same shards; the gradients "
                            "are reduce-scattered within a group, then all-reduced across the groups (default: one "
                            "group of every data-parallel rank; needs ZeRO 1 to 3); named in the output as "
                            "shard_group (0: one group)")
    train.add_argument("--activation-cache", choices=ACTIVATION_CACHES, default=ACTIVATION_CACHES[0],
                       help="how the activations kept for the backward pass are stored: bf16 (default) or fp8 "
                            "(DeepSeek-V3's: the linear layers' inputs in FP8, the attention output in 12 bits; "
                            "with --dtype fp8); named in the output as activation_cache")
    train.add_argument("--moment-dtype", choices=MOMENT_DTYPES, default=MOMENT_DTYPES[0],
                       help="precision of Adam's two moments: fp32 (default) or bf16 (DeepSeek-V3's, and "
                            "Megatron-Core's --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16); the FP32 master "
                            "weights stay; named in the output as moment_dtype")
    train.add_argument("--interval", type=types.level, metavar="P",
                       help="also give the prediction interval at level P (such as 0.9) of step_time_s, "
                            "model_tflops_per_gpu and mfu (<field>_lo, <field>_hi), with interval_level and "
                            "interval_regime; calibrated on published training runs (a few seconds)")
    train.epilog = TRAIN_FIELDS
    train.formatter_class = argparse.RawDescriptionHelpFormatter
    train.set_defaults(handler=_train)

    infer = add_command(subparsers, "infer", "latency and throughput of serving under tensor and pipeline "
                        "parallelism, inside a node or across nodes, with in-flight batching (times in s)")
    infer.add_argument("--model", required=True, help=types.MODEL_HELP)
    infer.add_argument("--system", required=True, help="system id (python -m multigpu systems)")
    infer.add_argument("--tp", type=types.count, required=True,
                       help="tensor-parallel GPUs; wider than a node, its all-reduces run over the NICs")
    infer.add_argument("--pp", type=types.count, default=1,
                       help="pipeline stages of tp GPUs each (default 1), filling nodes in turn")
    infer.add_argument("--ep", type=types.count, default=1,
                       help="expert parallelism for a MoE model: its routed experts spread over this many GPUs, "
                            "with attention in ep / tp data-parallel groups of tp GPUs (DP-attention; default 1, "
                            "none); dispatch and combine on DeepEP's kernels, or NCCL's all-to-all with --stack "
                            "nccl")
    infer.add_argument("--batch", type=types.count, required=True, help="queries in flight")
    infer.add_argument("--input-tokens", type=types.count, required=True)
    infer.add_argument("--output-tokens", type=types.count, required=True)
    infer.add_argument("--dtype", choices=inference.DTYPES, default="bf16",
                       help="the weights' format: bf16 (default), fp16, fp8, fp4 (NVFP4: E2M1 values and an FP8 "
                            "scale per 16, 4.5 bits a weight) or mxfp4 (an E8M0 scale per 32, 4.25 bits). FP8 and "
                            "FP4 GEMMs run at the GPU's FP8 or FP4 rate where it has one, else at the 16-bit rate "
                            "(weight-only, as vLLM's Marlin kernels); named in the output as gemm_dtype")
    infer.add_argument("--interval", type=types.level, metavar="P",
                       help="also give the prediction interval at level P (such as 0.9) of tokens_per_s_per_gpu "
                            "(tokens_per_s_per_gpu_lo, _hi), with interval_level and interval_regime; calibrated "
                            "on published serving runs (a few seconds). TTFT and TPOT have too few published "
                            "runs for one yet")
    infer.add_argument("--stack", choices=tuple(inference.STACKS), default=inference.DEFAULT_STACK,
                       help="serving stack, which decides the tensor-parallel all-reduce kernels: tensorrt-llm "
                            "(the fastest of NCCL, one-shot and two-shot), vllm (its custom kernels below 8 MiB, "
                            "NCCL above; under fp8 or fp4 a BF16 KV cache, its --kv-cache-dtype auto), nccl (NCCL "
                            "only); "
                            "default %(default)s")
    infer.add_argument("--release", metavar="R",
                       help="the serving stack's release whose decode kernels to price: each TensorRT-LLM release "
                            "with enough published runs takes its own factor on a decode step's kernel time "
                            "(data/release_efficiency.csv lists the releases; an error names them too), and with "
                            "--pp > 1 its pipeline loop's host time per iteration where it has one "
                            "(data/pipeline_host.csv); default: none, the model's kernels")
    infer.add_argument("--offline-requests", type=types.count, metavar="N",
                       help="also price an offline benchmark of N requests of these lengths queued at once, at "
                            "most --batch in flight (trtllm-bench throughput, gptManagerBenchmark): they run in "
                            "waves of --batch, the last one partly filled, so fewer requests than a few batches "
                            "deliver less than the steady state's tokens_per_s_per_gpu (offline_* fields)")
    add_load(infer)
    infer.epilog = INFER_FIELDS + OFFLINE_FIELDS + LOAD_FIELDS
    infer.formatter_class = argparse.RawDescriptionHelpFormatter
    infer.set_defaults(handler=_infer)


#: the fields ``infer --offline-requests`` adds, defined (``--help``)
OFFLINE_FIELDS = """

an offline benchmark (--offline-requests N):
  offline_requests       N, the requests queued at once
  offline_waves          ceil(N / batch): waves of --batch requests that start and finish together
  offline_last_wave      the queries of the last wave (--batch where it is full)
  offline_run_s          seconds from the first admission to the last token: each wave one cycle_s at its size
  offline_tokens_per_s_per_gpu
                         N x output tokens / offline_run_s / GPUs: at most tokens_per_s_per_gpu, the steady
                         state's"""


#: the fields ``infer --rate`` or ``--concurrency`` adds, defined (``--help``)
LOAD_FIELDS = """

under load (--rate or --concurrency; seconds unless named otherwise):
  load_mode              open (requests at --rate) or closed (--concurrency users)
  load_rate_per_s        requests per second: offered (--rate) or completed (--concurrency)
  load_capacity_per_s    the most requests per second the deployment completes, at its best batch up to the cap
  load_utilization       load_rate_per_s / load_capacity_per_s (--rate must stay below 1)
  load_max_batch         the most queries the scheduler held at once: --batch, or fewer where memory ends
  load_batch_mean        queries in the batch, averaged over time
  load_tokens_per_s_per_gpu
                         output tokens per second per GPU over the run
  load_ttft_mean_s, load_ttft_p50_s, load_ttft_p90_s, load_ttft_p99_s
                         time to first token: the wait for admission and the iteration that ran the prefill
  load_tpot_mean_s, load_tpot_p50_s, load_tpot_p90_s, load_tpot_p99_s
                         time per output token after the first: decode steps at the batch met, and the other
                         requests' prefills between them
  load_requests, load_measured, load_seed, load_concurrency
                         requests simulated, those counted (the middle of the run), the seed, the users (0 for
                         --rate)
  with --disagg P,D (the first token comes from the prefill copy; time per output token holds the KV transfer):
  load_gpus              GPUs of both pools
  load_prefill_copies, load_decode_copies, load_prefill_tp, load_kv_link
                         the deployment
  load_kv_bytes          one request's KV cache (bytes, in the stack's KV precision)
  load_kv_transfer_s     moving it to a decode copy at line rate
  load_prefill_wait_p99_s
                         the 99th percentile of the wait for a prefill copy"""


#: the fields of ``train``'s output, defined (``--help``)
TRAIN_FIELDS = """fields (seconds unless named otherwise):
  step_time_s            one training step: compute_s + bubble_s + optimizer_s + the exposed communication
  compute_s              the busiest pipeline stage's compute over the step's micro-batches
  bubble_s               the pipeline bubble
  optimizer_s            the optimizer step: Adam over the parameters this GPU updates, memory-bound
  exposed_comm_s         tp, pp, dp, ep and cp communication not hidden behind compute
  ep_kernel              the kernels of the MoE dispatch and combine (--ep-kernel)
  pp_schedule            the pipeline schedule (--pp-schedule)
  overlap_p2p            whether the interleaved schedule's stage-to-stage transfers overlap compute
                         (--p2p-overlap)
  overlap_grad_reduce    whether the data-parallel gradient reduction overlaps the backward pass
                         (--grad-reduce-overlap)
  recompute_modules      the parts of each layer selective recomputation covers (--recompute-modules, or what
                         --remat-policy does not keep)
  activation_cache       how kept activations are stored (--activation-cache)
  moment_dtype           the precision of Adam's moments (--moment-dtype)
  stack                  the training stack; its kernels (share of the best measured matmul, traffic outside
                         the GEMMs) are fitted on its published runs: data/stack_efficiency.csv
  shard_group            hybrid sharding: the data-parallel ranks one set of ZeRO shards spans (--shard-group;
                         0: every data-parallel rank)"""


#: the fields of ``infer``'s output, defined (``--help``)
INFER_FIELDS = """fields (seconds unless named otherwise):
  ttft_s                 time to first token: the prefill of the user's prompt (no queueing)
  tpot_s                 time per output token a user sees: one decode step of the whole batch.
                         Changed: it no longer includes the other queries' prefills
  decode_step_s          one decode step of the batch (= tpot_s)
  decode_fixed_s         the part of a decode step that is its layers' fixed kernel time (launches, small
                         kernels): layers x decode_layer_overhead_s of data/compute_efficiency.csv
  tokens_per_s_per_user  1 / tpot_s
  query_time_s           what one user waits for the whole answer: ttft_s + output tokens x tpot_s
  cycle_s                steady state of in-flight batching: the GPUs' time to serve the batch's queries,
                         their prefills (packed into passes) and decode steps
  prefill_prompts_per_pass
                         prompts the cycle prefills in one pass: as many as --max-num-tokens holds (at least
                         one, at most the batch)
  prefill_pass_s         one such pass: its prompts' prefills, the layers' fixed kernel time and
                         pipeline_host_s paid once
  tokens_per_s_per_gpu   batch x output tokens / cycle_s / GPUs: the prefill work is counted
  nodes                  the nodes (or NVLink racks) the tp x pp GPUs span: a tensor-parallel group wider than a
                         node all-reduces over the NICs; pipeline stages take whole nodes in turn, and the
                         batch is split into pp micro-batches (a token passes every stage, so tpot_s is pp stage
                         steps)
  ep                     GPUs the routed experts are spread over (1: none); with ep > 1 the run takes ep GPUs,
                         attention runs in ep / tp data-parallel groups and batch is the queries of all of them
  decode_ep_comm_s       the expert-parallel dispatches and combines of one decode step (part of
                         decode_comm_s): DeepEP's low-latency kernels, or NCCL's all-to-all with --stack nccl
  gemm_dtype             the precision the linear GEMMs run in: the weights' format, or bf16 where the GPU has
                         no FP8 (fp8) or FP4 (fp4, mxfp4) rate and the weights are dequantized (weight-only)
  release, decode_time_factor
                         the stack's release whose decode kernels are priced (--release; null: the model's own)
                         and their time over the model's, fitted on that release's published runs
                         (data/release_efficiency.csv; 1 without --release)
  pipeline_host_s        host time a token's pass waits for on the stages' path, in tpot_s and ttft_s: pp x
                         the release's pipeline loop's host time per iteration (data/pipeline_host.csv:
                         TensorRT-LLM 1.0's PyTorch executor does not overlap it with pp > 1); 0 with one stage
                         or without --release
  kv_cache_dtype         the KV cache's precision: fp8 under fp8 or FP4 weights with tensorrt-llm (Model
                         Optimizer's checkpoints), bf16 with vllm's default
  tp_bytes_per_query_per_gpu
                         bytes each GPU sends for tensor parallelism over one query: 16-bit activations,
                         whatever the weights' format"""


def add_load(parser: argparse.ArgumentParser) -> None:
    """``infer``'s options of serving under load (:mod:`multigpu.compute.queueing`)."""
    group = parser.add_argument_group("under load", "TTFT and time per output token as users of a loaded "
                                      "deployment measure them: a discrete-event simulation of in-flight batching "
                                      "(load_* fields); --batch is then the most queries the scheduler holds at "
                                      "once, and at most what fits memory. One pipeline stage (pp 1); with --ep each "
                                      "data-parallel attention group has its own scheduler and an equal share of "
                                      "the requests")
    mode = group.add_mutually_exclusive_group()
    mode.add_argument("--rate", type=types.positive, metavar="R",
                      help="requests per second arriving at random (a Poisson process) at this deployment, as "
                           "MLPerf's Server scenario and vLLM's benchmark_serving --request-rate send them")
    mode.add_argument("--concurrency", type=types.count, metavar="C",
                      help="users who each send their next request when their answer ends (a fixed-concurrency "
                           "benchmark)")
    group.add_argument("--requests", type=types.at_least(20), default=queueing.DEFAULT_REQUESTS, metavar="N",
                       help="requests simulated (default %(default)s); the first and last tenth are not counted")
    group.add_argument("--seed", type=int, default=0, help="seed of the random arrivals (default 0)")
    group.add_argument("--disagg", type=_copies, metavar="P,D",
                       help="with --rate: disaggregated serving, P prefill copies (on --prefill-tp GPUs each) and D "
                            "decode copies (on --tp GPUs, or --ep), the KV cache moved between them at line rate "
                            "over --kv-link; --batch is each decode copy's most queries (load_gpus counts both pools)")
    group.add_argument("--prefill-tp", type=types.count, metavar="N",
                       help="with --disagg: tensor-parallel GPUs of a prefill copy (default --tp)")
    group.add_argument("--kv-link", choices=disaggregated.KV_LINKS,
                       help="with --disagg: where the KV cache travels, network (the pools on different nodes, over "
                            "the NICs; default), nvlink (one NVLink domain) or pcie (one PCIe server)")
    group.add_argument("--max-num-tokens", type=types.count, metavar="N",
                       help="tokens one iteration holds: one per decoding query, a whole prompt per admitted "
                            f"request (TensorRT-LLM's max_num_tokens; default {queueing.DEFAULT_MAX_NUM_TOKENS}, or "
                            "under load a prompt beside a full batch where that is more); it also sets how many "
                            "prompts cycle_s prefills in one pass")


def add_training_job(parser: argparse.ArgumentParser) -> None:
    """The arguments that name a training job: model, system, GPUs, global batch, sequence length, dtype."""
    parser.add_argument("--model", required=True, help=types.MODEL_HELP)
    parser.add_argument("--system", required=True, help="system id (python -m multigpu systems)")
    parser.add_argument("--gpus", type=types.count, required=True, help="total GPUs (= tp x pp x dp)")
    parser.add_argument("--global-batch", type=types.count, required=True, help="sequences per step")
    parser.add_argument("--seq", type=types.count, default=2048, help="tokens per sequence (default 2048)")
    parser.add_argument("--dtype", choices=TRAINING_DTYPES, default="bf16",
                        help="training precision: bf16 (default), fp16, fp8 (Transformer Engine: FP8 GEMMs, BF16 "
                             "elsewhere), tf32 (FP32 weights and activations, GEMMs at the TF32 tensor rate: "
                             "PyTorch with allow_tf32) or fp32 (FP32 GEMMs without TF32, PyTorch's default for "
                             "matrix multiplies)")


def add_training_stack(parser: argparse.ArgumentParser) -> None:
    """``--stack``: the training framework, as the switches its source gives."""
    parser.add_argument("--stack", choices=tuple(TRAINING_STACKS), default=DEFAULT_TRAINING_STACK,
                        help="training stack, named in the output as stack: megatron (default: Megatron-LM and "
                             "Megatron-Core defaults, layers split evenly, the output layer on the last stage), nemo "
                             "(NeMo and Megatron-Bridge performance recipes: tensor-parallel communication overlapped "
                             "with the GEMMs, Transformer Engine's fused kernels), nanotron (pipeline stages balanced "
                             "by compute cost: the last stage holds fewer layers; megatron's kernels), pytorch-ddp "
                             "(plain PyTorch data parallelism in eager mode, as NVIDIA's BERT fine-tuning example runs "
                             "it: data parallelism alone, ZeRO 0; fitted on BERT runs only), pytorch-fsdp (PyTorch "
                             "FSDP, ZeRO 3, as llm-foundry and torchtitan run it), maxtext (MaxText as NVIDIA's DGX "
                             "Cloud recipe runs it, ZeRO 3). Each stack's "
                             "kernels are fitted on its published runs (data/stack_efficiency.csv)")


def add_grad_dtype(parser: argparse.ArgumentParser) -> None:
    """``--grad-dtype``: the precision of the gradient buffer and its data-parallel reduction."""
    parser.add_argument("--grad-dtype", choices=GRAD_DTYPES, default=DEFAULT_GRAD_DTYPE,
                        help="precision of the gradient buffer and its data-parallel reduction: fp32 (default, "
                             "Megatron-LM's), bf16 (grad_reduce_in_fp32=False, as NVIDIA's NeMo and Megatron-Bridge "
                             "performance recipes run): half the gradient memory and reduction bytes")


def _zero(args: argparse.Namespace) -> int:
    """``--zero``, or the stage the stack always runs (:attr:`TrainingStack.zero_stage`), else 1."""
    if args.zero is not None:
        return args.zero
    stage = TRAINING_STACKS[args.stack].zero_stage
    return 1 if stage is None else stage


def _recompute(args: argparse.Namespace) -> tuple[str, tuple[str, ...]]:
    """(recompute, recompute modules) of ``train``: as given, or what ``--remat-policy`` maps to."""
    if args.remat_policy is None:
        return args.recompute, args.recompute_modules
    if args.recompute != "none" or args.recompute_modules:
        raise InputError("--remat-policy sets the recomputation: give it without --recompute and --recompute-modules")
    return models.named_recompute(args.model, args.remat_policy)


def _train(args: argparse.Namespace) -> dict[str, Any]:
    recompute, parts = _recompute(args)
    out = training.step(args.model, args.system, args.gpus, args.tp, args.pp, args.global_batch, args.micro_batch,
                         dp=args.dp, seq=args.seq, recompute=recompute, sequence_parallel=args.sequence_parallel,
                         interleave=args.interleave, dtype=args.dtype, zero_stage=_zero(args), ep=args.ep,
                         etp=args.etp, cp=args.cp, grad_dtype=args.grad_dtype, fp8_recipe=args.fp8_recipe,
                         ep_dispatch=args.ep_dispatch, pp_first_layers=args.pp_first_layers,
                         pp_last_layers=args.pp_last_layers, attention=args.attention, stack=args.stack,
                         recompute_layers=args.recompute_layers, ep_kernel=args.ep_kernel,
                         pp_schedule=args.pp_schedule, recompute_modules=parts,
                         activation_cache=args.activation_cache, moment_dtype=args.moment_dtype,
                         overlap_p2p=args.p2p_overlap == "on",
                         overlap_grad_reduce=args.grad_reduce_overlap == "on",
                         shard_group=args.shard_group or 0).to_dict()
    return out if args.interval is None else {**out, **_interval(out, "training step time", args.interval,
                                                                   ("step_time_s",), ("model_tflops_per_gpu", "mfu"))}


def _modules(text: str) -> tuple[str, ...]:
    """``--recompute-modules``: comma-separated names of :data:`RECOMPUTE_MODULES`, each once."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in RECOMPUTE_MODULES]
    if unknown or not names or len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"expected distinct names among {', '.join(RECOMPUTE_MODULES)}; got "
                                         f"'{text}'")
    return names


def _infer(args: argparse.Namespace) -> dict[str, Any]:
    _check_release(args.stack, args.release)
    packing = {} if args.max_num_tokens is None else {"max_num_tokens": args.max_num_tokens}
    out = inference.run(args.model, args.system, args.tp, args.batch, args.input_tokens, args.output_tokens,
                        pp=args.pp, dtype=args.dtype, stack_name=args.stack, ep=args.ep, release=args.release,
                        **packing).to_dict()
    if args.disagg is not None:
        return {**out, **_disaggregated(args)}
    if args.prefill_tp is not None or args.kv_link is not None:
        raise InputError("--prefill-tp and --kv-link describe a disaggregated deployment: give --disagg P,D too")
    if args.offline_requests is not None:
        if args.rate is not None or args.concurrency is not None:
            raise InputError("--offline-requests queues every request at once: it takes no --rate or --concurrency")
        out = {**out, **_offline(args, packing)}
    if args.rate is not None or args.concurrency is not None:
        eng = queueing.engine(args.model, args.system, args.tp, args.input_tokens, args.output_tokens, args.batch,
                              dtype=args.dtype, stack_name=args.stack, max_num_tokens=args.max_num_tokens,
                              pp=args.pp, ep=args.ep, release=args.release)
        loaded = queueing.simulate(eng, rate=args.rate, concurrency=args.concurrency, requests=args.requests,
                                   seed=args.seed)
        out = {**out, **loaded.to_dict(prefix="load_")}
    return out if args.interval is None else {**out, **_interval(out, "serving throughput", args.interval,
                                                                   ("tokens_per_s_per_gpu",), ())}


def _offline(args: argparse.Namespace, packing: dict[str, int]) -> dict[str, Any]:
    """``infer --offline-requests N``: the offline_* fields of N requests in waves of ``--batch``."""
    run = offline.run(args.offline_requests, args.batch, model_id=args.model, system_id=args.system, tp=args.tp,
                      input_tokens=args.input_tokens, output_tokens=args.output_tokens, pp=args.pp,
                      dtype=args.dtype, stack_name=args.stack, ep=args.ep, release=args.release, **packing)
    return {"offline_requests": run.requests, "offline_waves": run.waves, "offline_last_wave": run.last_wave,
            "offline_run_s": run.run_s, "offline_tokens_per_s_per_gpu": run.tokens_per_s_per_gpu}


def _check_release(stack: str, release: str | None) -> None:
    """``--release``: a release of ``stack`` with a decode-time factor of its own, or an :class:`InputError` that
    names those there are."""
    known = efficiency.releases(stack)
    if release is not None and release not in known:
        raise InputError(f"--release {release}: no decode-time factor for that release of {stack} (too few "
                         f"published runs, or none); releases with one: {', '.join(known) or 'none'}")


def _copies(text: str) -> tuple[int, int]:
    """``P,D``: prefill and decode copies, whole numbers >= 1."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"'{text}' is not P,D (prefill copies, decode copies), such as 2,1")
    return types.count(parts[0].strip()), types.count(parts[1].strip())


def _disaggregated(args: argparse.Namespace) -> dict[str, Any]:
    """``infer --disagg P,D --rate R``: the load_* fields of a disaggregated deployment."""
    if args.rate is None or args.interval is not None:
        raise InputError("--disagg needs --rate (requests arriving at random) and takes no --interval")
    prefill, decode = args.disagg
    deployment = disaggregated.split(args.model, args.system, args.tp, args.input_tokens, args.output_tokens,
                                     args.batch, prefill_copies=prefill, decode_copies=decode,
                                     prefill_tp=args.prefill_tp, ep=args.ep, dtype=args.dtype, stack_name=args.stack,
                                     kv_link=args.kv_link or disaggregated.KV_LINKS[0], release=args.release)
    run = disaggregated.simulate(deployment, args.rate, requests=args.requests, seed=args.seed)
    return {**run.load.to_dict(prefix="load_"), "load_gpus": run.gpus, "load_prefill_copies": prefill,
            "load_decode_copies": decode, "load_prefill_tp": deployment.prefill_gpus,
            "load_kv_link": args.kv_link or disaggregated.KV_LINKS[0],
            "load_kv_bytes": deployment.kv_bytes, "load_kv_transfer_s": run.kv_transfer_s,
            "load_prefill_wait_p99_s": run.prefill_wait_p99_s}


def _interval(out: dict[str, Any], kind: str, level: float, same: tuple[str, ...],
              inverted: tuple[str, ...]) -> dict[str, Any]:
    """``<field>_lo`` and ``<field>_hi`` of the prediction interval of kind ``kind`` at ``level``: for the fields
    ``same`` (the quantity the interval was calibrated on) and ``inverted`` (a rate that is its inverse), with
    ``interval_level`` and ``interval_regime`` (:mod:`multigpu.evidence.intervals`)."""
    from multigpu.evidence import intervals  # the published runs, only when asked

    try:
        band = intervals.run_band(kind, level)
    except ValueError as exc:
        raise InputError(f"--interval {level:g}: {exc}") from None
    fields: dict[str, Any] = {}
    for names, bounds in ((same, band.around), (inverted, band.inverted)):
        for name in names:
            fields[f"{name}_lo"], fields[f"{name}_hi"] = bounds(out[name])
    return {**fields, "interval_level": level, "interval_regime": kind}
