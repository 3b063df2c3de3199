"""``python -m multigpu validate --system ID --nccl-tests LOG``: your cluster's nccl-tests output against the
model, size by size (see :mod:`multigpu.evidence.nccltests`), and a health check: each size inside the model's
90 % interval, slower or faster, one line for the cluster, and with ``--strict`` exit status 1 when large messages
are consistently slower (:mod:`multigpu.evidence.health`); and a diagnosis: the named fault whose curve explains
the log clearly better than the system as configured, if one does (:mod:`multigpu.evidence.diagnosis`)."""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import numpy as np

from multigpu.cli import args as types
from multigpu.comm import collectives
from multigpu.common.errors import InputError


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "validate", "compare the output of nccl-tests (all_reduce_perf, "
                         "all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf) with the model")
    parser.add_argument("--system", required=True, help="system id the log was measured on (python -m multigpu "
                        "systems; <id>@<fabric> for another fabric, e.g. dgx-a100@roce)")
    parser.add_argument("--nccl-tests", required=True, metavar="LOG", help="a file with nccl-tests' output")
    parser.add_argument("--op", choices=collectives.OPS, help="the collective (default: read from the log)")
    parser.add_argument("--gpus", type=types.count, help="ranks in total (default: the log's Rank lines)")
    parser.add_argument("--nodes", type=types.count, help="nodes (default: the hosts of the log's Rank lines)")
    parser.add_argument("--no-nvls", dest="nvls", action="store_false", help="the run had NCCL_NVLS_ENABLE=0: "
                        "the model's auto does not weigh NVLS (in-switch reduction) either (a log written with "
                        "NCCL_DEBUG=INFO says so itself; its NCCL_ALGO and NCCL_PROTO are followed too)")
    parser.add_argument("--fit-latency", action="store_true", help="also fit one factor on every latency of the "
                        "model to this log (your deployment's latency: plugin, library, drivers) and show the "
                        "error with it; fitted on the log itself, so in sample")
    parser.add_argument("--anchor", type=types.count, metavar="N", help="with --fit-latency: fit the factor on "
                        "the log's N smallest sizes only (all of them small enough to be latency; an error says "
                        "the limit otherwise), and judge it on the others, which it has not seen (the book uses 3)")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 when large messages (64 MiB and "
                        "up) are consistently slower than the model's 90 %% interval: at least 3 sizes, and more "
                        "than half of them (for acceptance scripts)")
    parser.epilog = ("Fields: line (of the log), bytes (nccl-tests size), measured_time_us, predicted_time_us, "
                     "measured_busbw_GBps, predicted_busbw_GBps (GB/s = 1e9 B/s, out-of-place), algorithm and "
                     "protocol (the model's pick), error_pct (predicted / measured time - 1, %), expected_low_us "
                     "and expected_high_us (the model's 90 % interval of the time), expected (inside, slower or "
                     "faster than that interval), diagnosis (the fault whose curve explains the log clearly "
                     "better than the system as configured: nvls-off, p2p-off, half-nics, no-gdr, tcp, pcie-lower "
                     "or one-process; empty when none does) and diagnosis_time_us (the model's time at this size "
                     "with that fault; null when none is named); with --fit-latency also latency_factor (x the model's latencies), fitted_time_us, "
                     "fitted_error_pct and fitted_on (the factor was fitted on this size: every size, or with "
                     "--anchor the N smallest).")
    parser.set_defaults(handler=_validate)


def _validate(args: argparse.Namespace) -> list[dict[str, Any]] | str:
    from multigpu.cli.output import Failed, render
    from multigpu.evidence import deployment, diagnosis, health, nccltests
    from multigpu.hardware import catalog

    catalog.system(args.system)
    if args.anchor is not None and not args.fit_latency:
        raise InputError("--anchor needs --fit-latency")
    log, rows = nccltests.compare(args.nccl_tests, args.system, op=args.op, gpus=args.gpus, nodes=args.nodes,
                                  nvls=args.nvls)
    checks = health.check(np.array([r.bytes for r in rows], dtype=float), np.array([r.measured_time_us for r in rows]),
                          np.array([r.predicted_time_us for r in rows]), log.nodes)
    setup, found = _diagnosis(log, args, rows)
    named = (diagnosis.times_us(setup, np.array([r.bytes for r in rows], dtype=float), found.named).tolist()
             if found.named else [None] * len(rows))
    out = [{**r.to_dict(), "expected_low_us": c.low_us, "expected_high_us": c.high_us, "expected": c.status,
            "diagnosis": found.named or "", "diagnosis_time_us": t} for r, c, t in zip(rows, checks, named)]
    head = (f"{log.op} on {log.ranks} GPUs over {log.nodes} node(s) of {args.system}: median |error| "
            f"{_median_abs(rows)}, worst {max(abs(r.error_pct) for r in rows):.1f} % over {len(rows)} sizes\n"
            f"health: {health.summary(checks)}\ndiagnosis: {diagnosis.finding(found)}")
    if log.settings.changed:
        head += "\nas the log says the run set NCCL: " + ", ".join(f"{k}={v}" for k, v in log.settings.changed)
    if log.gpus_per_thread > 1:
        head += (f"\none thread drove {log.gpus_per_thread} GPUs (nGpus {log.gpus_per_thread}): each collective "
                 f"takes at least {log.gpus_per_thread} kernel launches")
    if args.fit_latency:
        used = _anchors(log, args.anchor, args.nccl_tests)
        factor = nccltests.latency_factor(log, args.system, used=used, nvls=args.nvls)
        _, fitted = nccltests.compare(args.nccl_tests, args.system, op=log.op, gpus=log.ranks, nodes=log.nodes,
                                      cal=deployment.scaled(factor), nvls=args.nvls)
        out = [{**row, "latency_factor": factor, "fitted_time_us": f.predicted_time_us,
                "fitted_error_pct": f.error_pct, "fitted_on": bool(u)} for row, f, u in zip(out, fitted, used)]
        if args.anchor is None:
            head += (f"\nwith this log's own latency (every latency of the model x {factor:.2f}, fitted on these "
                     f"sizes, so in sample): median |error| {_median_abs(fitted)}")
        else:
            unseen = [f for f, u in zip(fitted, used) if not u]
            head += (f"\nwith a latency factor fitted on the {args.anchor} smallest sizes only (every latency of "
                     f"the model x {factor:.2f}): median |error| {_median_abs(unseen)} on the other "
                     f"{len(unseen)} sizes")
    failed = args.strict and health.fails(checks)
    if args.format != "table":
        return Failed(out) if failed else out
    hidden = {"latency_factor", "diagnosis"} | (set() if found.named else {"diagnosis_time_us"})
    shown = [{k: f"{v:+.1f}" if k.endswith("error_pct") else v for k, v in row.items() if k not in hidden}
             for row in out]  # the factor and the diagnosis are in the heading
    text = f"{head}\n\n{render(shown, 'table')}"
    return Failed(text) if failed else text


def _diagnosis(log, args: argparse.Namespace, rows: list):
    """(the setup the log was meant to run, the diagnosis of its sizes) (:mod:`multigpu.evidence.diagnosis`)."""
    from multigpu.evidence import diagnosis

    settings = log.settings
    setup = diagnosis.Setup(args.system, log.op, log.ranks, log.nodes or 1,
                            settings.algorithm if settings.algorithm in collectives.VALID[log.op] else "auto",
                            settings.protocol, args.nvls and settings.nvls, log.gpus_per_thread)
    return setup, diagnosis.diagnose(setup, np.array([r.bytes for r in rows], dtype=float),
                                     np.array([r.measured_time_us for r in rows], dtype=float))


def _anchors(log, anchor: int | None, path: str) -> np.ndarray:
    """The mask of the log's points a latency factor is fitted on: all, or the ``anchor`` smallest sizes
    (:func:`multigpu.evidence.deployment.anchors`), leaving at least one size to judge it on."""
    from multigpu.evidence import deployment

    sizes = np.array([p.bytes for p in log.points], dtype=float)
    if anchor is None:
        return np.ones(len(sizes), dtype=bool)
    used = deployment.anchors(sizes, anchor) if anchor < len(sizes) else None
    if used is None:
        raise InputError(f"--anchor {anchor} needs {anchor} sizes of at most {deployment.ANCHOR_MAX_BYTES} bytes "
                         f"and at least one size more; the log has {len(sizes)}, "
                         f"{int((sizes <= deployment.ANCHOR_MAX_BYTES).sum())} of them that small", path)
    return used


def _median_abs(rows: list) -> str:
    """The median |error_pct| of comparison ``rows``, as text."""
    return f"{statistics.median(abs(r.error_pct) for r in rows):.1f} %"
