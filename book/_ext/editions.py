"""Sphinx extension: the English and the Chinese edition of the same pages.

- **Language switch.** Every page links to the same page in the other edition: the English site is the root,
  the Chinese one lives under ``zh/`` (``make book`` builds both; see ``multigpu.book.build``).
- **Computed text stays out of the catalogs.** Cell outputs are marked untranslatable, so the catalogs hold
  the pages' prose only, never numbers or sentences a notebook computed.
- **One edition's outputs per page.** A notebook output made for both editions holds each language's part in a
  ``mg-lang-<language>`` div (``multigpu.book.lang.editions_html``); each page keeps its own language's part
  and drops the others, so a reader downloads one edition's figures and tables, not both.
- **A phone gets its own drawing of each figure.** A figure output (``multigpu.book.plotting.to_html``) holds its
  desktop SVG inline and its phone drawing in an inert ``<template>``; each page writes both to ``_images/`` (named
  by their content's hash) and shows them as one ``<picture>``, whose phone source a window under
  ``plotting.PHONE_BREAKPOINT_PX`` loads instead of the desktop one (:func:`figures_as_files`).
- **Tables inside directives are translated.** Their cells take their nearest ancestor's source (Sphinx skips text
  without one).
- **Computed values inside translated prose.** A Chinese message from the catalogs is parsed on its own, in a
  document of its own, where myst-nb's glue roles find no glue data and fail. While Sphinx translates a page,
  the page being translated is remembered and glue lookups of the message's document fall back to it, so
  ``{glue:text}`x:.1f``` in a Chinese sentence shows the same number as in the English one.
"""

from __future__ import annotations

import html
import re
from typing import Any

from docutils import nodes
from sphinx.transforms import SphinxTransform, i18n

#: The other edition's folder, label and language tag, by this build's language.
OTHER = {"zh_CN": ("", "English", "en"), "en": ("zh/", "中文版", "zh-CN")}
_translating: list[Any] = []
_lent: list[Any] = []  #: message documents lent the page's renderer; it is taken back when the page is done
#: Where a notebook page keeps its myst-nb renderer (myst-nb drops it when parsing ends) until it is translated.
KEPT = "mg_nb_renderer"


class _KeepRenderer(dict):
    """A page's attributes that keep the renderer myst-nb pops at the end of parsing, for the translation."""

    def pop(self, key, *default):
        value = super().pop(key, *default)
        if key == "nb_renderer":
            self[KEPT] = value
        return value


def _keep_renderer(parse):
    def wrapped(self, inputstring, document):
        if not _translating:  # a page; a message being translated is parsed with this parser too, and keeps nothing
            document.attributes = _KeepRenderer(document.attributes)
        return parse(self, inputstring, document)
    return wrapped


def _remember_page(apply):
    def wrapped(self, **kwargs):
        _translating.append(self.document)
        try:
            return apply(self, **kwargs)
        finally:
            _translating.pop()
            self.document.attributes = dict(self.document.attributes)  # a plain dict again, without the renderer
            self.document.attributes.pop(KEPT, None)
            while _lent:  # the doctree is pickled: no renderer may stay reachable from its nodes
                _lent.pop().attributes.pop("nb_renderer", None)
    return wrapped


def _with_page_fallback(retrieve):
    def wrapped(document, key):
        if "nb_renderer" not in document and _translating and KEPT in _translating[-1]:
            document["nb_renderer"] = _translating[-1][KEPT]  # the message's own document, until the page is done
            _lent.append(document)
        return retrieve(document, key)
    return wrapped


def _patch_glue() -> None:
    """Let glue roles and directives in a translated message read the translated page's glue data."""
    from myst_nb import sphinx_
    from myst_nb.ext.glue import directives, roles, utils

    patched = _with_page_fallback(utils.retrieve_glue_data)
    for module in (utils, roles, directives):
        if hasattr(module, "retrieve_glue_data"):
            module.retrieve_glue_data = patched
    sphinx_.Parser.parse = _keep_renderer(sphinx_.Parser.parse)
    i18n.Locale.apply = _remember_page(i18n.Locale.apply)


class TablesInDirectivesAreProse(SphinxTransform):
    """A Markdown table inside a directive (the learning objectives' admonition) is parsed without a source for
    its cells' paragraphs, and Sphinx neither extracts nor translates text without one. Each such cell takes its
    nearest ancestor's source, so that the Chinese edition translates it like any other table."""

    default_priority = 5  # before the Locale transform (20) and before outputs are kept out (10)

    def apply(self, **kwargs: Any) -> None:
        for entry in self.document.findall(nodes.entry):
            ancestor = entry.parent
            while ancestor is not None and not ancestor.source:
                ancestor = ancestor.parent
            if ancestor is None:
                continue
            for element in entry.findall(nodes.TextElement):
                if not element.source:
                    element.source, element.line = ancestor.source, ancestor.line


class KeepOutputsOutOfCatalogs(SphinxTransform):
    """What the notebooks compute (cell outputs: tables, figures, Markdown built in Python) is not prose to
    translate: it changes with the prices and the model. Its text is marked untranslatable before gettext or
    the translation sees it; each language's computed text comes from the notebooks themselves."""

    default_priority = 10  # before Sphinx's Locale transform (20)

    def apply(self, **kwargs: Any) -> None:
        for output in self.document.findall(nodes.container):
            if "cell_output" in output.get("classes", []):
                for element in output.findall(nodes.TextElement):
                    element["translatable"] = False


def switch_link(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Put a link to the same page in the other edition at the top of the page's body."""
    language = app.config.language or "en"
    folder, label, tag = OTHER.get(language, OTHER["en"])
    up = "../" * (pagename.count("/") + (1 if language != "en" else 0))
    href = f"{up}{folder}{pagename}.html"
    link = (f'<p class="mg-lang-switch"><a href="{html.escape(href)}" hreflang="{tag}" lang="{tag}">'
            f'{html.escape(label)}</a></p>')
    context["body"] = link + context.get("body", "")


#: The language of each edition's outputs (``mg-lang-<part>``), by the build's language.
PART = {"zh_CN": "zh", "en": "en"}
_DIV = re.compile(r"<div\b|</div>")


def drop_other_editions(body: str, own: str) -> str:
    """``body`` without the ``mg-lang-<language>`` divs of every language but ``own`` (each removed whole, with
    the divs nested in it)."""
    start = re.compile(rf'<div class="mg-lang-(?!{re.escape(own)}")[a-z]+"[^>]*>')
    kept, at = [], 0
    while found := start.search(body, at):
        kept.append(body[at:found.start()])
        depth, at = 1, found.end()
        while depth:
            tag = _DIV.search(body, at)
            if tag is None:
                raise ValueError(f"unclosed {found.group()} in a page body")
            depth += 1 if tag.group() == "<div" else -1
            at = tag.end()
    kept.append(body[at:])
    return "".join(kept)


def own_edition_only(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Keep the page's own language's part of every output made for both editions (:func:`drop_other_editions`)."""
    if "body" in context:
        context["body"] = drop_other_editions(context["body"], PART.get(app.config.language or "en", "en"))


#: A figure output of ``multigpu.book.plotting.to_html``: desktop SVG inline, phone drawing in a template.
_FIGURE = re.compile(
    r'<figure class="mg-figure" data-min-text-px="(?P<text>[0-9.]+)" style="margin:0">\s*'
    r'<div class="mg-figure-scroll" style="overflow-x:auto">\s*'
    r'<div class="mg-figure-inner" style="width:100%;max-width:(?P<max>\d+)px;min-width:(?P<min>\d+)px">\s*'
    r'(?P<svg><svg\b.*?</svg>)\s*</div>\s*</div>\s*'
    r'(?:<template class="mg-figure-phone" data-min-text-px="(?P<ptext>[0-9.]+)" data-max-width="(?P<pmax>\d+)" '
    r'data-min-width="(?P<pmin>\d+)">\s*(?P<psvg><svg\b.*?</svg>)\s*</template>\s*)?</figure>', re.S)
_ALT = re.compile(r'aria-label="([^"]*)"')
#: Windows narrower than this (CSS px) show a figure's phone drawing (``multigpu.book.plotting.PHONE_BREAKPOINT_PX``).
PHONE_BREAKPOINT_PX = 720


def standalone_svg(svg: str) -> tuple[str, float, float]:
    """An inline figure SVG as a file of its own: its width and height in pt (its viewBox's, as matplotlib
    wrote it) instead of the column's 100 %, without the attributes the page gave it; and those sizes in CSS px."""
    width, height = (float(v) for v in re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg).groups())
    head, rest = svg.split(">", 1)
    head = re.sub(r'\s(?:width|role|aria-label)="[^"]*"', "", head)
    head = re.sub(r'\sstyle="display:block;width:100%;height:auto;?\s*', ' style="', head).replace(' style=""', "")
    head = head.replace("<svg", f'<svg width="{width:g}pt" height="{height:g}pt"', 1)
    return f"{head}>{rest}\n", width * 4 / 3, height * 4 / 3


def _write_svg(outdir: str, svg: str) -> str:
    """``svg`` written once to ``<outdir>/_images/mg-<hash>.svg``; its path under the site."""
    import hashlib
    from pathlib import Path

    name = f"_images/mg-{hashlib.sha256(svg.encode('utf-8')).hexdigest()[:16]}.svg"
    path = Path(outdir) / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
    return name


def figure_picture(match: re.Match[str], outdir: str, up: str) -> str:
    """One figure output as a ``<figure>`` whose ``<picture>`` loads its desktop drawing, or under
    :data:`PHONE_BREAKPOINT_PX` its phone drawing, from ``_images/`` (``up``: the way from the page to the site
    root). Its widths go to CSS variables (``book/_static/mg.css``): at most the natural width, at least the one that
    keeps its text at the floor; its smallest text to ``data-min-text-px`` (and ``data-phone-min-text-px``)."""
    desktop, width, height = standalone_svg(match["svg"])
    alt = html.unescape(_ALT.search(match["svg"]).group(1))
    widths = f"--mg-max:{match['max']}px;--mg-min:{match['min']}px"
    data, source = f'data-min-text-px="{match["text"]}"', ""
    if match["psvg"]:
        phone, pwidth, pheight = standalone_svg(match["psvg"])
        widths += f";--mg-max-phone:{match['pmax']}px;--mg-min-phone:{match['pmin']}px"
        data += f' data-phone-min-text-px="{match["ptext"]}"'
        source = (f'<source media="(max-width: {PHONE_BREAKPOINT_PX - 0.02}px)" '
                  f'srcset="{up}{_write_svg(outdir, phone)}" width="{pwidth:.0f}" height="{pheight:.0f}">')
    img = (f'<img src="{up}{_write_svg(outdir, desktop)}" alt="{html.escape(alt, quote=True)}" '
           f'width="{width:.0f}" height="{height:.0f}">')
    return (f'<figure class="mg-figure" {data} style="margin:0">\n<div class="mg-figure-scroll">\n'
            f'<div class="mg-figure-inner{" mg-has-phone" if source else ""}" style="{widths}">\n'
            f"<picture>{source}{img}</picture>\n</div>\n</div>\n</figure>\n")


def figures_as_files(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Every figure output of the page as a ``<picture>`` of files under ``_images/`` (:func:`figure_picture`)."""
    if "body" in context:
        up = "../" * pagename.count("/")
        context["body"] = _FIGURE.sub(lambda m: figure_picture(m, app.outdir, up), context["body"])


def setup(app) -> dict[str, Any]:
    _patch_glue()
    app.add_transform(TablesInDirectivesAreProse)
    app.add_transform(KeepOutputsOutOfCatalogs)
    app.connect("html-page-context", switch_link)
    app.connect("html-page-context", own_edition_only)
    app.connect("html-page-context", figures_as_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
