"""``python -m multigpu search``: every parallel layout of a training job, ranked by step time."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from multigpu import selection
from multigpu.commands.workload import add_training_job


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "search", "search every layout (tp, pp, dp, micro-batch, interleave, "
                         "recompute, sequence parallel) of a training job; times in s")
    add_training_job(parser)
    parser.add_argument("--top", type=int, default=1, help="also list the K best layouts")
    parser.set_defaults(handler=_search)


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rsearching layouts: {done}/{total} option sets" + ("\n" if done == total else ""))
    sys.stderr.flush()


def _search(args: argparse.Namespace) -> dict[str, Any] | list[dict[str, Any]]:
    show = args.format == "table" and sys.stderr.isatty()
    result = selection.search(args.model, args.system, args.gpus, args.global_batch, args.seq, dtype=args.dtype,
                              top=max(args.top, 1), progress=_progress if show else None)
    result.pop("table")
    if args.format == "table":  # one row per layout, with the search's totals on each
        summary = {k: result[k] for k in ("evaluated", "valid", "seconds")}
        return [{"rank": i + 1, **row, **summary} for i, row in enumerate(result["top"])]
    if args.top <= 1:
        result.pop("top")
    return result
