"""The book's Sphinx extensions (book/_ext): each page keeps only its own language's part of an output made for both
editions (editions.py); no CDN script, no Font Awesome script, and MathJax only on a page that shows mathematics
(offline_site.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from multigpu.book import lang

EXTENSIONS = Path(__file__).resolve().parents[1] / "book" / "_ext"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"book_ext_{name}", EXTENSIONS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def editions():
    return _load("editions")


@pytest.fixture(scope="module")
def offline():
    return _load("offline_site")


def test_a_page_keeps_its_own_part_whole_and_drops_the_other(editions):
    both = lang.editions_html({"en": '<div class="t"><div>A</div><svg><g/></svg></div>',
                               "zh": '<div class="t"><div>甲</div><svg><g/></svg></div>'})
    body = f"<p>before</p>\n{both}\n<div>after</div>"
    english = editions.drop_other_editions(body, "en")
    chinese = editions.drop_other_editions(body, "zh")
    assert "甲" not in english and "A" in english and "mg-lang-zh" not in english
    assert "A</div>" not in chinese and "甲" in chinese and "mg-lang-en" not in chinese
    for page in (english, chinese):
        assert page.startswith("<p>before</p>") and page.endswith("<div>after</div>")
        assert page.count("<div") == page.count("</div>")


def test_a_body_without_parts_is_unchanged_and_an_unclosed_part_is_an_error(editions):
    assert editions.drop_other_editions("<div>x</div>", "en") == "<div>x</div>"
    with pytest.raises(ValueError, match="unclosed"):
        editions.drop_other_editions('<div class="mg-lang-zh"><div>', "en")


def test_a_figure_becomes_a_picture_of_files_with_its_phone_drawing(editions, tmp_path):
    from multigpu.book import plotting

    def drawn(title):
        fig, ax = plotting.figure(title, "x (unit)", "y (unit)", source="test")
        ax.plot([1, 2, 3], [1, 4, 9], label="line")
        ax.legend()
        return plotting.set_alt(fig, "Line chart, 1 to 9 &")

    with plotting.phone_layout():
        phone = plotting.phone_fit(drawn("A title"))
    body = "<p>x</p>" + plotting.to_html(drawn("A title"), phone=phone) + "<p>y</p>"
    context = {"body": body}
    editions.figures_as_files(SimpleNamespace(outdir=str(tmp_path)), "book/chapters/page", "page.html", context,
                              None)
    page = context["body"]
    assert page.startswith("<p>x</p>") and page.endswith("<p>y</p>") and "<svg" not in page
    desktop = re.search(r'<img src="\.\./\.\./(_images/mg-[0-9a-f]{16}\.svg)" alt="Line chart, 1 to 9 &amp;"', page)
    phone_src = re.search(r'<source media="\(max-width: 719.98px\)" srcset="\.\./\.\./(_images/mg-[0-9a-f]{16}\.svg)"',
                          page)
    assert desktop and phone_src and desktop.group(1) != phone_src.group(1)
    assert 'data-phone-min-text-px="' in page and "mg-has-phone" in page
    svg = (tmp_path / desktop.group(1)).read_text(encoding="utf-8")
    assert re.match(r'<svg width="[0-9.]+pt" height="[0-9.]+pt"', svg) and 'width="100%"' not in svg
    assert "<title>Line chart, 1 to 9 &amp;</title>" in svg
    assert editions.PHONE_BREAKPOINT_PX == plotting.PHONE_BREAKPOINT_PX


def test_every_build_language_names_a_part(editions):
    assert set(editions.PART.values()) == set(lang.LANGUAGES)


class Script(str):
    """A script as Sphinx hands it to a page: its text is its path; inline ones carry a ``body``."""

    def __new__(cls, path: str, body: str = ""):
        made = super().__new__(cls, path)
        made.attributes = {"body": body}
        return made


def _scripts(offline, body: str) -> list[str]:
    context = {"body": body, "css_files": ["_static/sphinx-thebe.css", "_static/mg.css"],
               "script_files": [Script("_static/doctools.js"), Script("", "window.MathJax = {}"),
                                Script("_static/mathjax/tex-chtml.js"), Script("https://unpkg.com/thebe")]}
    context["script_files"][3].attributes["body"] = "const THEBE_JS_URL = 1"
    offline.drop_unused_assets(SimpleNamespace(), "page", "page.html", context, None)
    assert context["css_files"] == ["_static/mg.css"]
    return [str(s) or s.attributes["body"] for s in context["script_files"]]


def test_mathjax_stays_only_where_the_page_shows_mathematics(offline):
    assert _scripts(offline, '<p>no maths</p>') == ["_static/doctools.js"]
    assert _scripts(offline, '<span class="math notranslate">\\(x\\)</span>') == [
        "_static/doctools.js", "window.MathJax = {}", "_static/mathjax/tex-chtml.js"]


def test_the_font_awesome_script_leaves_every_written_page(offline, tmp_path):
    tag = '  <script defer src="../_static/scripts/fontawesome.js?digest=55c2"></script>\n'
    (tmp_path / "a").mkdir()
    page = tmp_path / "a" / "p.html"
    page.write_text(f"<head>\n{tag}<link rel=x>\n</head>", encoding="utf-8")
    offline.drop_fontawesome_script(SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html")), None)
    assert page.read_text(encoding="utf-8") == "<head>\n<link rel=x>\n</head>"


def test_the_chinese_search_index_splits_and_stems_as_sphinx_s_own_with_its_latin_words_in_a_set():
    from sphinx.search import zh

    module = _load("zh_search")
    ours, sphinx_s = module.SearchChinese({}), zh.SearchChinese({})
    texts = ["NVLink 的带宽是 PCIe 的 7 倍", "all-reduce 在 NVSwitch 上 runs faster", "GPUs GPU gpus HBM3e TFLOPS"]
    for text in texts:
        assert ours.split(text) == sphinx_s.split(text)
    words = [word for text in texts for word in sphinx_s.split(text)]
    assert [ours.stem(word) for word in words] == [sphinx_s.stem(word) for word in words]
    assert isinstance(ours.latin_terms, set) and {"NVLink", "HBM3e"} <= ours.latin_terms
    added = []
    module.setup(SimpleNamespace(add_search_language=added.append))
    assert added == [module.SearchChinese] and module.SearchChinese.lang == "zh"
