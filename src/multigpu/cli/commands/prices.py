"""``python -m multigpu prices check|template|list|diff|history``: the analyst's price file.

``check FILE`` validates a price file and prints a one-line summary;
``template`` prints the default price file, byte for byte, as a starting point;
``list`` shows the validated offers with their USD per GPU-hour;
``diff OLD NEW`` says what changes from one price file to another;
``history`` shows the premium charged for NVLink over PCIe in dated list prices too old to be offers
(:mod:`multigpu.market.history`).
"""

from __future__ import annotations

import argparse
import math
import sys
from datetime import date
from typing import Any

_EPILOG = ("Price file columns: provider, instance, gpu, gpus_per_instance, interconnect, price_per_hour "
           "(per instance, in currency), currency, pricing (on-demand|spot|reserved|community), observed "
           "(YYYY-MM-DD), source; optional: region, system, provider_type, notes; other columns are kept as text. "
           "Lines starting with # are comments. Every problem of a file is reported at once (file:line: column); "
           "warnings (valid but suspect values) go to stderr with exit status 0. MULTIGPU_PRICES=file sets the "
           "price file, MULTIGPU_FX=file the exchange-rate table.")
#: ``prices history`` fields: the pair's provider, list date (ISO) and pricing type, the GPU both instances hold,
#: its memory per GPU (as the vendor states it: GB read as GiB, like the catalogue's ``memory_GB``) and count,
#: each instance and its price per instance-hour in ``currency``, the premium charged (%) and the page it was
#: listed on.
_HISTORY_COLUMNS = ("provider", "observed", "pricing", "gpu", "memory_GB_per_gpu", "gpus_per_instance",
                    "nvlink_instance", "nvlink_price_per_hour", "pcie_instance", "pcie_price_per_hour", "currency",
                    "premium_pct", "source")
#: ``prices history`` fields named otherwise on :class:`multigpu.market.history.PastPremium`.
_HISTORY_ATTRIBUTES = {"gpu": "gpu_name"}
_TABLE_COLUMNS = ("provider", "instance", "gpu", "gpus_per_instance", "interconnect", "system", "pricing",
                  "price_per_hour", "currency", "observed", "price_per_gpu_hour_usd")


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "prices", "the price file: check one, print the template, "
                         "list offers in USD per GPU-hour")
    parser.epilog = _EPILOG
    actions = parser.add_subparsers(dest="prices_action", metavar="ACTION", required=True)
    check = _add(actions, add_command, "check", "validate a price file; print offers, providers, date range")
    check.add_argument("file", metavar="FILE", help="the price file (CSV)")
    check.set_defaults(handler=_check)
    template = _add(actions, add_command, "template", "print the default price file (CSV) with every column, "
                    "required and optional, documented in comment lines")
    template.set_defaults(handler=_template)
    listing = _add(actions, add_command, "list", "list validated offers with price_per_gpu_hour_usd (USD per GPU-hour)")
    listing.add_argument("--prices", metavar="FILE", help="price file (default: $MULTIGPU_PRICES or the packaged one)")
    listing.set_defaults(handler=_list)
    diff = _add(actions, add_command, "diff", "what changes from one price file to another: offers added, removed "
                "and repriced, and the picks, break-even premiums and verdicts that move")
    diff.add_argument("old", metavar="OLD", help="the earlier price file")
    diff.add_argument("new", metavar="NEW", help="the later price file")
    diff.set_defaults(handler=_diff)
    past = _add(actions, add_command, "history", "the premium charged for NVLink over PCIe in dated list prices too "
                "old to price today's market (data/price_history.csv): one row per same-day pair, with "
                f"{', '.join(_HISTORY_COLUMNS)}")
    past.set_defaults(handler=_history)


def _add(actions: argparse._SubParsersAction, add_command, name: str, help_text: str) -> argparse.ArgumentParser:
    """A sub-command of ``prices`` whose ``--format`` keeps a value given before it (``prices --format json list``)."""
    parser = add_command(actions, name, help_text)
    parser.epilog = _EPILOG
    for action in parser._actions:
        if action.dest == "format":
            action.default = argparse.SUPPRESS
    return parser


def _check(args: argparse.Namespace) -> dict[str, Any] | str:
    from multigpu.cli.edge import price_table

    table = price_table(args.file)
    providers = set(table.offers["provider"])
    stamp = table.stamp()
    summary = {"file": args.file, "offers": stamp["offers"], "providers": len(providers),
               "observed_from": stamp["observed_from"], "observed_to": stamp["observed_to"],
               "sha256_12": stamp["sha256_12"], "warnings": [str(w) for w in table.warnings],
               "notes": list(table.notes)}
    if args.format != "table":
        return summary
    warned = f", {len(table.warnings)} warning{'s' if len(table.warnings) != 1 else ''}" if table.warnings else ""
    notes = "".join(f"\nnote: {note}" for note in table.notes)
    return (f"{args.file}: ok, {summary['offers']} offers from {summary['providers']} providers, observed "
            f"{summary['observed_from']} to {summary['observed_to']} (sha256 {summary['sha256_12']}){warned}{notes}")


def _template(args: argparse.Namespace) -> str:
    from multigpu.market.prices import template

    if hasattr(sys.stdout, "reconfigure"):  # byte for byte, whatever the locale
        sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    return template()


def _list(args: argparse.Namespace) -> list[dict[str, Any]] | str:
    from multigpu.cli.edge import price_table
    from multigpu.cli.output import render

    table = price_table(args.prices)
    frame = table.offers
    rows = [{key: _plain(value) for key, value in row.items()} for row in frame.to_dict("records")]
    if args.format != "table":
        return rows
    text = render([{c: row[c] for c in _TABLE_COLUMNS} for row in rows], "table")
    return f"{table.stamp_markdown()}\n\n{text}"


def _diff(args: argparse.Namespace) -> list[dict[str, Any]] | dict[str, Any] | str:
    from multigpu.cli.edge import price_table
    from multigpu.cli.output import render
    from multigpu.evidence import pricediff

    old, new = price_table(args.old), price_table(args.new)
    changes = [c.to_dict() for c in pricediff.diff(old, new)]
    if args.format == "json":
        sections: dict[str, Any] = {"old": old.stamp(), "new": new.stamp()}
        for section in ("offers", "picks", "break-even", "verdicts"):
            sections[section] = [{k: v for k, v in c.items() if k != "section"} for c in changes
                                 if c["section"] == section]
        return sections
    if args.format == "csv":
        return changes
    if not changes:
        return f"{old.stamp_markdown()}\n{new.stamp_markdown()}\nNo offer, pick, premium or verdict changes."
    shown = [{**c, "change_pct": "" if c["change_pct"] is None else f"{c['change_pct']:+.1f} %"} for c in changes]
    return f"Old: {old.stamp_markdown()}\nNew: {new.stamp_markdown()}\n\n{render(shown, 'table')}"


def _history(args: argparse.Namespace) -> list[dict[str, Any]] | str:
    from multigpu.cli.output import render
    from multigpu.market import history

    rows = [{column: _plain(getattr(p, _HISTORY_ATTRIBUTES.get(column, column))) for column in _HISTORY_COLUMNS}
            for p in history.past_premiums()]
    for row in rows:
        row["premium_pct"] = round(row["premium_pct"], 2)
    if args.format != "table":
        return rows
    return render([{k: v for k, v in row.items() if k != "source"} for row in rows], "table")


def _plain(value: Any) -> Any:
    """A cell as a plain JSON-able value: dates as ISO text, NaN as None, numpy scalars as Python."""
    if isinstance(value, date):
        return value.isoformat()
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
