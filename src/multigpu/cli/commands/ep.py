"""``python -m multigpu ep``: time one MoE layer's expert-parallel dispatch and combine on a system.

Prints one object per phase (dispatch, then combine): kernel, phase, dtype (on the wire), system, gpus, nodes,
tokens_per_gpu, ranks_per_token and nodes_per_token (the distinct GPUs and nodes a token reaches, its own
included), intra_node_bytes and network_bytes (the busiest GPU's, one direction), logical_bytes (what DeepEP's
benchmarks count), time_us, logical_GBps and bottleneck (nvlink, network or latency; for the nccl kernel the
collective model's link). The model: :mod:`multigpu.comm.expert`.
"""

from __future__ import annotations

import argparse

from multigpu.cli import args as types
from multigpu.comm import expert
from multigpu.common.errors import InputError

_EPILOG = ("kernels: deepep = DeepEP's normal kernels (training, prefill: one network copy per node, forwarded "
           "over NVLink), deepep-ll = its low-latency kernels (decode: one copy per token and expert, straight "
           "to the expert's GPU), nccl = an NCCL all-to-all of one copy per token and expert. Routing is uniform "
           "over the experts, as the kernels' benchmarks route; --imbalance scales the busiest GPU's traffic. "
           "Bytes are per GPU, one direction; GB = 1e9 bytes.")


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "ep", "time a mixture-of-experts layer's dispatch and combine "
                                           "(expert parallelism) on a system's GPUs, NVLink and NICs")
    parser.epilog = _EPILOG
    parser.add_argument("--system", required=True, help="system id (see: python -m multigpu systems)")
    parser.add_argument("--gpus", required=True, type=types.count, help="EP ranks in total")
    parser.add_argument("--nodes", type=types.count, default=1, help="spread the ranks evenly over this many nodes "
                                                                     "(default 1)")
    parser.add_argument("--tokens", required=True, type=types.count, help="tokens per GPU in one step")
    parser.add_argument("--model", help="take --hidden, --topk and --experts from this MoE model "
                                        "(see: python -m multigpu models)")
    parser.add_argument("--hidden", type=types.count, help="hidden size (elements per token)")
    parser.add_argument("--topk", type=types.count, help="experts per token")
    parser.add_argument("--experts", type=types.count, help="routed experts in the layer")
    parser.add_argument("--node-limit", type=types.count, metavar="M",
                        help="at most M nodes per token (DeepSeek-V3's node-limited routing: 4); default none")
    parser.add_argument("--kernel", choices=expert.KERNELS, default="deepep", help="default deepep")
    parser.add_argument("--imbalance", type=float, default=1.0, metavar="X",
                        help="the busiest GPU's traffic over the mean (default 1: uniform routing)")
    parser.set_defaults(handler=_ep)


def _routing(args: argparse.Namespace) -> expert.Routing:
    shape = {"hidden": args.hidden, "topk": args.topk, "experts": args.experts}
    if args.model:
        from multigpu.compute import models  # the catalogue of models only when asked

        m = models.model(args.model)
        if not m.is_moe:
            raise InputError(f"--model {args.model} has no experts")
        shape = {"hidden": m.hidden, "topk": m.experts_per_token, "experts": m.experts} | {
            k: v for k, v in shape.items() if v is not None}
    missing = [f"--{k}" for k, v in shape.items() if v is None]
    if missing:
        raise InputError(f"give --model or {', '.join(missing)}")
    return expert.Routing(args.tokens, shape["hidden"], shape["topk"], shape["experts"], args.node_limit)


def _ep(args: argparse.Namespace) -> list[dict]:
    phases = expert.layer(_routing(args), args.system, args.gpus, args.nodes, kernel=args.kernel,
                          imbalance=args.imbalance)
    return [p.to_dict() for p in phases]
