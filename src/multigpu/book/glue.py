"""The one way computed values reach the book's prose: myst-nb ``glue``, fed by the chapter modules.

A chapter module (``multigpu.book.ch04_cost``, ...) returns its prose values as
a dict of names to values (:class:`Facts`); the notebook glues them all with
one call, :func:`glue_all`, and the Markdown cites them by name:

- numbers (int, float, numpy scalars) are glued as plain Python numbers, for
  ``{glue:text}`name:.1f``` (a numpy scalar would print ``np.float64(...)``);
- text (str) is glued as Markdown, for ``{glue:md}`name```: computed
  sentences, names, formatted values with their units.

No number the model produces is typed in a notebook or in the prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from multigpu.evidence.claims import Verdict, tests_markdown

#: What a chapter module returns for its prose: name -> number or Markdown text.
Facts = dict[str, Any]


def plain(value: Any) -> Any:
    """A numpy scalar as a plain Python number (myst-nb would print ``np.float64(...)``)."""
    return value.item() if hasattr(value, "item") else value


def glue(name: str, value: Any) -> Any:
    """Glue one value under ``name``: text as Markdown (``{glue:md}``), anything else as a plain value
    (``{glue:text}``); return what was glued."""
    from IPython.display import Markdown
    from myst_nb import glue as _glue

    value = Markdown(value) if isinstance(value, str) else plain(value)
    _glue(name, value, display=False)
    return value


def glue_all(values: Mapping[str, Any]) -> None:
    """Glue every item of ``values`` (a chapter module's :data:`Facts`) with :func:`glue`."""
    for name, value in values.items():
        glue(name, value)


def verdict_facts(checked: Mapping[str, Verdict]) -> Facts:
    """For each claim id: ``<id>_verdict`` (the verdict in bold) and ``<id>_tests`` (what decided it,
    :func:`multigpu.evidence.claims.tests_markdown`), so that a chapter states no judgement of its own."""
    out: Facts = {}
    for claim_id, verdict in checked.items():
        out[f"{claim_id.lower()}_verdict"] = f"**{verdict.verdict}**"
        out[f"{claim_id.lower()}_tests"] = tests_markdown(verdict)
    return out
