"""The built website, page by page, in headless Chromium.

Fails on any console error, any request to a host other than the site
itself, any image that does not load, and any broken internal link (missing
file or missing ``#anchor``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from .conftest import SITE

SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static"}


def pages() -> list[str]:
    """Every HTML page of the site, as paths relative to the site root."""
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                  if not SKIP_DIRS.intersection(p.relative_to(SITE).parts))


@dataclass
class Visit:
    """What one page load did."""

    external_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def visit(browser, base_url: str, page_path: str) -> Visit:
    """Open one page in a fresh browser context and record what happened."""
    result = Visit()
    context = browser.new_context()
    page = context.new_page()
    host = urlparse(base_url).netloc

    def on_request(request) -> None:
        parsed = urlparse(request.url)
        if parsed.scheme in ("http", "https", "ws", "wss") and parsed.netloc != host:
            result.external_requests.append(request.url)

    def on_response(response) -> None:
        if response.status >= 400:
            result.failed_requests.append(f"{response.status} {response.url}")

    page.on("request", on_request)
    page.on("response", on_response)
    page.on("requestfailed", lambda r: result.failed_requests.append(f"failed {r.url}"))
    page.on("console", lambda m: result.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: result.console_errors.append(f"uncaught: {e}"))
    page.goto(f"{base_url}/{page_path}", wait_until="load")
    page.wait_for_timeout(300)  # let deferred scripts (MathJax, theme) and the index page's redirect run
    page.wait_for_load_state("load")
    result.broken_images = page.evaluate(
        "() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    result.links = page.evaluate("() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    context.close()
    return result


@lru_cache(maxsize=None)
def anchors(html_file: Path) -> frozenset[str]:
    """The ids (and legacy names) defined in one HTML file."""
    text = html_file.read_text(encoding="utf-8", errors="replace")
    return frozenset(re.findall(r'\s(?:id|name)="([^"]+)"', text))


def broken_internal_links(base_url: str, links: list[str]) -> list[str]:
    """Links into the site whose file or ``#anchor`` does not exist in the build."""
    broken = []
    for link in links:
        url, fragment = urldefrag(link)
        if not url.startswith(base_url):
            continue
        target = SITE / unquote(urlparse(url).path.lstrip("/"))
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            broken.append(link)
        elif fragment and target.suffix == ".html" and unquote(fragment) not in anchors(target):
            broken.append(link)
    return broken


def test_site_has_the_book_pages(site_dir: Path) -> None:
    found = pages()
    assert "index.html" in found
    assert any(p.startswith("book/intro") for p in found), found


@pytest.mark.parametrize("page_path", pages())
def test_page_loads_cleanly(browser, site_url: str, page_path: str) -> None:
    result = visit(browser, site_url, page_path)
    assert result.external_requests == [], "requests to other hosts"
    assert result.failed_requests == [], "failed requests"
    assert result.console_errors == [], "console errors"
    assert result.broken_images == [], "images that did not load"
    assert broken_internal_links(site_url, result.links) == [], "broken internal links"
