"""``python -m multigpu collective``: time one collective on a system (alpha-beta over its topology).

Prints one object: op, system, gpus, nodes, bytes, algorithm, protocol,
time_us, algbw_GBps, busbw_GBps (nccl-tests conventions, GB = 1e9 bytes),
bottleneck (the link that limits it) and note. With ``--interval P``, also the prediction interval at level P of
each of the three (``time_us_lo``, ``time_us_hi``, ``algbw_GBps_lo`` ...), the level
(``interval_level``) and the regime it comes from (``interval_regime``): :mod:`multigpu.evidence.intervals`.
"""

from __future__ import annotations

import argparse

from multigpu.cli import args as types
from multigpu.comm import collectives
from multigpu.common.errors import InputError
from multigpu.common.units import parse_size
from multigpu.hardware import catalog

_EPILOG = ("bytes: the per-rank buffer for allreduce, broadcast and sendrecv; the total over all ranks for "
           "allgather, reducescatter and alltoall (as nccl-tests). busbw = algbw x 2(n-1)/n (allreduce), "
           "(n-1)/n (allgather, reducescatter, alltoall) or 1. auto = the fastest of NCCL's algorithms.")


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "collective",
                         "time one collective (all-reduce, all-gather, ...) on a system's GPUs and links")
    parser.epilog = _EPILOG
    parser.add_argument("--op", required=True, choices=collectives.OPS, help="the collective")
    parser.add_argument("--system", required=True, help="system id (see: python -m multigpu systems)")
    parser.add_argument("--gpus", required=True, type=types.count, help="ranks in total")
    parser.add_argument("--nodes", type=types.count, default=1,
                        help="spread the GPUs evenly over this many nodes joined by the system's fabric (default 1)")
    parser.add_argument("--bytes", required=True, help="message size: 4096, 256MB (1e6 bytes), 1GiB (2^30 bytes)")
    parser.add_argument("--fabric", choices=catalog.FABRICS,
                        help="the fabric joining the nodes (default: the system's; ib = InfiniBand without "
                             "in-network reduction, ib-sharp = with SHARP, roce, efa, tcp, "
                             "tcpx = GPUDirect-TCPX, tcpxo = GPUDirect-TCPXO)")
    parser.add_argument("--algorithm", choices=collectives.ALGORITHMS, default="auto",
                        help="default auto: the fastest of NCCL's algorithms for this size")
    parser.add_argument("--no-nvls", dest="nvls", action="store_false",
                        help="as NCCL with NCCL_NVLS_ENABLE=0: auto does not weigh NVLS (in-switch reduction)")
    parser.add_argument("--latency-factor", type=types.positive, default=1.0, metavar="X",
                        help="multiply every latency of the model by X: your deployment's, as `validate "
                             "--fit-latency` fits it to your nccl-tests log (default 1: as shipped)")
    parser.add_argument("--interval", type=types.level, metavar="P",
                        help="also give the prediction interval at level P (0.9: 9 measurements in 10 on an unseen "
                             "cluster fall inside): time_us_lo, time_us_hi, algbw_GBps_lo, algbw_GBps_hi, "
                             "busbw_GBps_lo, busbw_GBps_hi, interval_level and "
                             "interval_regime; the validation appendix says how often they hold")
    parser.set_defaults(handler=_collective)


def _collective(args: argparse.Namespace) -> dict:
    nbytes = parse_size(args.bytes)
    system = catalog.system(args.system)  # an unknown id names the known ones
    if args.fabric and args.fabric != system.fabric:
        args.system = catalog.system(f"{args.system.partition('@')[0]}@{args.fabric}").id
    if args.gpus < 2:
        raise InputError(f"--gpus must be at least 2 for a collective; got {args.gpus}")
    cal = None
    if args.latency_factor != 1:
        from multigpu.evidence import deployment  # scipy and pandas only when asked

        cal = deployment.scaled(args.latency_factor)
    out = collectives.collective(args.op, args.system, args.gpus, nbytes, nodes=args.nodes,
                                 algorithm=args.algorithm, cal=cal, nvls=args.nvls).to_dict()
    return out if args.interval is None else {**out, **_interval(out, nbytes, args.nodes, args.interval)}


def _interval(out: dict, nbytes: float, nodes: int, level: float) -> dict:
    """The prediction interval's fields for ``out`` (see the module doc)."""
    from multigpu.evidence import intervals  # scipy and pandas only when asked

    try:
        band = intervals.band(intervals.regime(nbytes, nodes), level)
    except ValueError as exc:
        raise InputError(f"--interval {level:g}: {exc}") from None
    fields = {**band.bounds("time_us", out["time_us"]), **band.bounds("algbw_GBps", out["algbw_GBps"], rate=True),
              **band.bounds("busbw_GBps", out["busbw_GBps"], rate=True)}
    return {**fields, "interval_level": level,
            "interval_regime": f"{band.regime.size} messages {band.regime.family}"}
