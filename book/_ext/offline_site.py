"""Sphinx extension: keep the site self-contained, light and its console clean.

- Jupyter Book 1.x always loads sphinx-thebe, which adds an inline script naming a CDN URL (unpkg.com) and, in this
  version, adds it twice, so that every page logs "Identifier 'THEBE_JS_URL' has already been declared". The book
  has no live-code buttons, so both thebe scripts are dropped from every page.
- The theme loads Font Awesome twice: as a web font with its style sheet (what draws the theme's few icons) and as
  a 1.5 MB script that redraws the same icons as SVG. The script is dropped.
- MathJax (1.2 MB and its fonts) loads only on a page whose body holds mathematics: Sphinx adds it to a page where
  a notebook's output left a math node behind that the page does not show.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: The theme's Font Awesome script tag (its layout template writes it, outside the page context's scripts).
FONTAWESOME_SCRIPT = re.compile(r'[ \t]*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?')
#: A page body shows mathematics where it holds one of these (MathJax typesets the elements of class ``math``).
MATH_MARKERS = ('class="math', "class='math")


def _is_thebe(script: Any) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return "sphinx-thebe" in str(script) or "THEBE_JS_URL" in body


def _is_mathjax(script: Any) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return "mathjax" in str(script).lower() or "window.MathJax" in body


def has_math(body: str) -> bool:
    """Whether a rendered page body shows mathematics."""
    return any(marker in body for marker in MATH_MARKERS)


def drop_unused_assets(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Remove sphinx-thebe's scripts and stylesheet, and MathJax where the page shows no mathematics, from the page
    context."""
    math = has_math(context.get("body", ""))
    keep = [s for s in context.get("script_files", []) if not _is_thebe(s) and (math or not _is_mathjax(s))]
    context["script_files"] = keep
    context["css_files"] = [c for c in context.get("css_files", []) if "sphinx-thebe" not in str(c)]


def drop_fontawesome_script(app, exception: Exception | None) -> None:
    """Take the theme's Font Awesome script tag out of every page written (the web font draws the icons)."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = FONTAWESOME_SCRIPT.sub("", text)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", drop_unused_assets, priority=900)
    app.connect("build-finished", drop_fontawesome_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
