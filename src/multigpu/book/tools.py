"""Executing the book's notebooks in place, with deterministic outputs.

``python -m multigpu.book.tools execute book/chapters/*.ipynb`` runs notebooks
top to bottom and stores their outputs without timestamps, so that nbval can
compare them and two runs give the same file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def execute(path: Path, timeout_s: int = 600) -> None:
    """Execute one notebook in its own folder and write it back with deterministic metadata."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(notebook, timeout=timeout_s, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m multigpu.book.tools", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("execute", help="execute notebooks in place, outputs stored deterministically")
    run.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    for path in args.notebooks:
        print(f"executing {path} ...", file=sys.stderr, flush=True)
        execute(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
