"""Sphinx extension: the introduction links this edition's PDFs (the book and its one-page decision card).

``make book`` prints them (:mod:`multigpu.book.pdf`) into the edition's ``pdf/`` folder before the new site
replaces the old one, and fails if it cannot, so these links always lead to a file. The line sits under the
introduction's title and is left out of the printed PDFs themselves.
"""

from __future__ import annotations

import html
from typing import Any

from multigpu.book.pdf import BOOK_PDF, CARD_PDF, FOLDER, edition

#: The page that carries the links (the root of ``_toc.yml``).
PAGE = "book/intro"
#: The line's words by the build's language: (lead, the book, the card).
WORDS = {"en": ("Take it with you:", "the book as a PDF", "the one-page decision card (PDF)"),
         "zh_CN": ("随身带走：", "本书 PDF", "单页决策卡（PDF）")}


def downloads_html(pathto, language: str | None) -> str:
    """The paragraph with the two links, relative to the page (``pathto`` of the page context)."""
    lead, book, card = WORDS.get(language or "en", WORDS["en"])
    name = edition(language)
    links = [(BOOK_PDF.format(edition=name), book), (CARD_PDF.format(edition=name), card)]
    anchors = " · ".join(f'<a href="{html.escape(pathto(f"{FOLDER}/{file}", 1))}" download>{html.escape(text)}</a>'
                         for file, text in links)
    return f'<p class="mg-downloads">{html.escape(lead)} {anchors}</p>\n'


def link_pdfs(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Put :func:`downloads_html` right under the introduction's title."""
    if pagename != PAGE or "body" not in context:
        return
    body = context["body"]
    end = body.find("</h1>")
    if end < 0:
        return
    end += len("</h1>")
    context["body"] = body[:end] + "\n" + downloads_html(context["pathto"], app.config.language) + body[end:]


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", link_pdfs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
