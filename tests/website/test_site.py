"""The built website, page by page, in headless Chromium.

Fails on any console error, any request to a host other than the site
itself, any image that does not load, and any broken internal link (missing
file or missing ``#anchor``).

Layout, at 1280 and 390 px wide (one browser context per width): no element
or text sticks out of the text column (the article) by more than 1 px unless
it sits in a scroll container, and the page never scrolls sideways. Figures:
every ``figure.mg-figure`` states its smallest text (``data-min-text-px``,
at least 9 px) and is not drawn so small at either width that this text falls
under 9 px; on the phone, each shows its phone drawing
(``data-phone-min-text-px``) without scrolling sideways; every other image or
SVG in the article has a text alternative.
The intro (where ``index.html`` leads) holds the decision table.
"""

from __future__ import annotations

import html
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from .conftest import SITE, VIEWPORT_HEIGHT, WIDTHS

SKIP_DIRS = {"_static", "_sources", "_images", "_sphinx_design_static"}
TOLERANCE_PX = 1  # how far an element may pass the column's edge (sub-pixel rounding)
MIN_TEXT_PX = 9  # the smallest text a figure may show
INTRO = "book/intro.html"
_REFRESH = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.IGNORECASE)


def redirect_target(page_path: str) -> str | None:
    """Where a page's meta refresh leads, relative to the site root (each edition's ``index.html`` leads to its
    intro), or None."""
    match = _REFRESH.search((SITE / page_path).read_text(encoding="utf-8"))
    return posixpath.normpath(posixpath.join(posixpath.dirname(page_path), match.group(1))) if match else None


def pages() -> list[str]:
    """Every HTML page of the site, as paths relative to the site root."""
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                  if not SKIP_DIRS.intersection(p.relative_to(SITE).parts))


@dataclass
class Visit:
    """What one first visit to a page did: its requests and errors as it loaded, its images and links, and, once
    scrolled from top to bottom, the bytes of every response (by URL) and whether it shows mathematics."""

    external_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    has_math: bool = False


def visit(browser, base_url: str, page_path: str) -> Visit:
    """Open one page in a fresh browser context (a 1280 px window, as a first visit), record what happened while
    it loaded, then scroll it from top to bottom and record what it transferred."""
    result = Visit()
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": VIEWPORT_HEIGHT})
    page = context.new_page()
    host = urlparse(base_url).netloc
    page.on("requestfinished", lambda r: result.sizes.__setitem__(r.url, r.sizes()["responseBodySize"]))

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
    result.broken_images = _evaluate(
        page, "() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    result.links = _evaluate(page, "() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    height = _evaluate(page, "() => document.documentElement.scrollHeight")
    for y in range(0, height + VIEWPORT_HEIGHT, VIEWPORT_HEIGHT):
        _evaluate(page, f"() => window.scrollTo(0, {y})")
    page.wait_for_load_state("networkidle")
    result.has_math = _evaluate(page, "() => document.querySelector('span.math, div.math, mjx-container') !== null")
    context.close()
    return result


def _evaluate(page, script: str, tries: int = 3):
    """``page.evaluate(script)``, again once the next page has loaded if a redirect replaced the page meanwhile:
    the index page's meta refresh can fire after the wait above on a loaded machine, which destroys the script's
    context."""
    for attempt in range(tries):
        try:
            return page.evaluate(script)
        except Exception as error:  # playwright's Error; its type lives in a private module
            if "Execution context was destroyed" not in str(error) or attempt == tries - 1:
                raise
            page.wait_for_load_state("load")


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
    """A first visit makes no request to another host and none that fails, logs no error, shows every image and
    links only to pages and anchors that exist; a page of the book also stays light
    (:func:`weight_problems`), measured on the same visit."""
    result = visit(browser, site_url, page_path)
    if page_path.startswith(("book/", ZH + "book/")):
        assert weight_problems(page_path, result) == [], "a heavy page"
    assert result.external_requests == [], "requests to other hosts"
    assert result.failed_requests == [], "failed requests"
    assert result.console_errors == [], "console errors"
    assert result.broken_images == [], "images that did not load"
    assert broken_internal_links(site_url, result.links) == [], "broken internal links"


# ---------------------------------------------------------------- layout and figures

#: Run in the page: where the text column ends, what sticks out of it, and what the figures are.
LAYOUT_JS = """
async ({tolerance}) => {
  await document.fonts.ready;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    try { await MathJax.startup.promise; } catch (e) { /* a MathJax error is a console error, caught elsewhere */ }
  }
  const doc = document.documentElement;
  const result = {url: location.href, scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth,
                  column: null, offenders: [], figures: [], unlabelled: [], tables: []};
  const article = document.querySelector('main article.bd-article') || document.querySelector('article.bd-article')
    || document.querySelector('main .bd-article-container');
  if (!article) return result;
  const cs = getComputedStyle(article);
  const box = article.getBoundingClientRect();
  const limit = box.right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth);
  result.column = {selector: article.tagName.toLowerCase() + '.' + article.className.trim().replace(/\\s+/g, '.'),
                   left: Math.round(box.left), right: Math.round(limit)};
  const describe = (el) => {
    const cls = (el.getAttribute('class') || '').trim().split(/\\s+/).filter(Boolean).slice(0, 3).join('.');
    const text = (el.textContent || el.getAttribute('alt') || el.getAttribute('src') || '')
      .replace(/\\s+/g, ' ').trim().slice(0, 60);
    const id = el.id ? '#' + el.id : '';
    return '<' + el.tagName.toLowerCase() + id + (cls ? ' class=' + cls : '') + '> "' + text + '"';
  };
  const LEAVES = new Set(['svg', 'math', 'mjx-container', 'canvas', 'iframe', 'img', 'video']);
  const walk = (el) => {
    for (const node of el.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const r = range.getBoundingClientRect();
        if (r.width > 0 && r.right > limit + tolerance) {
          result.offenders.push({element: 'text in ' + describe(el), right: Math.round(r.right),
                                 by: Math.round(r.right - limit)});
        }
        continue;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) continue;
      const style = getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden') continue;
      const r = node.getBoundingClientRect();
      if ((r.width > 0 || r.height > 0) && r.right > limit + tolerance) {
        result.offenders.push({element: describe(node), right: Math.round(r.right), by: Math.round(r.right - limit)});
        continue;  // the outermost element that sticks out is enough
      }
      if (style.overflowX === 'auto' || style.overflowX === 'scroll') continue;  // what is inside scrolls
      if (LEAVES.has(node.tagName.toLowerCase())) continue;
      walk(node);
    }
  };
  walk(article);

  const UNITS = {pt: 4 / 3, px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4, pc: 16};
  const naturalWidth = (media) => {
    if (media.tagName.toLowerCase() === 'img') return media.naturalWidth || null;
    const vb = media.viewBox && media.viewBox.baseVal;
    if (vb && vb.width) return vb.width * 4 / 3;  // matplotlib writes the viewBox in pt
    const m = /^([0-9.]+)\\s*(pt|px|in|cm|mm|pc)?$/.exec((media.getAttribute('width') || '').trim());
    return m ? parseFloat(m[1]) * UNITS[m[2] || 'px'] : null;
  };
  for (const fig of article.querySelectorAll('figure.mg-figure')) {
    const media = fig.querySelector('svg, img');
    const phone = !!media && media.tagName.toLowerCase() === 'img' && media.currentSrc !== media.src;
    const raw = fig.getAttribute(phone ? 'data-phone-min-text-px' : 'data-min-text-px');
    const natural = media ? naturalWidth(media) : null;
    const rendered = media ? media.getBoundingClientRect().width : null;
    const box = fig.querySelector('.mg-figure-scroll');
    result.figures.push({element: describe(fig), minText: raw === null ? null : parseFloat(raw), rendered, natural,
                         media: media ? media.tagName.toLowerCase() : null, phone,
                         hasPhone: fig.hasAttribute('data-phone-min-text-px'),
                         hidden: box ? box.scrollWidth - box.clientWidth : 0});
  }
  for (const table of article.querySelectorAll('table')) {
    if (!table.offsetParent) continue;  // not shown (the other edition)
    let box = table.parentElement;
    while (box && box !== article && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) {
      box = box.parentElement;
    }
    const row = table.querySelector('tr');
    const columns = row ? Array.from(row.children).reduce((n, c) => n + (c.colSpan || 1), 0) : 0;
    const hidden = box && box !== article ? box.scrollWidth - box.clientWidth : 0;
    result.tables.push({element: describe(table), columns, hidden});
  }
  const looksLikeAFile = (text, el) =>
    /\\.(svg|png|jpe?g|gif|webp|pdf)$/i.test(text) || text === (el.getAttribute('src') || '');
  for (const el of article.querySelectorAll('img, svg')) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'svg' && el.parentElement && el.parentElement.closest('svg')) continue;  // part of an svg
    if (el.closest('figure.mg-figure')) continue;
    if (el.closest('button, a.headerlink') || el.getAttribute('aria-hidden') === 'true') continue;  // an icon
    const label = ((tag === 'img' ? el.getAttribute('alt') : '') || el.getAttribute('aria-label') || '').trim();
    const why = !label ? 'no alt or aria-label' : (looksLikeAFile(label, el) ? 'alt is a file name' : null);
    if (why) {
      const what = tag === 'img' ? '<img src=' + (el.getAttribute('src') || '').split('/').pop().slice(0, 24) + '...>'
                                 : describe(el);
      result.unlabelled.push(what + ': ' + why);
    }
  }
  return result;
}
"""


@dataclass
class Layout:
    """What one page looks like at one width."""

    url: str
    scroll_width: int
    inner_width: int
    column: dict | None
    offenders: list[dict]
    figures: list[dict]
    unlabelled: list[str]
    tables: list[dict]
    console_errors: list[str]
    external_requests: list[str]


def measure(context, base_url: str, page_path: str) -> Layout:
    """Open one page in the shared context of a viewport width and measure its layout."""
    page = context.new_page()
    host = urlparse(base_url).netloc
    errors: list[str] = []
    external: list[str] = []

    def on_request(request) -> None:
        parsed = urlparse(request.url)
        if parsed.scheme in ("http", "https", "ws", "wss") and parsed.netloc != host:
            external.append(request.url)

    page.on("request", on_request)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    try:
        page.goto(f"{base_url}/{page_path}", wait_until="load")
        target = redirect_target(page_path)  # an edition's root redirects to its intro: measure that page, once
        if target:
            page.wait_for_url(f"**/{target}", timeout=10_000)
        page.wait_for_timeout(300)
        page.wait_for_load_state("load")
        data = page.evaluate(LAYOUT_JS, {"tolerance": TOLERANCE_PX})
    finally:
        page.close()
    return Layout(url=data["url"], scroll_width=data["scrollWidth"], inner_width=data["innerWidth"],
                  column=data["column"], offenders=data["offenders"], figures=data["figures"],
                  unlabelled=data["unlabelled"], tables=data["tables"], console_errors=errors,
                  external_requests=external)


@pytest.fixture(scope="session")
def layout(context_at, site_url: str):
    """``layout(width, page_path)``: the page measured at that width, once per session."""
    cache: dict[tuple[int, str], Layout] = {}

    def get(width: int, page_path: str) -> Layout:
        if (width, page_path) not in cache:
            cache[width, page_path] = measure(context_at(width), site_url, page_path)
        return cache[width, page_path]

    return get


def _list(items: list) -> str:
    return "\n  " + "\n  ".join(str(i) for i in items)


def test_each_edition_root_redirects_to_its_intro():
    """The layout checks wait for these redirects before they measure (a page that navigates away while it is
    measured fails at random)."""
    assert redirect_target("index.html") == INTRO
    if (SITE / "zh" / "index.html").exists():
        assert redirect_target("zh/index.html") == f"zh/{INTRO}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page_path", pages())
def test_page_fits_its_column(layout, page_path: str, width: int) -> None:
    found = layout(width, page_path)
    assert not found.console_errors, f"{page_path}: console errors at {width} px:{_list(found.console_errors)}"
    assert not found.external_requests, f"{page_path}: requests to other hosts:{_list(found.external_requests)}"
    assert found.column is not None, f"{page_path}: no text column (main article.bd-article) found"
    wider = [f"{o['element']} ends at {o['right']} px, {o['by']} px past the column ({found.column['right']} px)"
             for o in found.offenders]
    assert not wider, f"{page_path} at {width} px: elements wider than the text column:{_list(wider)}"
    assert found.scroll_width <= found.inner_width + TOLERANCE_PX, (
        f"{page_path} at {width} px scrolls sideways: the page is {found.scroll_width} px wide")


#: The most columns a table may have and still scroll sideways in a 1280 px window (issue 43).
SCROLLING_TABLE_COLUMNS = 8


@pytest.mark.parametrize("page_path", pages())
def test_a_narrow_table_fits_the_desktop_column(layout, page_path: str) -> None:
    """At 1280 px, a table of at most :data:`SCROLLING_TABLE_COLUMNS` columns shows every column without
    scrolling sideways."""
    found = layout(WIDTHS[0], page_path)
    scrolling = [f"{t['element'][:70]}: {t['columns']} columns, {t['hidden']} px hidden" for t in found.tables
                 if t["columns"] <= SCROLLING_TABLE_COLUMNS and t["hidden"] > TOLERANCE_PX]
    assert not scrolling, f"{page_path} at {WIDTHS[0]} px: narrow tables that scroll sideways:{_list(scrolling)}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page_path", pages())
def test_figures_keep_text_readable(layout, page_path: str, width: int) -> None:
    """Every figure shows its smallest text at 9 px or more, at 1280 px and on a 390 px phone; on the phone a
    figure shows its phone drawing (every figure has one) and fits the column without scrolling sideways."""
    found = layout(width, page_path)
    problems = []
    for fig in found.figures:
        min_text = fig["minText"]
        if min_text is None or min_text != min_text:  # missing or NaN
            problems.append(f"{fig['element']}: no data-min-text-px")
            continue
        if min_text < MIN_TEXT_PX:
            problems.append(f"{fig['element']}: data-min-text-px={min_text:g} < {MIN_TEXT_PX}")
        if not fig["media"] or not fig["natural"]:
            problems.append(f"{fig['element']}: no svg or img with a natural width")
            continue
        shown = fig["rendered"] / fig["natural"] * min_text
        if shown < MIN_TEXT_PX - 0.01:
            problems.append(f"{fig['element']}: drawn at {fig['rendered']:.0f} of {fig['natural']:.0f} px, so its "
                            f"smallest text is {shown:.1f} px at {width} px wide")
        if fig["phone"] != (width == WIDTHS[1] and fig["hasPhone"]):
            problems.append(f"{fig['element']}: shows its {'phone' if fig['phone'] else 'desktop'} drawing")
        if width == WIDTHS[1] and not fig["hasPhone"]:
            problems.append(f"{fig['element']}: has no phone drawing, so a phone scrolls it")
        if width == WIDTHS[1] and fig["phone"] and fig["hidden"] > TOLERANCE_PX:
            problems.append(f"{fig['element']}: its phone drawing scrolls sideways by {fig['hidden']} px")
    assert not problems, f"{page_path} at {width} px: figures under {MIN_TEXT_PX} px or scrolling:{_list(problems)}"
    assert not found.unlabelled, (
        f"{page_path}: images or SVGs outside figure.mg-figure without a text alternative:{_list(found.unlabelled)}")


def test_intro_holds_the_decision_table(context_at, site_url: str) -> None:
    page = context_at(WIDTHS[0]).new_page()
    try:
        page.goto(f"{site_url}/index.html", wait_until="load")
        page.wait_for_url(f"**/{INTRO}", timeout=10_000)
        table = page.locator("table#decision-table")
        assert table.count() == 1, f"{page.url}: no table#decision-table on the page index.html leads to"
        rows = table.locator("tbody tr").count()
        headers = " | ".join(t.strip() for t in table.locator("thead th").all_inner_texts())
    finally:
        page.close()
    assert rows >= 3, f"the decision table has {rows} body rows, expected at least 3"
    for wanted in ("Break-even premium", "Verdict"):
        assert wanted in headers, f"the decision table's header lacks {wanted!r}: {headers}"


@pytest.mark.parametrize(("prefix", "table_id"), [("", "decision-table"), ("zh/", "decision-table-zh")])
def test_the_answer_is_on_the_first_screen_and_a_phone_shows_every_verdict(context_at, site_url: str, prefix: str,
                                                                           table_id: str) -> None:
    """At 1280 px the computed bottom line starts on the first screen; at 390 px every verdict cell of the decision
    table lies inside the screen, so no reader has to scroll sideways to read a verdict."""
    desk = context_at(WIDTHS[0]).new_page()
    try:
        desk.goto(f"{site_url}/{prefix}{INTRO}", wait_until="load")
        top = desk.evaluate("""() => { const box = [...document.querySelectorAll('.admonition')]
            .find(a => a.offsetParent !== null); return box ? box.getBoundingClientRect().top : null; }""")
    finally:
        desk.close()
    assert top is not None and top < VIEWPORT_HEIGHT, f"{prefix}{INTRO}: the answer starts at {top} px"
    phone = context_at(WIDTHS[1]).new_page()
    try:
        phone.goto(f"{site_url}/{prefix}{INTRO}", wait_until="load")
        header = phone.locator(f"table#{table_id} thead th").nth(1).inner_text()
        edges = phone.evaluate(f"""() => [...document.querySelectorAll('table#{table_id} tbody tr')]
            .map(r => r.children[1].getBoundingClientRect().right)""")
    finally:
        phone.close()
    assert header.strip() in ("Verdict", "判定"), header
    assert edges and max(edges) <= WIDTHS[1], f"{prefix}{INTRO}: verdict cells end at {max(edges):.0f} px"


def test_the_site_serves_no_stale_notebook():
    """The committed notebooks carry the default prices' results; a site built from another price file must not
    offer them for download: no notebook file in the site and no link to one."""
    assert not list(SITE.rglob("*.ipynb"))
    for page in pages():
        links = re.findall(r'href="([^"]*\.ipynb)"', (SITE / page).read_text(encoding="utf-8"))
        assert not links, (page, links)


# ------------------------------------------------------------------ the two editions

#: Where the Chinese edition lives under the site.
ZH = "zh/"


def english_pages() -> list[str]:
    return [p for p in pages() if not p.startswith(ZH)]


def test_both_editions_have_every_page():
    english = english_pages()
    chinese = sorted(p[len(ZH):] for p in pages() if p.startswith(ZH))
    assert "book/intro.html" in english and sorted(english) == chinese


@pytest.mark.parametrize("page_path", [p for p in pages() if p.startswith(("book/", ZH + "book/"))])
def test_every_page_links_to_itself_in_the_other_edition(page_path):
    """The language switch of each page of the book names the same page in the other edition (the index, search
    and redirect pages of Sphinx have none)."""
    text = (SITE / page_path).read_text(encoding="utf-8")
    found = re.search(r'<p class="mg-lang-switch"><a href="([^"]+)"', text)
    assert found, f"{page_path} has no language switch"
    target = (SITE / page_path).parent / found.group(1)
    other = page_path[len(ZH):] if page_path.startswith(ZH) else ZH + page_path
    assert target.resolve() == (SITE / other).resolve()


#: Counts the English spells out ("eight GPUs", "ten billion") that a Chinese sentence writes as digits.
SPELLED_OUT = 16
#: A number as a reader sees it: digits with optional thousands separators and decimals (years, counts, GB/s),
#: standing alone or after a multiplication sign ("x1.18", which Chinese writes "1.18 倍").
START = r"(?:(?<![\w.])|(?<=\bx))"
NUMBER = re.compile(START + r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|" + START + r"\d+(?:\.\d+)?")


def article_text(page: Path, outputs: bool = True) -> str:
    """The article text of a page as a reader sees it (scripts, styles, SVG figures and the language switch left
    out); without the notebooks' cell outputs (tables, figures, printed output) unless ``outputs``."""
    text = page.read_text(encoding="utf-8")
    found = re.search(r"<article\b.*</article>", text, flags=re.S)
    text = found.group(0) if found else ""
    if not outputs:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(text, "html.parser")
        for output in soup.select("div.cell_output"):
            output.decompose()
        text = str(soup)
    text = re.sub(r"<(script|style|svg)\b.*?</\1>|<p class=\"mg-lang-switch\">.*?</p>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def article_numbers(text: str) -> set[str]:
    """The numbers of an article text, thousands separators dropped."""
    return {n.replace(",", "") for n in NUMBER.findall(text)}


#: A converted amount as the Chinese edition writes it, CNY first with the USD amount alongside: "¥10.06（$1.50）".
CONVERTED = re.compile(r"¥\s*([\d,]+(?:\.\d+)?)\s*[（(]\s*\$\s*([\d,]+(?:\.\d+)?)\s*[）)]")
#: The rate a page declares for its conversions: "1 USD = 6.7063 CNY".
DECLARED_RATE = re.compile(r"1 USD = (\d+(?:\.\d+)?) CNY")


def _rounding(number: str) -> float:
    """Half the last printed digit of a number: the most its rounding can have moved it. A whole number's trailing
    zeros may be rounded away (an estimate to three significant figures prints 10,300 for 10,284)."""
    whole, _, decimals = number.replace(",", "").partition(".")
    if decimals:
        return 10.0 ** -len(decimals) / 2
    return 10.0 ** (len(whole) - len(whole.rstrip("0"))) / 2 if whole.strip("0") else 0.5


def declared_conversions(text: str) -> set[str]:
    """The CNY amounts of a Chinese article text that convert a USD amount beside them, each checked against
    the rate the page declares (within the rounding of both amounts as printed)."""
    pairs = CONVERTED.findall(text)
    if not pairs:
        return set()
    rates = {float(r) for r in DECLARED_RATE.findall(text)}
    assert len(rates) == 1, f"CNY amounts converted at {sorted(rates) or 'no declared rate'}"
    rate = rates.pop()
    for cny, usd in pairs:
        a, b = float(cny.replace(",", "")), float(usd.replace(",", ""))
        assert abs(a - b * rate) <= rate * _rounding(usd) + _rounding(cny), f"¥{cny} is not ${usd} at {rate}"
    return {cny.replace(",", "") for cny, _ in pairs}


@pytest.mark.parametrize("page_path", [p for p in english_pages() if p.startswith("book/")])
def test_both_editions_show_the_same_numbers(page_path):
    """Translation changes the words, never the numbers: the prose of a page holds the same numbers in both
    editions, except the CNY amounts the Chinese edition puts before a USD amount, converted at the rate the page
    declares (:func:`declared_conversions` checks each). A page carries one edition's cell outputs: each edition's
    tables and figures are built from the same frame and checked by the page modules' tests, and money tables
    differ by design (CNY first in Chinese)."""
    chinese_text = article_text(SITE / ZH / page_path, outputs=False)
    english = article_numbers(article_text(SITE / page_path, outputs=False))
    chinese = article_numbers(chinese_text)
    chinese -= declared_conversions(chinese_text) - english
    assert not english - chinese, f"numbers lost or changed in Chinese: {sorted(english - chinese)[:15]}"
    spelled = {n for n in chinese - english if n.isdigit() and int(n) <= SPELLED_OUT}  # "eight GPUs" -> "8 个 GPU"
    assert chinese - english == spelled, f"numbers only in Chinese: {sorted(chinese - english - spelled)[:15]}"


#: The price calculator's page, and its widget in each edition (the other edition's is hidden by the site's CSS).
CALCULATOR_PAGE = "book/chapters/04-cost-benefit.html"


@pytest.mark.parametrize(("prefix", "widget"), [("", "price-calculator"), (ZH, "price-calculator-zh")])
def test_the_price_calculator_answers_as_the_model_does(context_at, site_url: str, prefix: str, widget: str):
    """Typed prices give each offer's cost = the model's GPU-hours x price, and the decision table's verdict, on
    the real page."""
    from multigpu.book import calculator

    hours = calculator.gpu_hours()
    row = hours[(hours["workload"] == "train-llama3.1-8b") & hours["feasible"]]
    pair = row["pair"].iloc[0]
    nv = float(row[(row["pair"] == pair) & (row["side"] == "nvlink")]["gpu_hours"].iloc[0])
    pc = float(row[(row["pair"] == pair) & (row["side"] == "pcie")]["gpu_hours"].iloc[0])
    page = context_at(WIDTHS[1]).new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(f"{site_url}/{prefix}{CALCULATOR_PAGE}", wait_until="load")
        assert page.locator(f"#{widget}-form").is_visible(), f"{widget} is not shown on {prefix}{CALCULATOR_PAGE}"
        other = "price-calculator-zh" if widget == "price-calculator" else "price-calculator"
        assert not page.locator(f"#{other}-form").is_visible()
        page.select_option(f"#{widget}-workload", "train-llama3.1-8b")
        page.fill(f"#{widget}-pcie-price", "2")
        page.fill(f"#{widget}-nvlink-price", "2.5")
        nv_cost = float(page.locator(f"#{widget}-nvlink-cost").get_attribute("data-value"))
        pc_cost = float(page.locator(f"#{widget}-pcie-cost").get_attribute("data-value"))
        shown = [page.locator(f"#{widget}-{name}").text_content() for name in ("nvlink-cost", "nvlink-hours")]
        verdict = page.locator(f"#{widget}-verdict").get_attribute("data-value")
    finally:
        page.close()
    assert nv_cost == pytest.approx(nv * 2.5, rel=1e-5) and pc_cost == pytest.approx(pc * 2.0, rel=1e-5)
    from multigpu.common.numtext import significant
    from multigpu.evidence import answer

    # estimates as the book's one formatting module shows them: three significant figures, in the script too
    assert significant(nv_cost) in shown[0] and shown[1] == significant(nv), shown

    band = calculator.error_bands()["train"]
    want = answer.verdict(100 * (pc / nv - 1), 100 * (2.5 / 2.0 - 1), band)  # the decision table's rule
    assert verdict == {"NVLink-class cheaper": "first", "PCIe cheaper": "second", "too close to call": "close"}[want]
    assert not errors, errors


def test_the_chinese_edition_navigates_in_chinese():
    """The site title and the table of contents' captions come from the root page's catalog."""
    from multigpu.book import i18n

    page = (SITE / ZH / "book/intro.html").read_text(encoding="utf-8")
    for caption in ("Chapters", "Appendices"):
        translated = i18n.translate(caption, i18n.LANGUAGE)
        assert translated != caption and f'caption-text">{translated}<' in page
    assert 'caption-text">Chapters<' in (SITE / "book/intro.html").read_text(encoding="utf-8")


def search_index(edition: str) -> dict:
    """An edition's Sphinx search index (``searchindex.js``: ``Search.setIndex({...})``) as a dict."""
    import json

    text = (SITE / edition / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def test_the_chinese_search_index_holds_chinese_words():
    """Sphinx's Chinese search splits text into words with jieba (without it, no Chinese word is indexed and
    a Chinese query finds nothing): every Chinese word of each Chinese page title leads to that page."""
    import jieba

    index = search_index(ZH)
    words = {**index["terms"], **{w: d for w, d in index["titleterms"].items() if w not in index["terms"]}}
    for number, title in enumerate(index["titles"]):
        for word in {w for w in jieba.cut_for_search(title) if len(w) > 1 and re.fullmatch(r"[\u4e00-\u9fff]+", w)}:
            found = index["titleterms"].get(word, words.get(word, []))
            found = [found] if isinstance(found, int) else found
            assert number in found, f"search for {word!r} misses {index['docnames'][number]} ({title})"
    assert sum(bool(re.search(r"[\u4e00-\u9fff]", w)) for w in index["terms"]) >= 1000


def test_a_chinese_query_finds_the_chinese_pages(context_at, site_url: str):
    """Searching the Chinese edition for 带宽 (bandwidth) lists the Chinese pages that use the word."""
    page = context_at(WIDTHS[0]).new_page()
    try:
        page.goto(f"{site_url}/{ZH}search.html?q=带宽", wait_until="load")
        results = page.locator("#search-results ul.search li")
        results.first.wait_for(timeout=15_000)
        links = [unquote(h) for h in results.locator("a").evaluate_all("as => as.map(a => a.href)")]
    finally:
        page.close()
    assert links and all(f"/{ZH}" in link for link in links), links
    chapters = [link for link in links if "/book/chapters/" in link]
    assert len(chapters) >= 2, f"bandwidth is in most chapters; the search found {links}"


#: Three or more English words in a row: text the Chinese edition forgot to translate ("code cell source").
ENGLISH_RUN = re.compile(r"(?:\b[a-z][a-z'-]+\b[ ,;:]+){2,}[a-z][a-z'-]+\b")
#: Pages whose English is meant: the glossary gives each term's English, the references cite works by title.
ENGLISH_ON_PURPOSE = ("book/appendix/glossary.html", "book/appendix/references.html")


@pytest.mark.parametrize("page_path", [p for p in english_pages()
                                       if p.startswith("book/") and p not in ENGLISH_ON_PURPOSE])
def test_the_chinese_edition_shows_no_english_sentences(page_path):
    """What a reader sees of a Chinese page (its English twins, hidden there, and code left out) holds no run of
    three English words: prose, tables, computed sentences and the notebook's prompts are all Chinese."""
    from bs4 import BeautifulSoup

    article = BeautifulSoup((SITE / ZH / page_path).read_text(encoding="utf-8"), "html.parser").find("article")
    for hidden in article.select("script, style, svg, pre, code, .mg-lang-en, [lang=en]"):
        hidden.decompose()
    runs = ENGLISH_RUN.findall(" ".join(article.get_text(" ").split()))
    assert not runs, f"{page_path}: English left in the Chinese edition: {runs[:5]}"


@pytest.mark.parametrize("page_path", [p for p in pages() if "/appendix/" in p or "/chapters/" in p or
                                       p.endswith("intro.html")])
def test_every_cross_reference_shows_words(page_path):
    """A link to another page of the book reads as its title: a Markdown link to a notebook inside a generated
    Markdown output renders with no text ("The work is shown in ."), so such links are ``{doc}`` roles with a
    title, and none on a page may be empty."""
    from bs4 import BeautifulSoup

    article = BeautifulSoup((SITE / page_path).read_text(encoding="utf-8"), "html.parser").find("article")
    empty = [a.get("href") for a in article.select("a.reference.internal")
             if not a.get_text(strip=True) and not a.find("img")]
    assert not empty, f"{page_path}: links without text: {empty[:5]}"


#: What scrolling a page from top to bottom may make Chromium transfer, in one edition: the page's own bytes (its
#: HTML and whatever it loads outside the theme's shared ``_static`` assets) and a first visit, the shared assets
#: included (issue 43).
OWN_BYTES = 1_500_000
FIRST_VISIT_BYTES = 4_000_000
MATHJAX = "/_static/mathjax/"
#: What every page of an edition shares (the theme's assets and the search index), cached after a first visit.
SHARED = re.compile(r"/_static/|/searchindex\.js$")


def weight_problems(page_path: str, found: Visit) -> list[str]:
    """What makes a page heavy on a first visit, scrolled top to bottom: more than :data:`FIRST_VISIT_BYTES` in
    all, more than :data:`OWN_BYTES` of its own, or MathJax where the page shows no mathematics (or none where it
    does)."""
    own = sum(n for u, n in found.sizes.items() if not SHARED.search(urlparse(u).path))
    problems = [f"{page_path}: {own:,} bytes of its own"] if own > OWN_BYTES else []
    if sum(found.sizes.values()) > FIRST_VISIT_BYTES:
        problems.append(f"{page_path}: {sum(found.sizes.values()):,} bytes on a first visit")
    if any(MATHJAX in u for u in found.sizes) != found.has_math:
        problems.append(f"{page_path}: MathJax {'missing' if found.has_math else 'loaded'}")
    return problems


def test_weight_problems_name_what_makes_a_page_heavy():
    light = Visit(sizes={"http://h/book/x.html": 1000, "http://h/_static/theme.css": 1000})
    assert weight_problems("book/x.html", light) == []
    heavy = Visit(sizes={"http://h/book/x.html": OWN_BYTES + 1, f"http://h{MATHJAX}tex.js": 10}, has_math=False)
    found = weight_problems("book/x.html", heavy)
    assert any("of its own" in p for p in found) and any("MathJax loaded" in p for p in found)


#: The terms a buyer meets on the way to a verdict; each is a term line of the glossary
#: (book/appendix/glossary.md), and each page of the intro and the chapters that uses one links its first use.
LINKED_TERMS = (
    "NVLink", "NVSwitch", "NVL72", "SXM", "HGX", "NVLink-class", "NVLink bridge", "NVLS", "PCIe", "PCIe switch",
    "all-reduce", "all-to-all", "collective", "tensor parallelism", "data parallelism", "pipeline parallelism",
    "break-even premium", "premium charged", "LoRA", "decode", "prefill", "busbw",
)
GLOSSARY_PAGE = "book/appendix/glossary.html"
_PARENTHESES = re.compile(r"[（(][^（）()]*[）)]")
#: How much of a use's surroundings must match the page's source for the use to count as hand-written.
CONTEXT = 20
_NOT_PROSE = "script, style, pre, code, svg, h1, h2, h3, h4, h5, h6, div.cell_output, p.mg-lang-switch"


ROOT = Path(__file__).resolve().parents[2]
_QUOTES = str.maketrans("‘’“”", "''\"\"")


def _bare(text: str) -> str:
    """Text to compare rendered prose with its source: no whitespace, and straight quotes, dashes and ellipses
    as typed (Sphinx's smart quotes turn ``--`` into –)."""
    return (re.sub(r"\s+", "", text).translate(_QUOTES)
            .replace("…", "...").replace("—", "---").replace("–", "--"))


@lru_cache(maxsize=None)
def glossary_terms() -> dict[str, tuple[str, str]]:
    """term -> (its anchor on the built glossary page, its Chinese rendering), for every term line of the
    glossary (a line at column 0 of its ``{glossary}`` block). The rendering is the bold text that opens the
    definition (``**NVSwitch 交换芯片**``, ``**张量并行（TP）**``) less any parenthesis."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((SITE / GLOSSARY_PAGE).read_text(encoding="utf-8"), "html.parser")
    anchors = {}
    for dt in soup.select("dl.glossary dt[id]"):
        for link in dt.select("a.headerlink"):
            link.decompose()
        anchors[" ".join(dt.get_text(" ").split())] = dt["id"]
    source = (ROOT / "book" / "appendix" / "glossary.md").read_text(encoding="utf-8")
    block = source[source.index("```{glossary}"):].split("\n```")[0].splitlines()[1:]
    terms, pending = {}, []
    for line in block:
        if line and not line[0].isspace() and not line.startswith(":"):
            pending.append(line.strip())
        elif pending and (bold := re.match(r"\s+\*\*([^*]+)\*\*", line)):
            rendering = _PARENTHESES.sub("", bold.group(1)).strip()
            terms.update({term: (anchors[term], rendering) for term in pending})
            pending = []
    return terms


def _term_pattern(text: str) -> str:
    """A term as English prose writes it: whole words (a hyphen joins words; any white space between them), a
    plural allowed, and a lower-case term's first letter capitalised at the head of a sentence."""
    head = f"[{text[0]}{text[0].upper()}]" if text[0].islower() else re.escape(text[0])
    rest = r"\s+".join(re.escape(word) for word in text[1:].split(" "))
    return rf"(?<![\w-]){head}{rest}(?:e?s)?(?![\w-])"


def _forms(term: str, masking: bool = False) -> list[str]:
    """The patterns that find a use of a term: its English and its Chinese rendering, the latter only where it
    is all Chinese (全归约; NVSwitch 交换芯片 is found through NVSwitch), unless ``masking`` (what a longer
    term's use covers)."""
    rendering = glossary_terms()[term][1]
    chinese = masking or not re.search(r"[A-Za-z]", rendering)
    return [_term_pattern(term)] + ([re.escape(rendering)] if chinese and rendering else [])


def _longer_terms(term: str) -> list[str]:
    """The patterns of the other glossary terms whose words hold this one (NVLink bridge for NVLink, 分层全归约
    for 全归约)."""
    terms = glossary_terms()
    own = _forms(term)
    return [pattern for other, (_anchor, rendering) in terms.items() if other != term
            for words, pattern in zip((other, rendering), _forms(other, masking=True))
            if any(re.search(form, words) for form in own)]


@lru_cache(maxsize=None)
def handwritten_source(page_path: str) -> str:
    """What the authors wrote for a page, :func:`_bare`: the notebook's Markdown cells, or for the Chinese edition
    the translations in the page's catalog. Text computed by the package (``{glue}`` values, tables, figures) is
    not in it."""
    import json

    from babel.messages import pofile

    stem = page_path.removeprefix(ZH).removesuffix(".html")
    if page_path.startswith(ZH):
        with (ROOT / "book" / "locales" / "zh_CN" / "LC_MESSAGES" / f"{stem}.po").open("rb") as handle:
            texts = [m.string for m in pofile.read_po(handle) if m.id and isinstance(m.string, str)]
    elif (ROOT / f"{stem}.ipynb").exists():
        cells = json.loads((ROOT / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        texts = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    else:  # a Markdown page (an appendix): all of it is hand-written
        texts = [(ROOT / f"{stem}.md").read_text(encoding="utf-8")]
    return _bare("\n".join(texts))


def prose_with_links(page: Path) -> tuple[str, list[tuple[int, int, str | None]]]:
    """The prose of a page's article, as one string, and for each of its text pieces (start, end, the glossary
    anchor of the link it sits in, or None). Left out: code, scripts, styles, SVG, headings, cell outputs, the
    language switch, and the other edition's hidden twins."""
    from bs4 import BeautifulSoup, NavigableString

    chinese = page.is_relative_to(SITE / ZH)
    article = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").find("article")
    twins = ".mg-lang-en, [lang=en]" if chinese else ".mg-lang-zh, [lang=zh-CN]"
    for hidden in article.select(f"{_NOT_PROSE}, {twins}"):
        hidden.decompose()
    text, pieces = [], []
    position = 0
    for node in article.descendants:
        if type(node) is not NavigableString:  # not comments, doctypes and the like
            continue
        link = node.find_parent("a")
        href = urldefrag(link.get("href", ""))[0] if link else ""
        anchor = urldefrag(link["href"])[1] if link and href.endswith("glossary.html") else None
        pieces.append((position, position + len(node), anchor))
        text.append(str(node))
        position += len(node)
    return "".join(text), pieces


def first_unlinked_use(text: str, pieces: list[tuple[int, int, str | None]], term: str,
                       source: str) -> tuple[int, int] | None:
    """(where the term is first used, in hand-written prose, without a link to its glossary entry; where its
    first link is, -1 if none), or None when every such use follows a link to the entry or there is none. A use
    is hand-written when it and up to :data:`CONTEXT` characters either side of it in its text node (past the
    node, when that is short) are in the page's ``source`` (:func:`handwritten_source`). A use inside a longer
    glossary term (NVLink in NVLink bridge, all-reduce in one-shot all-reduce) is that term's, not this one's."""
    anchor = glossary_terms()[term][0]
    covered = [m.span() for pattern in _longer_terms(term) for m in re.finditer(pattern, text)]
    uses = sorted(m.start() for pattern in _forms(term) for m in re.finditer(pattern, text)
                  if not any(a <= m.start() < b for a, b in covered))
    first_link = min((start for start, _end, target in pieces if target == anchor), default=-1)

    def piece(at: int) -> tuple[int, int, str | None]:
        return next(p for p in pieces if p[0] <= at < p[1])

    def handwritten(at: int) -> bool:
        start, end, _target = piece(at)
        near = _bare(text[max(start, at - CONTEXT):min(end, at + len(term) + CONTEXT)])
        if len(near) < len(_bare(term)) + CONTEXT // 3:  # a short piece (bold, a list item): read past it
            near = _bare(text[max(0, at - CONTEXT):at + len(term) + CONTEXT])
        return near in source

    unlinked = [at for at in uses if piece(at)[2] != anchor and handwritten(at)]
    if not unlinked or 0 <= first_link < unlinked[0]:
        return None
    return unlinked[0], first_link


@pytest.mark.parametrize("page_path", [p for p in pages() if p.startswith(("book/", ZH + "book/"))
                                       and not p.endswith(GLOSSARY_PAGE)])
def test_a_term_s_first_use_links_to_the_glossary(page_path):
    """On every page but the glossary (the intro, the chapters and the appendices), in both editions, the first use of each of :data:`LINKED_TERMS` in the
    prose links to the term's glossary entry.

    The prose is the article less code, scripts, styles, SVG, headings, cell outputs (tables and figures), the
    language switch and the other edition's hidden twins. A use is the English term as a whole word (a plural
    and a capital at the head of a sentence allowed) or, in the Chinese edition, the all-Chinese rendering the
    glossary gives in bold (全归约 for all-reduce); a use inside a longer glossary term (NVLink in NVLink
    bridge) is not one. The rule: the page's first link to the term's entry (``glossary.html#term-...``, whatever
    its words, such as 张量并行 or NVSwitches) comes no later than the first use that is not inside such a link.
    Only hand-written prose counts (the notebook's Markdown, or the page's catalog in Chinese): a computed
    sentence (a ``{glue}`` value) cannot carry a link, so the link goes on the first hand-written use; a page
    whose only uses are computed has nothing to link."""
    for term in LINKED_TERMS:
        assert term in glossary_terms(), f"{term} is not a term line of the glossary"
    text, pieces = prose_with_links(SITE / page_path)
    source = handwritten_source(page_path)
    missing = []
    for term in LINKED_TERMS:
        found = first_unlinked_use(text, pieces, term, source)
        if found:
            at, link = found
            where = f" (first link at {link})" if link >= 0 else ""
            missing.append(f"{term}: {text[max(0, at - 40):at + 40]!r}{where}")
    assert not missing, f"{page_path}: first uses not linked to the glossary:\n" + "\n".join(missing)


def shows_text(page) -> bool:
    """Whether a PDF page draws any text: a text-showing operator (``Tj``, ``TJ``) in its content stream, which
    Chromium writes for every line it prints (seconds faster than extracting the text of 250 pages)."""
    contents = page.get_contents()
    return contents is not None and any(op in contents.get_data() for op in (b"Tj", b"TJ"))


def test_shows_text_tells_a_blank_page_from_a_printed_one():
    from pypdf import PdfWriter

    writer = PdfWriter()
    blank = writer.add_blank_page(width=595, height=842)
    assert not shows_text(blank)
    card = next(SITE.rglob("decision-card-en.pdf"), None)
    if card is not None:
        from pypdf import PdfReader

        assert shows_text(PdfReader(card).pages[0])


@pytest.mark.parametrize("edition, folder", [("en", ""), ("zh", ZH)])
def test_each_edition_has_its_book_and_decision_card_as_pdf(edition: str, folder: str) -> None:
    """``make book`` prints every page of the table of contents into one PDF, a bookmark per page, and the
    introduction's answer and decision table onto one A4 page; the introduction links both."""
    from io import BytesIO

    from bs4 import BeautifulSoup
    from pypdf import PdfReader

    from multigpu.book import pdf

    root = SITE / folder
    book = PdfReader(BytesIO((root / pdf.FOLDER / pdf.BOOK_PDF.format(edition=edition)).read_bytes()))
    paths = pdf.page_paths()
    titles = [" ".join(BeautifulSoup((root / p).read_text(encoding="utf-8"), "html.parser").find("article")
                       .find("h1").get_text(" ", strip=True).replace("#", "").split()) for p in paths]
    assert [item.title for item in book.outline] == titles
    assert len(book.pages) > 2 * len(paths)
    blank = [i + 1 for i, page in enumerate(book.pages) if not shows_text(page)]
    assert not blank, f"blank pages in the book: {blank}"  # a tall figure kept whole leaves one before it
    card = PdfReader(BytesIO((root / pdf.FOLDER / pdf.CARD_PDF.format(edition=edition)).read_bytes()))
    assert len(card.pages) == 1
    text = unicodedata.normalize("NFKC", " ".join(card.pages[0].extract_text().split()))  # ligatures: fi, not ﬁ
    intro = BeautifulSoup((root / INTRO).read_text(encoding="utf-8"), "html.parser")
    workloads = [row.find("td").get_text(strip=True) for row in intro.select("table.mg-table-grid tbody tr")]
    squeezed = text.replace(" ", "")
    assert workloads and all(unicodedata.normalize("NFKC", w).replace(" ", "") in squeezed for w in workloads)
    links = [a["href"] for a in intro.select("p.mg-downloads a")]
    assert [posixpath.basename(h) for h in links] == [pdf.BOOK_PDF.format(edition=edition),
                                                      pdf.CARD_PDF.format(edition=edition)]


#: Headers of the columns that hold the model's estimates (tables.ESTIMATE_PREFIXES) and of year columns.
ESTIMATE_HEADS = ("Predicted", "预测")
YEAR_HEADS = ("Year", "年份")
_LINKS = re.compile(r"https?://\S+|arXiv:\s*\S+|doi:\s*\S+", re.IGNORECASE)


def number_problems(text: str) -> list[str]:
    """What a reader should never see in a sentence or a cell: a missing value printed as ``nan`` or ``inf``, a
    negative zero, or a number with more than four significant digits after its decimal point (``8.17518``);
    links and arXiv identifiers are not numbers."""
    text = _LINKS.sub(" ", text)
    found = [f"missing value {m.group(0)!r}" for m in re.finditer(r"(?<![\w-])(?:nan|NaN|inf)(?![\w-])", text)]
    found += [f"negative zero in {text[max(m.start() - 30, 0):m.end() + 10]!r}"
              for m in re.finditer(r"(?<![\d.,])[-−]0(?:\.0+)?(?![\d.])", text)]
    found += [f"{m.group(0)} in {text[max(m.start() - 30, 0):m.end() + 10]!r}"
              for m in re.finditer(r"(?<![\w.,])\d[\d,]*\.(\d{5,})(?!\d)", text) if len(m.group(1).lstrip("0")) > 4]
    return found


def significant_figures(cell: str) -> int:
    """The significant figures a number shows: ``2,370`` and ``0.0123`` show 3, ``460.43`` shows 5."""
    digits = re.sub(r"[^\d.]", "", cell)
    whole, _, decimals = digits.partition(".")
    return len((whole + decimals).lstrip("0")) if decimals else len(whole.lstrip("0").rstrip("0"))


def _numbers(cell: str) -> list[str]:
    """The numbers of a cell: one, or an estimate and its interval ("501 (322–614)")."""
    return re.findall(r"\d[\d,]*(?:\.\d+)?", cell)


def test_number_rules_catch_what_they_name():
    found = number_problems("a 8.17518 MiB message, nan GB/s, -0.0 %, 0.00081 %, arXiv:2407.21783, 2,016 GPUs")
    assert [f.split(" in ")[0] for f in found] == ["missing value 'nan'", "negative zero", "8.17518"]
    assert [significant_figures(c) for c in ("2,370", "0.0123", "460.43", "-56.7", "4,300,000,000")] == [
        3, 3, 5, 3, 2]
    assert [significant_figures(n) for n in _numbers("501 (322–614.5)")] == [3, 3, 4]


@pytest.mark.parametrize("page_path", [p for p in pages() if p.startswith(("book/", ZH + "book/"))])
def test_numbers_read_as_people_read_them(page_path):
    """Every sentence and table cell of both editions: :func:`number_problems`; a year column holds plain years
    (2016, never 2,016); a column of the model's estimates shows at most three significant figures."""
    from bs4 import BeautifulSoup

    article = BeautifulSoup((SITE / page_path).read_text(encoding="utf-8"), "html.parser").find("article")
    for hidden in article.select("script, style, svg, pre, code"):
        hidden.decompose()
    problems = number_problems(" ".join(article.get_text(" ").split()))
    for table in article.select("table"):
        heads = [th.get_text(" ", strip=True) for th in table.select("thead th")]
        for row in table.select("tbody tr"):
            cells = [c.get_text(" ", strip=True) for c in row.find_all(["td", "th"])]
            for head, cell in zip(heads, cells):
                if head.startswith(YEAR_HEADS) and not re.fullmatch(r"\d{4}|—|", cell):
                    problems.append(f"year {cell!r} in column {head!r}")
                if head.startswith(ESTIMATE_HEADS) and any(significant_figures(n) > 3 for n in _numbers(cell)):
                    problems.append(f"estimate {cell!r} in column {head!r}")
    assert not problems, f"{page_path}:{_list(problems[:10])}"


@lru_cache(maxsize=1)
def _slugs() -> re.Pattern[str]:
    """The ids of the data files a reader should never meet in a sentence, an axis or alt text: systems, models,
    named workloads, GPUs, links and topology kinds (those with a hyphen or a digit: "hgx-h200", "llama3.1-8b",
    "serve-llama3.1-70b-30tps", "rtx-4090", "nvswitch3", "pcie-tree")."""
    from multigpu.compute import models
    from multigpu.hardware import catalog, wiring
    from multigpu.market import workloads

    kinds = {wiring.for_system(s).kind for s in catalog.systems()}
    ids = {i for i in (*catalog.systems(), *models.models(), *workloads.workloads_table(), *catalog.gpus(),
                       *catalog.links(), *kinds) if "-" in i or re.search(r"\d", i)}
    return re.compile(r"(?<![\w./'@-])(" + "|".join(sorted(map(re.escape, ids), key=len, reverse=True)) +
                      r")(?![\w'@-])")


def figure_files(article, page_path: str) -> list:
    """The SVG drawings (desktop and phone) that the page's figures load from files, parsed."""
    from bs4 import BeautifulSoup

    paths = [el.get("src") or el.get("srcset") for el in article.select(".mg-figure img, .mg-figure source")]
    return [BeautifulSoup((SITE / posixpath.dirname(page_path) / path).read_text(encoding="utf-8"),
                          "html.parser").find("svg") for path in paths]


@pytest.mark.parametrize("page_path", [p for p in pages() if p.startswith(("book/", ZH + "book/"))])
def test_sentences_axes_and_alt_text_name_things_for_people(page_path):
    """No system, model or workload id in the prose, in a figure's text (its source line, which cites the code
    that drew it, aside) or in alt text; tables, code and the cells' code are left out (a table's key may be an
    id, as in the validation appendix, where the id is what the data file calls the row)."""
    from bs4 import BeautifulSoup

    article = BeautifulSoup((SITE / page_path).read_text(encoding="utf-8"), "html.parser").find("article")
    labels = [svg.get("aria-label", "") for svg in article.select("svg")] + [
        img.get("alt", "") for img in article.select(".mg-figure img")]
    drawn = []
    for svg in article.select("svg") + figure_files(article, page_path):
        texts = [t.get_text("", strip=True) for t in svg.select("text")]
        sources = [i for i, t in enumerate(texts) if t.startswith(("Source:", "来源："))]
        drawn += texts[:sources[0]] if sources else texts  # the source line, drawn last, may run over lines
    for hidden in article.select("script, style, pre, code, table, svg, div.cell_input, .mg-table-download"):
        hidden.decompose()
    texts = {"prose": " ".join(article.get_text(" ").split()), "alt text": " ".join(labels),
             "figure text": " | ".join(drawn)}
    found = [f"{where}: {m.group(0)!r} in {text[max(m.start() - 40, 0):m.end() + 20]!r}"
             for where, text in texts.items() for m in _slugs().finditer(text)]
    assert not found, f"{page_path}:{_list(found[:10])}"
