"""Sphinx extension: keep the site self-contained and its console clean.

Jupyter Book 1.x always loads sphinx-thebe, which adds an inline script naming
a CDN URL (unpkg.com) and, in this version, adds it twice, so that every page
logs "Identifier 'THEBE_JS_URL' has already been declared". The book has no
live-code buttons, so both thebe scripts are dropped from every page.
"""

from __future__ import annotations

from typing import Any


def _is_thebe(script: Any) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return "sphinx-thebe" in str(script) or "THEBE_JS_URL" in body


def drop_thebe(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Remove sphinx-thebe's scripts and stylesheet from the page context."""
    context["script_files"] = [s for s in context.get("script_files", []) if not _is_thebe(s)]
    context["css_files"] = [c for c in context.get("css_files", []) if "sphinx-thebe" not in str(c)]


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
