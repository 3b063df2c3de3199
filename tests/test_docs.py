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
