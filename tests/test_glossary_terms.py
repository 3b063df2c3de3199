"""The glossary (book/appendix/glossary.md) defines the terms the book uses, once each, in its one-line form.

An entry of the MyST ``{glossary}`` block is one or more term lines at the start of a line, then an indented
definition ``**Chinese term** — English definition``. The list below is the floor: a term dropped or renamed
by an edit fails here, so the list cannot shrink silently. The Chinese edition's catalog for the page is checked
by tests/test_i18n.py (every message translated, the .mo compiled from the .po).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "book" / "appendix" / "glossary.md"

#: Terms the book relies on (hardware, pricing, methods); each must be a term line of the glossary.
REQUIRED = (
    "SXM", "HGX", "DGX", "LoRA",
    "on-demand price", "on-demand pricing", "spot price", "spot pricing", "reserved price", "reserved pricing",
    "community price", "community pricing",
    "premium charged", "break-even premium", "NVLink-class",
    "Pareto front", "tornado chart", "prediction interval", "1F1B", "PAM4", "FLIT", "EFA",
    # terms the chapters already link with {term}
    "NVLink", "NVSwitch", "PCIe", "tensor parallelism", "pipeline bubble",
)

DEFINITION = re.compile(r"^  \*\*[^*]+\*\* — \S")


def entries() -> list[tuple[list[str], str]]:
    """The glossary's entries in file order: (term lines, definition line)."""
    text = GLOSSARY.read_text(encoding="utf-8")
    block = re.search(r"^```\{glossary\}\n(.*?)^```$", text, re.S | re.M)
    assert block, "no {glossary} block in glossary.md"
    found, terms = [], []
    for line in block.group(1).splitlines():
        if not line.strip() or line.startswith(":"):  # blank line or directive option (:sorted:)
            continue
        if line.startswith((" ", "\t")):
            assert terms, f"definition without a term: {line[:60]!r}"
            found.append((terms, line))
            terms = []
        else:
            terms.append(line.rstrip())
    assert not terms, f"terms without a definition: {terms}"
    return found


def defined() -> list[str]:
    return [term for terms, _ in entries() for term in terms]


@pytest.mark.parametrize("term", REQUIRED)
def test_the_term_is_defined(term):
    assert term in defined(), f"{term!r} is not a term line of the glossary"


def test_no_term_is_defined_twice():
    """Case-insensitively too: Sphinx warns about a duplicate term and links one of them."""
    counts = Counter(t.lower() for t in defined())
    assert not [t for t, n in counts.items() if n > 1]


def test_each_definition_is_one_line_with_its_chinese_term_first():
    for terms, line in entries():
        assert DEFINITION.match(line), f"{terms}: {line[:60]!r}"
