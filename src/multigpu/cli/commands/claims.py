"""``python -m multigpu claims``: the starting article's claims, each with the model's verdict."""

from __future__ import annotations

import argparse
from typing import Any

from multigpu.evidence import claims


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "claims", "verdicts on the article's claims (C01-C27): seed value, "
                         "model value with its unit, explanation, and the chapter that shows the work")
    parser.add_argument("ids", nargs="*", help="claim ids (default: all)")
    parser.add_argument("--prices", metavar="FILE",
                        help="price file for the cost claims (default: $MULTIGPU_PRICES or the packaged one)")
    parser.set_defaults(handler=_claims)


def _claims(args: argparse.Namespace) -> list[dict[str, Any]]:
    from multigpu.cli.edge import price_table

    inputs = claims.Inputs(prices=price_table(args.prices))
    verdicts = [claims.check(i, inputs) for i in args.ids] if args.ids else claims.check_all(inputs)
    rows = [v.to_dict() for v in verdicts]
    if args.format == "table":  # the explanation is a paragraph: keep the table readable
        return [{k: v for k, v in row.items() if k != "explanation"} for row in rows]
    return rows
