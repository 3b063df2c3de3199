"""``python -m multigpu models``: the model shapes the CLI, the cost model and the book know by id."""

from __future__ import annotations

import argparse
from typing import Any

from multigpu.compute import models

#: Columns of the table format (json and csv carry every field of data/models.csv, plus parameter counts).
_TABLE = ("id", "name", "params_B", "active_params_B", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
          "experts", "experts_per_token", "attention", "vocab")


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "models", "the model ids and their shapes (layers, widths, heads, experts), "
                         "with parameters in billions (1e9) as the model counts them")
    parser.set_defaults(handler=_models)


def _models(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = [{**m.to_dict(), "params_B": m.params_total / 1e9, "active_params_B": m.params_active / 1e9}
            for m in models.models().values()]
    return [{k: r[k] for k in _TABLE} for r in rows] if args.format == "table" else rows
