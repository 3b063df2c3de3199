"""``python -m multigpu cost``: what a named workload costs on every offer of a price file.

``cost --workload ID [--prices FILE]`` prints one row per offer, ranked by
cost: a training job in USD per job, a serving target in USD per million
output tokens (``cost_unit``). Offers whose system cannot run the workload are
listed last with ``feasible`` false and the reason. ``cost --list-workloads``
lists the workload ids.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from multigpu.cli import args as types
from multigpu.market import workloads

#: Columns of the table format (json and csv carry every column of multigpu.market.cost.COST_COLUMNS).
_TABLE_COLUMNS = ("rank", "provider", "instance", "gpu", "gpus", "interconnect", "pricing", "price_per_gpu_hour_usd",
                  "layout", "time_h", "cost_usd", "feasible", "system")


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "cost", "cost of a named workload on every offer of a price file "
                         "(USD per training job, or per million output tokens for serving), ranked")
    parser.add_argument("--workload", metavar="ID", help="workload id (see --list-workloads)")
    parser.add_argument("--prices", metavar="FILE",
                        help="price file (default: $MULTIGPU_PRICES or the packaged one)")
    parser.add_argument("--utilisation", type=types.fraction, default=1.0,
                        help="fraction of rented time doing useful work, in (0, 1] (default 1)")
    parser.add_argument("--list-workloads", action="store_true", help="list the workload ids and exit")
    parser.add_argument("--interval", type=types.level, metavar="P",
                        help="also give the prediction interval at level P (such as 0.9) of time_h, gpu_hours, "
                             "cost_usd and cost (<field>_lo, <field>_hi), with interval_level and interval_regime: "
                             "a training job's from the interval of a step time, a serving target's from that of a "
                             "throughput per GPU, both calibrated on published runs (a minimum lease is still paid)")
    parser.epilog = ("Fields: offer, provider, instance, gpu, gpus (per instance), interconnect, interconnect_class, "
                     "system, pricing, price_per_gpu_hour_usd, feasible, reason, layout, job_gpus, instances, time_h "
                     "(training: wall-clock hours of the job; serving: GPU-hours per million output tokens), "
                     "gpu_hours, cost_usd, cost (in the offer's currency), cost_unit, rank; with --interval P "
                     "also time_h_lo, time_h_hi, gpu_hours_lo, gpu_hours_hi, cost_usd_lo, cost_usd_hi, cost_lo, "
                     "cost_hi, interval_level and interval_regime (empty for an offer that cannot run it).")
    parser.set_defaults(handler=_cost)


def _cost(args: argparse.Namespace) -> list[dict[str, Any]] | str:
    from multigpu.cli.edge import price_table
    from multigpu.cli.output import render
    from multigpu.cli.progress import progress
    from multigpu.common.errors import InputError
    from multigpu.market import cost

    if args.list_workloads:
        rows = [{"id": w.id, "kind": w.kind, "model": w.model, "title": w.title}
                for w in workloads.workloads_table().values()]
        return rows if args.format != "table" else render(rows, "table")
    if not args.workload:
        raise InputError("cost: give --workload ID (python -m multigpu cost --list-workloads lists them)")
    workload = workloads.workload(args.workload)
    table = price_table(args.prices)
    with progress(f"cost: {workload.id}, offers") as update:
        frame = cost.offer_costs(workload.id, table, utilisation=args.utilisation, progress=update)
    frame = frame.assign(_order=frame["rank"].fillna(len(frame) + 1).astype(int)).sort_values(
        ["_order", "offer"], kind="stable").drop(columns="_order")
    if args.interval is not None:
        frame = _with_interval(frame, workload.kind, args.interval, args.utilisation)
    rows = [{key: _plain(value) for key, value in row.items()} for row in frame.to_dict("records")]
    if args.format != "table":
        return rows
    shown = [{c: row[c] for c in _TABLE_COLUMNS} for row in rows]
    infeasible = [f"  offer {row['offer']} ({row['provider']}, {row['instance']}): {row['reason']}"
                  for row in rows if not row["feasible"]]
    notes = "\n\nInfeasible:\n" + "\n".join(infeasible) if infeasible else ""
    return (f"{table.stamp_markdown()}\nWorkload {workload.id}: {workload.title}; cost_usd in "
            f"{workload.cost_unit}, time_h = " + ("wall-clock hours of the job" if workload.kind == "train"
                                                  else "GPU-hours per million output tokens")
            + f".\n\n{render(shown, 'table')}{notes}")


def _with_interval(frame, kind: str, level: float, utilisation: float):
    """``frame`` with the prediction interval of its hours and costs (see ``--interval``)."""
    from multigpu.common.errors import InputError
    from multigpu.evidence import intervals  # the published runs, only when asked

    try:
        return intervals.cost_bounds(frame, [kind] * len(frame), level, utilisation)
    except ValueError as exc:
        raise InputError(f"--interval {level:g}: {exc}") from None


def _plain(value: Any) -> Any:
    """A cell as a plain JSON-able value: NaN and NA as None, numpy scalars as Python."""
    if value is None:
        return None
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
