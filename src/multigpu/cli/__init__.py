"""The command-line interface: ``python -m multigpu`` (the top layer; it may use every other)."""

from multigpu.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
