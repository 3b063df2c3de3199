"""Sphinx extension: the English and the Chinese edition of the same pages.

- **Language switch.** Every page links to the same page in the other edition: the English site is the root,
  the Chinese one lives under ``zh/`` (``make book`` builds both; see ``multigpu.book.build``).
- **Computed text stays out of the catalogs.** Cell outputs are marked untranslatable, so the catalogs hold
  the pages' prose only, never numbers or sentences a notebook computed.
- **One edition's outputs per page.** A notebook output made for both editions holds each language's part in a
  ``mg-lang-<language>`` div (``multigpu.book.lang.editions_html``); each page keeps its own language's part
  and drops the others, so a reader downloads one edition's figures and tables, not both.
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


def setup(app) -> dict[str, Any]:
    _patch_glue()
    app.add_transform(TablesInDirectivesAreProse)
    app.add_transform(KeepOutputsOutOfCatalogs)
    app.connect("html-page-context", switch_link)
    app.connect("html-page-context", own_edition_only)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
