"""Test helper: what a notebook's Markdown cites with myst-nb glue, and the check every chapter shares."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat

_CITATION = re.compile(r"\{glue:(\w+)\}`([^`:]+):?([^`]*)`")


def citations(path: Path) -> list[tuple[str, str, str]]:
    """Every ``{glue:role}`name:spec``` of the notebook's Markdown cells: (role, name, format spec or "")."""
    notebook = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return _CITATION.findall(text)


def roles(path: Path) -> dict[str, str]:
    """Each cited glue name with its role (``text`` or ``md``); a name cited in both roles fails."""
    out: dict[str, str] = {}
    for role, name, _ in citations(path):
        assert out.setdefault(name, role) == role, f"{name} is cited as {out[name]} and as {role}"
    return out


def check_cited(facts: Mapping[str, Any], path: Path, exact: bool = False, at_least: int = 1,
                numbers_as_text: bool = True, nonempty_md: bool = False) -> None:
    """Every name the page cites (``at_least`` citations) is a fact of the form its role needs: ``md``
    text (non-empty with ``nonempty_md``), ``text`` a plain Python number (a numpy scalar would print ``np.float64(...)``; text too
    unless ``numbers_as_text`` is False) that takes the cited format spec. With ``exact``, the page also cites
    every fact."""
    cited = citations(path)
    assert len(cited) >= at_least, f"{path.name} cites {len(cited)} glue values"
    plain = (int, float, str) if numbers_as_text else (int, float)
    for role, name, spec in cited:
        assert name in facts, name
        value = facts[name]
        if role == "md":
            assert isinstance(value, str) and (value or not nonempty_md), name
        else:
            assert role == "text" and type(value) in plain, (name, type(value))
            if spec:
                format(value, spec)  # what myst-nb does with the format spec
    if exact:
        assert {name for _, name, _ in cited} == set(facts)
