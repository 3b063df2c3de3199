"""``python -m multigpu size``: how the CLI reads a size (bytes, GB, GiB)."""

from __future__ import annotations

import argparse

from multigpu.common.units import parse_size


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "size", "convert a size such as 256MB or 1GiB to bytes")
    parser.add_argument("sizes", nargs="+", help="sizes: 4096, 256MB (1e6 bytes), 1GiB (2^30 bytes)")
    parser.set_defaults(handler=_size)


def _size(args: argparse.Namespace) -> list[dict]:
    return [{"size": text, "bytes": parse_size(text), "GB": parse_size(text) / 1e9,
             "GiB": parse_size(text) / 2**30} for text in args.sizes]
