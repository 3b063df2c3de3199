"""The package's layers import one way, and only the edges read the environment."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "multigpu"
LAYERS = ("common", "hardware", "comm", "compute", "market", "evidence", "book", "cli")
#: The edges: the only modules that may read environment variables.
EDGES = {PACKAGE / "book" / "inputs.py", PACKAGE / "book" / "build.py"}


def test_the_import_linter_contracts_are_kept():
    """Three contracts: the layers import one way, no circle runs between the modules inside any package, and no
    page module imports another (two known exceptions are listed in pyproject.toml)."""
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=PACKAGE.parents[1])
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 kept, 0 broken" in out.stdout and "No circles" in out.stdout and "Pages are independent" in out.stdout


def test_the_acyclic_contract_catches_a_circle(tmp_path):
    """The circle contract is not vacuous: a package whose two modules import each other breaks it."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from pkg import a\n")
    (tmp_path / "setup.cfg").write_text("[importlinter]\nroot_package = pkg\n\n[importlinter:contract:1]\n"
                                        "name = No circles\ntype = acyclic_siblings\nancestors = pkg\n")
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(tmp_path)})
    assert out.returncode == 1 and "BROKEN" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("lower, upper", [(LAYERS[i], LAYERS[j]) for i in range(len(LAYERS))
                                          for j in range(i + 1, len(LAYERS))])
def test_no_layer_imports_a_layer_above_it(lower, upper):
    # the same rule as the contract, read from the source, so a failure names the file and line
    pattern = re.compile(rf"^\s*(from|import) multigpu\.{upper}\b", re.M)
    for path in (PACKAGE / lower).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        match = pattern.search(text)
        assert match is None, f"{path.relative_to(PACKAGE)}:{text[:match.start()].count(chr(10)) + 1}"


def test_only_the_edges_read_the_environment():
    readers = {path for path in PACKAGE.rglob("*.py")
               if re.search(r"os\.environ|os\.getenv|getenv\(", path.read_text(encoding="utf-8"))}
    assert readers <= EDGES, sorted(str(p.relative_to(PACKAGE)) for p in readers - EDGES)
