"""``python -m multigpu``: the analyst's command line.

Every sub-command takes ``--format table|json|csv`` (table by default). Bad
input is reported on stderr as one line, ``error: <file>:<line>: <what>``, with
exit status 2, and nothing is written to stdout. A check that the input fails
(``validate --strict``) prints its result and exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from multigpu import __version__
from multigpu.cli.commands import COMMAND_MODULES
from multigpu.cli.output import FORMATS, Failed, render
from multigpu.common.errors import InputError

EXIT_BAD_INPUT = 2
EXIT_CHECK_FAILED = 1


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.startswith("argument ") and ": " in message:  # a bad value: name the flag first
            flag, what = message.removeprefix("argument ").split(": ", 1)
            raise InputError(f"{flag.split('/')[-1]}: {what}")
        raise InputError(f"{self.prog}: {message}")


def add_command(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    """Add a sub-command that takes the common ``--format`` option."""
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The parser with every sub-command of :data:`multigpu.cli.commands.COMMAND_MODULES`."""
    parser = _Parser(prog="python -m multigpu", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"multigpu {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in COMMAND_MODULES:
        module.register(subparsers, add_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 on success, 1 for a failed check, 2 on bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        result = args.handler(args)
    except InputError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return EXIT_BAD_INPUT
    failed = isinstance(result, Failed)
    result = result.result if failed else result
    text = result if isinstance(result, str) else render(result, args.format)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_CHECK_FAILED if failed else 0
