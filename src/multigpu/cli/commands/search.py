"""``python -m multigpu search``: every parallel layout of a training job, ranked by step time."""

from __future__ import annotations

import argparse
from typing import Any

from multigpu.cli import args as types
from multigpu.cli.commands.step import add_grad_dtype, add_training_job, add_training_stack
from multigpu.cli.progress import progress
from multigpu.market import search


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "search", "search every layout (tp, pp, dp, ep for a mixture-of-experts "
                         "model, cp for sequences of 8,192 tokens or more, micro-batch, interleave, recompute, "
                         "sequence parallel) of a training job; times in s")
    add_training_job(parser)
    parser.add_argument("--top", type=types.count, default=1, help="also list the K best layouts")
    parser.add_argument("--zero", type=int, choices=(1, 3), action="append",
                        help="ZeRO stage(s) to search (repeatable; default: 1 and 3)")
    add_grad_dtype(parser)
    add_training_stack(parser)
    parser.set_defaults(handler=_search)


def _search(args: argparse.Namespace) -> dict[str, Any] | list[dict[str, Any]]:
    with progress("searching layouts: option sets") as update:
        found = search.train(args.model, args.system, args.gpus, args.global_batch, args.seq, dtype=args.dtype,
                             zero_stages=tuple(sorted(set(args.zero or search.ZERO_STAGES))), top=args.top,
                             progress=update, grad_dtype=args.grad_dtype, stack=args.stack)
    top = [layout.to_dict() for layout in found.top]
    summary = {"evaluated": found.evaluated, "valid": found.valid, "seconds": found.seconds}
    if args.format == "table":  # one row per layout, with the search's totals on each; or why none fits
        return [{"rank": i + 1, **row, **summary} for i, row in enumerate(top)] or [{**summary, "reason": found.reason}]
    result = {"model": found.model, "system": found.system, "gpus": found.gpus, "global_batch": found.global_batch,
              "seq": found.seq, "grad_dtype": found.grad_dtype, "stack": found.stack, **summary, "layouts_per_s": found.layouts_per_s,
              "best": top[0] if top else None, "reason": found.reason}
    if args.top > 1:
        result["top"] = top
    return result
