"""The book and its decision card as PDF, one of each per edition, printed by Chromium from the built site.

``make book`` runs :func:`print_edition` on each edition it has built, before the new site replaces the old one,
so the site's links to the PDFs (the introduction's "Take it with you" line, ``book/_ext/handout.py``) never
lead nowhere. ``make pdf`` prints them again from ``_build/html`` (``python -m multigpu.book.pdf``). Chromium is
Debian's (``/usr/bin/chromium``, which the Makefile installs), driven by Playwright; the site is served from
127.0.0.1, so nothing is fetched from the network.

- **The book** (:data:`BOOK_PDF`): every page of ``_toc.yml`` in its order, A4, printed with the theme's
  navigation, the language switch, the CSV download links and the price calculator left out (:data:`PRINT_CSS`),
  wide tables and figures scaled to the page (each figure's desktop drawing inline, :data:`INLINE_JS`), a figure
  taller than a page in page-high slices (:data:`TALL_JS`);
  one PDF bookmark per page, with its title.
- **The decision card** (:data:`CARD_PDF`): the introduction's title, the answer, the prices it used and the
  decision table, on one A4 page: printed at the largest scale (at most 1) at which it fits one page.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
SITE = ROOT / "_build" / "html"
#: File names under each edition's ``pdf/`` folder (``{edition}`` is ``en`` or ``zh``).
BOOK_PDF = "interconnects-decide-{edition}.pdf"
CARD_PDF = "decision-card-{edition}.pdf"
FOLDER = "pdf"
#: The editions of a built site: (edition, folder of its root under the site).
EDITIONS = (("en", ""), ("zh", "zh"))


def edition(language: str | None) -> str:
    """The short name in the PDF file names of the edition built for a Sphinx ``language``: ``en`` or ``zh``."""
    return "en" if not language or language == "en" else language.split("_")[0]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-default-apps"]
#: A4 with 12 mm margins; the text column is printed at its screen width, scaled to the page.
PAPER = {"format": "A4", "margin": {"top": "12mm", "bottom": "14mm", "left": "12mm", "right": "12mm"}}
#: What a printed page leaves out, and how wide content fits the page.
PRINT_CSS = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer, .bd-footer-article, .prev-next-area,
.header-article, .mg-lang-switch, .mg-table-download, .mg-calc-widget, .headerlink, #pst-back-to-top,
.pst-async-banner-revealer, .skip-link, .mg-downloads, .onlyprint { display: none !important; }
html, body, .bd-container, .bd-main, .bd-page-width { min-height: 0 !important; height: auto !important; }
.bd-main .bd-content .bd-article-container, .bd-page-width { max-width: 100% !important; }
.bd-main .bd-content { justify-content: flex-start !important; }
.bd-article { padding: 0 !important; }
.mg-table-scroll, .mg-figure-scroll { overflow: visible !important; }
.mg-figure-inner { min-width: 0 !important; }
table.mg-table-grid { font-size: .72em !important; }
.mg-table-grid .mg-key { position: static !important; }
figure, .mg-figure, table, .admonition, pre { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
"""
#: The printable height of an A4 page at scale 1 (CSS px: 297 mm less the margins, at 96 px per inch).
PAGE_HEIGHT_PX = round((297 - 12 - 14) / 25.4 * 96)
#: Run in every page: an SVG figure is one box that Chromium cannot split across pages, so one taller than a
#: printed page (the validation appendix's sweep panels) is cut into page-high slices of its drawing, each a copy
#: of the SVG showing one band of its viewBox; a figure, table or box taller than a page may then break.
TALL_JS = """
(height) => {
  for (const svg of document.querySelectorAll('.mg-figure svg')) {
    const box = svg.getBoundingClientRect();
    const view = svg.viewBox.baseVal;
    if (box.height <= 0.9 * height || !view || !view.height) continue;
    const perUnit = box.height / view.height;
    const slice = Math.floor(0.85 * height / perUnit);
    for (let y = 0; y < view.height; y += slice) {
      const band = Math.min(slice, view.height - y);
      const copy = svg.cloneNode(true);
      copy.setAttribute('viewBox', `${view.x} ${view.y + y} ${view.width} ${band}`);
      copy.style.setProperty('height', `${band * perUnit}px`);
      copy.style.setProperty('width', `${box.width}px`);
      svg.parentElement.insertBefore(copy, svg);
    }
    svg.remove();
  }
  for (const el of document.querySelectorAll('figure, .mg-figure, table, .admonition, pre, .cell_output')) {
    if (el.getBoundingClientRect().height > 0.9 * height) el.style.setProperty('break-inside', 'auto', 'important');
  }
}
"""
#: Run in every page first: each figure's desktop drawing, which the page loads from ``_images/`` as a picture
#: (``book/_ext/editions.py``), put inline, so that :data:`TALL_JS` can slice it.
INLINE_JS = """
async () => {
  for (const picture of document.querySelectorAll('.mg-figure picture')) {
    const img = picture.querySelector('img');
    const text = await (await fetch(img.getAttribute('src'))).text();
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', img.getAttribute('alt') || '');
    svg.removeAttribute('height');
    svg.setAttribute('width', '100%');
    svg.style.setProperty('display', 'block');
    svg.style.setProperty('height', 'auto');
    picture.replaceWith(document.importNode(svg, true));
  }
}
"""
#: Run in the introduction: hide all of the article but the card's parts (title, answer, prices, table).
CARD_JS = """
() => {
  const article = document.querySelector('article.bd-article');
  const table = article.querySelector('table.mg-table-grid');
  const keep = [article.querySelector('h1'), article.querySelector('.admonition.tip'),
                article.querySelector('.admonition.note'), table && table.closest('.mg-table')].filter(Boolean);
  const hide = (el) => {
    for (const child of Array.from(el.children)) {
      if (keep.some((k) => k === child)) continue;
      if (keep.some((k) => child.contains(k))) { hide(child); continue; }
      child.style.setProperty('display', 'none', 'important');
    }
  };
  hide(article);
  return keep.length;
}
"""
#: The card's type: a smaller title, tighter boxes, the workload on fewer lines, no "where the work is shown"
#: column (a link, on paper).
CARD_CSS = """
article h1 { font-size: 1.6em !important; margin: 0 0 .4em 0 !important; }
.admonition { margin: .5em 0 !important; }
table.mg-table-grid { font-size: .7em !important; line-height: 1.25 !important; }
.mg-table-grid th, .mg-table-grid td { padding: .15em .35em !important; }
.mg-table-grid .mg-key { width: 19em !important; min-width: 19em !important; max-width: 19em !important; }
.mg-table-grid tr > :last-child { display: none !important; }
"""
#: The smallest scale the card may be printed at before it is refused (its text would be too small to read).
CARD_MIN_SCALE = 0.5


def page_paths(toc: Path = ROOT / "_toc.yml") -> list[str]:
    """The book's pages in reading order (``_toc.yml``), as HTML paths under an edition's root."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    files = [data["root"]] + [c["file"] for part in data.get("parts", []) for c in part.get("chapters", [])]
    return [f"{f}.html" for f in files]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _served(folder: Path) -> Iterator[str]:
    """``folder`` served on 127.0.0.1 while the block runs; yields its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Headless Chromium (Debian's), closed after the block."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _open(browser, url: str):
    """A page at ``url``, loaded, fonts and MathJax ready, in print media with :data:`PRINT_CSS`."""
    page = browser.new_page(viewport={"width": 1000, "height": 1400})
    page.goto(url, wait_until="load")
    page.emulate_media(media="print")
    page.add_style_tag(content=PRINT_CSS)
    page.evaluate("async () => { await document.fonts.ready; if (window.MathJax && MathJax.startup) "
                  "{ try { await MathJax.startup.promise; } catch (e) {} } }")
    page.evaluate(INLINE_JS)
    page.evaluate(TALL_JS, PAGE_HEIGHT_PX)
    return page


def _pages(pdf: bytes) -> int:
    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(pdf)).pages)


def book_pdf(browser, base: str, paths: list[str]) -> bytes:
    """Every page of ``paths`` printed in order into one PDF, with a bookmark per page (its title)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    titles = []
    for path in paths:
        page = _open(browser, f"{base}/{path}")
        title = page.evaluate("(document.querySelector('article h1') || {}).textContent || document.title")
        pdf = page.pdf(**PAPER, print_background=True)
        page.close()
        start = len(writer.pages)
        writer.append(PdfReader(io.BytesIO(pdf)))
        titles.append(" ".join(title.replace("#", "").split()))
        writer.add_outline_item(titles[-1], start)
    writer.add_metadata({"/Title": titles[0] if titles else "", "/Creator": "multigpu.book.pdf"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def card_pdf(browser, base: str, path: str) -> bytes:
    """The introduction's card (:data:`CARD_JS`) on one A4 page, at the largest scale (from 1 down in steps of
    10 %) that fits; ValueError if it fits only under :data:`CARD_MIN_SCALE`."""
    page = _open(browser, f"{base}/{path}")
    try:
        page.add_style_tag(content=CARD_CSS)
        if page.evaluate(CARD_JS) < 4:
            raise ValueError(f"{path}: the decision card's title, answer, prices or table is missing")
        scale = 1.0
        while scale >= CARD_MIN_SCALE:
            pdf = page.pdf(**PAPER, print_background=True, scale=scale)
            if _pages(pdf) == 1:
                return pdf
            scale = round(scale * 0.9, 3)
    finally:
        page.close()
    raise ValueError(f"{path}: the decision card does not fit one A4 page at {CARD_MIN_SCALE:.0%} scale")


def print_edition(root: Path, edition: str, browser=None) -> list[Path]:
    """The book and the card of the edition whose built root is ``root``, written to ``root/pdf/``; their paths."""
    if browser is None:
        with chromium() as own:
            return print_edition(root, edition, own)
    paths = page_paths()
    out = root / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    with _served(root) as base:
        written = [out / BOOK_PDF.format(edition=edition), out / CARD_PDF.format(edition=edition)]
        written[0].write_bytes(book_pdf(browser, base, paths))
        written[1].write_bytes(card_pdf(browser, base, paths[0]))
    return written


def main(argv: list[str] | None = None) -> int:
    """Print both editions' PDFs from the built site (``make pdf``)."""
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0]) if args else SITE
    if not (site / "index.html").exists():
        print(f"error: no built site in {site}: run `make book` first", file=sys.stderr)
        return 2
    started = time.monotonic()
    with chromium() as browser:
        for edition, folder in EDITIONS:
            root = site / folder if folder else site
            if (root / "index.html").exists():
                for path in print_edition(root, edition, browser):
                    print(f"pdf: {path.relative_to(site)} ({path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    print(f"pdf: done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
