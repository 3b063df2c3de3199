"""The example errors printed in book/appendix/reproduce.md are what the CLI really prints."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {  # the example line in the page -> the test file that produces it
    "column 'price_per_hr'": "bad_misspelt_column.csv",
    "column 'gpu'": "bad_unknown_gpu.csv",
}


def documented_errors() -> list[str]:
    text = (ROOT / "book" / "appendix" / "reproduce.md").read_text(encoding="utf-8")
    return re.findall(r"^\s*(error: my-prices\.csv:.*)$", text, flags=re.M)


def test_the_page_shows_the_examples():
    assert len(documented_errors()) == len(EXAMPLES)


@pytest.mark.parametrize("marker, filename", EXAMPLES.items())
def test_documented_error_matches_the_cli(marker, filename):
    path = ROOT / "tests" / "data" / "prices" / filename
    out = subprocess.run([sys.executable, "-m", "multigpu", "prices", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    printed = out.stderr.strip().replace(str(path), "my-prices.csv")
    documented = next(line for line in documented_errors() if marker in line)
    assert printed == documented.strip()


DESIGN_NOTES = Path(__file__).resolve().parents[1] / "src" / "multigpu" / "DESIGN-NOTES.md"


def test_design_notes_name_modules_and_notebooks_that_exist():
    """Every module (or attribute of one) and notebook the design notes name exists, so a rename that leaves
    them behind fails; every chapter notebook has a row."""
    import importlib

    text = DESIGN_NOTES.read_text(encoding="utf-8")
    root = DESIGN_NOTES.parents[2]
    modules = set(re.findall(r"`((?:book|evidence|compute|market|hardware|comm|common|cli)\.[\w.]+)`", text))
    missing = []
    for name in sorted(modules):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # a module, or an attribute of one
            try:
                module = importlib.import_module("multigpu." + ".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            target = module
            for attr in parts[cut:]:
                target = getattr(target, attr, None)
            if target is None:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert missing == []
    notebooks = re.findall(r"`(book/[\w/-]+\.ipynb)`", text)
    assert [n for n in notebooks if not (root / n).exists()] == []
    assert {p.relative_to(root).as_posix() for p in (root / "book" / "chapters").glob("*.ipynb")} <= set(notebooks)
