"""``python -m multigpu recommend``: ranked instances and layouts for a training job or a serving target.

``recommend --train MODEL --tokens T`` tries every offer of the price file
with 1, 2, 4, ... instances (up to ``--max-gpus`` GPUs) and the fastest layout
on each, and ranks them by cost per job (or by time with ``--rank time``);
``--method full`` plans a full fine-tune and ``--method lora --lora-rank R``
a LoRA fine-tune with rank-R adapters (default: pre-training).
``recommend --serve MODEL --tokens-per-s-per-user R --requests-per-s Q``
rents, per offer, the instances that carry Q queries per second with every
user seeing at least R tokens per second, and ranks them by cost per hour.
Options that miss ``--deadline-h``, ``--budget`` or ``--max-gpus`` are listed
after the feasible ones, offers that cannot run the job last, each with its
reason.
"""

from __future__ import annotations

import argparse
from typing import Any

#: Columns of the table format (json and csv carry every column of multigpu.market.recommend).
_TRAIN_TABLE = ("rank", "provider", "instance", "gpu", "interconnect", "instances x GPUs", "layout", "time_h",
                "cost_usd", "feasible", "reason")
_SERVE_TABLE = ("rank", "provider", "instance", "gpu", "interconnect", "instances x GPUs", "layout",
                "capacity_tokens_per_s", "cost_per_hour_usd", "cost_per_million_tokens_usd", "feasible", "reason")
#: Decimals of the rounded numbers in the table format.
_DECIMALS = {"time_h": 1, "cost_usd": 0, "capacity_tokens_per_s": 0, "cost_per_hour_usd": 2,
             "cost_per_million_tokens_usd": 3, "ttft_p99_s": 2, "tpot_p99_ms": 0}

from multigpu.cli import args as types
from multigpu.compute import inference
from multigpu.compute.layout import DEFAULT_TRAINING_STACK, TRAINING_DTYPES, TRAINING_STACKS


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "recommend", "rank offers x instance counts x layouts for a training job "
                         "(USD per job, hours) or a serving target (USD per hour and per million output tokens)")
    parser.add_argument("--prices", metavar="FILE",
                        help="price file (default: $MULTIGPU_PRICES or the packaged one)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--train", metavar="MODEL", help="model to train: " + types.MODEL_HELP)
    what.add_argument("--serve", metavar="MODEL", help="model to serve: " + types.MODEL_HELP)
    parser.add_argument("--tokens", metavar="T", help="training tokens, e.g. 2e11, 200B, 1.5T (with --train)")
    parser.add_argument("--tokens-per-s-per-user", metavar="R", type=types.positive,
                        help="output tokens per second each user must see (with --serve)")
    parser.add_argument("--requests-per-s", metavar="Q", type=types.positive, help="queries per second to carry (with --serve)")
    parser.add_argument("--max-ttft-s", metavar="S", type=types.positive,
                        help="the longest time to first token a user may wait, seconds (with --serve; default: none)")
    parser.add_argument("--ttft-p99-s", metavar="S", type=types.positive,
                        help="size for random arrivals (with --serve): an instance carries only the requests per "
                             "second whose 99th percentile of time to first token stays within S seconds and of "
                             "time per output token within the per-user floor, from the simulation of in-flight "
                             "batching (infer --rate); adds ttft_p99_s and tpot_p99_ms at each copy's share of the "
                             "load (default: none, the steady-state capacity)")
    parser.add_argument("--stack", choices=(*TRAINING_STACKS, *inference.STACKS), default=None,
                        help="with --train, the training stack the layouts are searched under (default "
                             f"{DEFAULT_TRAINING_STACK}; see train --help); with --serve, the serving stack, which "
                             f"decides the tensor-parallel all-reduce kernels (default {inference.DEFAULT_STACK}; see "
                             "infer --help); output stack")
    parser.add_argument("--max-gpus", metavar="N", type=types.count, default=None,
                        help="the most GPUs an option may rent (default 1024)")
    parser.add_argument("--deadline-h", metavar="H", type=types.positive, help="training must finish within H hours")
    parser.add_argument("--budget", metavar="X", type=types.positive,
                        help="USD per job (training) or per hour (serving); dearer options are infeasible")
    parser.add_argument("--input-tokens", metavar="I", type=types.count, default=None,
                        help="prompt tokens per query (serving; default 8192)")
    parser.add_argument("--output-tokens", metavar="O", type=types.count, default=None,
                        help="output tokens per query (serving; default 256)")
    parser.add_argument("--method", choices=("pretrain", "full", "lora"), default=None,
                        help="training method: pretrain (default), full (fine-tune every weight) or lora "
                             "(with --train)")
    parser.add_argument("--lora-rank", metavar="R", type=types.count, default=None,
                        help="the LoRA adapters' rank, a whole number > 0 (needed with --method lora, refused "
                             "otherwise)")
    parser.add_argument("--seq", type=types.count, default=None, help="tokens per training sequence (default 4096)")
    parser.add_argument("--global-batch", type=types.count, default=None,
                        help="sequences per training step (default: ~1M, 2M or 4M tokens by model size)")
    parser.add_argument("--dtype", choices=tuple(dict.fromkeys((*TRAINING_DTYPES, *inference.DTYPES))), default="bf16",
                        help="with --train, the training precision (train --dtype: bf16, fp16, fp8, tf32, fp32); with "
                             "--serve, the weights' format (infer --dtype: bf16, fp16, fp8, fp4, mxfp4); default bf16")
    parser.add_argument("--pricing", choices=("on-demand", "spot", "reserved", "community"),
                        help="only offers of this pricing type (default: all; prices of different types are "
                             "not like for like)")
    parser.add_argument("--rank", choices=("cost", "time"), default="cost", dest="rank_by",
                        help="rank by cost (default) or by time (training: hours; serving: ms per output token)")
    parser.add_argument("--top", metavar="K", type=types.nonnegative_count, default=0, help="print only the K first options (0: all)")
    parser.add_argument("--interval", type=types.level, metavar="P",
                        help="also give each feasible option's prediction interval at level P (such as 0.9), "
                             "calibrated on published runs (<field>_lo, <field>_hi, interval_level, "
                             "interval_regime): training's step_time_s, time_h and cost_usd from the interval of a "
                             "step time, and mfu the other way; serving's capacity_tokens_per_s and "
                             "capacity_requests_per_s from that of a throughput per GPU, with the instances, "
                             "cost_per_hour_usd and cost_per_million_tokens_usd that carry the same demand at "
                             "each end")
    parser.epilog = ("Fields (training): rank, offer, provider, instance, gpu, interconnect, interconnect_class, "
                     "system, pricing, instances, gpus_per_instance, gpus, layout, tp, pp, dp, ep, micro_batch, "
                     "interleave, recompute, sequence_parallel, zero_stage, global_batch, seq, stack, step_time_s, mfu, "
                     "exposed_comm_pct, memory_per_gpu_GB, time_h, price_per_gpu_hour_usd, cost_usd, feasible, "
                     "reason. Serving: ... layout, tp, batch, replicas, tokens_per_s_per_user, tpot_ms, "
                     "capacity_tokens_per_s, capacity_requests_per_s, load_pct, price_per_gpu_hour_usd, "
                     "cost_per_hour_usd, cost_per_million_tokens_usd, feasible, reason; with --ttft-p99-s, "
                     "ttft_p99_s and tpot_p99_ms (ms) after tpot_ms. With --interval P, each "
                     "bracketed field's <field>_lo and <field>_hi (empty for an option that cannot run), "
                     "interval_level and interval_regime.")
    parser.set_defaults(handler=_recommend)


def _check(args: argparse.Namespace) -> None:
    from multigpu.common.errors import InputError

    if not args.train and not args.serve:
        raise InputError("recommend: give --train MODEL --tokens T, or --serve MODEL --tokens-per-s-per-user R "
                         "--requests-per-s Q")
    train_only = {"--tokens": args.tokens, "--deadline-h": args.deadline_h, "--seq": args.seq,
                  "--global-batch": args.global_batch, "--method": args.method, "--lora-rank": args.lora_rank}
    serve_only = {"--tokens-per-s-per-user": args.tokens_per_s_per_user, "--requests-per-s": args.requests_per_s,
                  "--input-tokens": args.input_tokens, "--output-tokens": args.output_tokens,
                  "--max-ttft-s": args.max_ttft_s, "--ttft-p99-s": args.ttft_p99_s}
    if args.train:
        if args.tokens is None:
            raise InputError("recommend: --train needs --tokens T (e.g. 2e11)")
        if args.method == "lora" and args.lora_rank is None:
            raise InputError("recommend: --method lora needs --lora-rank R (e.g. 16)")
        if args.method != "lora" and args.lora_rank is not None:
            raise InputError(f"recommend: --lora-rank needs --method lora (method is {args.method or 'pretrain'})")
        wrong = [k for k, v in serve_only.items() if v is not None]
        if args.stack is not None and args.stack not in TRAINING_STACKS:
            raise InputError(f"recommend: --stack {args.stack} is a serving stack; with --train give one of "
                             f"{', '.join(TRAINING_STACKS)}")
        if args.dtype not in TRAINING_DTYPES:
            raise InputError(f"recommend: --dtype {args.dtype} is a serving format; with --train give one of "
                             f"{', '.join(TRAINING_DTYPES)}")
    else:
        if args.stack is not None and args.stack not in inference.STACKS:
            raise InputError(f"recommend: --stack {args.stack} is a training stack; with --serve give one of "
                             f"{', '.join(inference.STACKS)}")
        if args.dtype not in inference.DTYPES:
            raise InputError(f"recommend: --dtype {args.dtype} is a training precision; with --serve give one of "
                             f"{', '.join(inference.DTYPES)}")
        missing = [k for k in ("--tokens-per-s-per-user", "--requests-per-s") if serve_only[k] is None]
        if missing:
            raise InputError(f"recommend: --serve needs {' and '.join(missing)}")
        wrong = [k for k, v in train_only.items() if v is not None]
    if wrong:
        raise InputError(f"recommend: {', '.join(wrong)} do{'es' if len(wrong) == 1 else ''} not apply to "
                         f"--{'train' if args.train else 'serve'}")
    if args.top < 0:
        raise InputError(f"recommend: --top {args.top} must be 0 (all) or more")


def _recommend(args: argparse.Namespace) -> list[dict[str, Any]] | str:
    from multigpu.cli.edge import price_table
    from multigpu.cli.progress import progress
    from multigpu.common.errors import InputError
    from multigpu.market import recommend

    _check(args)
    table = stamped = price_table(args.prices)
    if args.pricing:
        table = table.of_pricing(args.pricing)
        if table.offers.empty:
            raise InputError(f"recommend: the price file has no {args.pricing} offers")
    max_gpus = recommend.DEFAULT_MAX_GPUS if args.max_gpus is None else args.max_gpus
    with progress("recommend: offers searched") as update:
        options = _options(args, recommend, table, max_gpus, update)
    if args.interval is not None:
        options = _with_interval(options, args.interval)
    rows = recommend.records(options, args.top)
    if args.format != "table":
        return rows
    return f"{stamped.stamp_markdown()}\n{_header(options)}\n\n{_table(rows, bool(args.train))}"


def _options(args: argparse.Namespace, recommend: Any, table: Any, max_gpus: int, update: Any) -> Any:
    """The recommender's ranked options for ``--train`` or ``--serve``."""
    if args.train:
        seq = recommend.DEFAULT_SEQ if args.seq is None else args.seq
        return recommend.train(args.train, args.tokens, table, max_gpus=max_gpus, deadline_h=args.deadline_h,
                               budget_usd=args.budget, seq=seq, global_batch=args.global_batch, dtype=args.dtype,
                               rank_by=args.rank_by, progress=update, method=args.method or "pretrain",
                               lora_rank=args.lora_rank or 0, stack=args.stack or DEFAULT_TRAINING_STACK)
    input_tokens = recommend.DEFAULT_INPUT_TOKENS if args.input_tokens is None else args.input_tokens
    output_tokens = recommend.DEFAULT_OUTPUT_TOKENS if args.output_tokens is None else args.output_tokens
    return recommend.serve(args.serve, args.tokens_per_s_per_user, args.requests_per_s, table,
                           input_tokens=input_tokens, output_tokens=output_tokens, max_gpus=max_gpus,
                           budget_usd_per_hour=args.budget, dtype=args.dtype, rank_by=args.rank_by,
                           max_ttft_s=args.max_ttft_s, progress=update, stack=args.stack or inference.DEFAULT_STACK,
                           ttft_p99_s=args.ttft_p99_s)


def _with_interval(options: Any, level: float) -> Any:
    """``options`` with each feasible one's prediction interval (see ``--interval``)."""
    from multigpu.common.errors import InputError
    from multigpu.evidence import intervals  # the published runs, only when asked

    try:
        return intervals.option_bounds(options, level)
    except ValueError as exc:
        raise InputError(f"--interval {level:g}: {exc}") from None


def _header(options: Any) -> str:
    a = options.attrs
    feasible = int(options["feasible"].sum())
    counted = f"{len(options)} options from {a['offers']} offers, {feasible} feasible"
    if a["kind"] == "train":
        limits = [f"deadline {a['deadline_h']:g} h" for _ in [0] if a["deadline_h"] is not None]
        limits += [f"budget USD {a['budget_usd']:,.0f}" for _ in [0] if a["budget_usd"] is not None]
        what = {"full": "Fully fine-tune", "lora": f"LoRA (rank {a.get('lora_rank')}) fine-tune"}.get(
            a.get("method"), "Train")
        return (f"{what} {a['model']} on {a['tokens']:.3g} tokens: {a['steps']:,.0f} steps of {a['global_batch']} x "
                f"{a['seq']} tokens, up to {a['max_gpus']} GPUs"
                + (f", {', '.join(limits)}" if limits else "")
                + f"; {a['stack']} stack; ranked by {'USD per job' if a['rank_by'] == 'cost' else 'hours'}; "
                f"{counted}.")
    budget = (f", budget USD {a['budget_usd_per_hour']:,.2f} per hour" if a["budget_usd_per_hour"] is not None
              else "")
    tails = (f", first token within {a['ttft_p99_s']:g} s and the per-user floor at the 99th percentile under random "
             "arrivals" if a.get("ttft_p99_s") is not None else "")
    return (f"Serve {a['model']}: {a['requests_per_s']:g} queries/s of {a['input_tokens']} in / {a['output_tokens']} "
            f"out tokens, at least {a['tokens_per_s_per_user']:g} tokens/s per user{tails}, up to {a['max_gpus']} GPUs"
            f"{budget}; ranked by {'USD per hour' if a['rank_by'] == 'cost' else 'ms per output token'}; {counted}.")


def _decimals(column: str, value: float) -> str:
    return f"{value:,.{_DECIMALS[column]}f}"


def _table(rows: list[dict[str, Any]], training: bool) -> str:
    from multigpu.cli.output import render

    shown = []
    for row in rows:
        out = {}
        columns = _TRAIN_TABLE if training else _SERVE_TABLE
        if not training and "ttft_p99_s" in row:  # sized for random arrivals: their tails beside the capacity
            at = columns.index("capacity_tokens_per_s") + 1
            columns = columns[:at] + ("ttft_p99_s", "tpot_p99_ms") + columns[at:]
        for column in columns:
            if column == "instances x GPUs":
                value = (f"{row['instances']} x {row['gpus_per_instance']}" if row["instances"] is not None else "")
            else:
                value = row[column]
                if column in _DECIMALS and value is not None:
                    value = _decimals(column, value) if value == value else ""  # NaN: cannot run
                    if row.get(f"{column}_lo") is not None:  # with --interval: "x (lo–hi)"
                        low, high = (_decimals(column, row[f"{column}_{end}"]) for end in ("lo", "hi"))
                        value += f" ({low}–{high})"
            out[column] = value
        shown.append(out)
    return render(shown, "table")
