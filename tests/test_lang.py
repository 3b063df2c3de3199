"""The languages of the book's computed text (multigpu.book.lang): catalog, current language, editions' HTML."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from multigpu.book import lang
from multigpu.book.lang import N_, _


def test_english_is_the_default_and_using_nests_and_restores():
    assert lang.LANGUAGES == ("en", "zh") and lang.current() == "en"
    with lang.using("zh"):
        assert lang.current() == "zh"
        with lang.using("en"):
            assert lang.current() == "en"
        assert lang.current() == "zh"
    assert lang.current() == "en"
    with pytest.raises(ValueError, match="fr"):
        with lang.using("fr"):
            pass


def test_the_language_is_per_context_not_global():
    """A thread started while the main thread computes Chinese computes English: a context variable, no global."""
    seen = []
    with lang.using("zh"):
        worker = threading.Thread(target=lambda: seen.append(lang.current()))
        worker.start()
        worker.join()
    assert seen == ["en"]


def test_messages_translate_and_format_the_same_numbers_in_both_languages():
    assert _("Source: {source}", source="data/gpus.csv") == "Source: data/gpus.csv"
    with lang.using("zh"):
        assert _("Source: {source}", source="data/gpus.csv") == "来源：data/gpus.csv"
        assert _("no such message {n:.1f}", n=2) == "no such message 2.0"  # untranslated: English (check reports it)
    assert N_("anything") == "anything"


def test_per_language_computes_once_in_each_language():
    assert lang.per_language(lambda: _("yes")) == {"en": "yes", "zh": "是"}


def test_label_is_strict_outside_english():
    assert lang.label("holds") == "holds" and lang.label("holds", "zh") == "成立"
    assert lang.label("never declared anywhere") == "never declared anywhere"  # English: the text itself
    with pytest.raises(LookupError, match="never declared anywhere"):
        lang.label("never declared anywhere", "zh")


def test_editions_html_wraps_each_language_in_its_div():
    page = lang.editions_html({"zh": "<p>中</p>", "en": "<p>en</p>"})
    assert page == '<div class="mg-lang-en"><p>en</p></div>\n<div class="mg-lang-zh" lang="zh-CN"><p>中</p></div>'
    with pytest.raises(ValueError, match="zh"):
        lang.editions_html({"en": "<p>en</p>"})


def test_the_calculator_uses_the_same_language_divs():
    from multigpu.book import calculator

    source = Path(calculator.__file__).read_text(encoding="utf-8")
    assert "lang.editions_html(" in source and 'class="mg-lang-' not in source


def test_the_catalog_is_read_once_and_reloaded_on_request():
    assert lang.catalog_path("zh").is_file()
    first = lang.messages("zh")
    assert lang.messages("zh") is first and first["yes"] == "是" and lang.messages("en") == {}
    lang.reload()
    assert lang.messages("zh") is not first and lang.messages("zh") == first


def test_text_width_counts_wide_characters_twice():
    assert lang.text_width("GB/s") == 4 and lang.text_width("每 GPU") == 6 and lang.text_width("—µ×") == 3


def test_the_module_needs_only_the_standard_library_and_babel():
    source = Path(lang.__file__).read_text(encoding="utf-8")
    imported = {name.split(".")[0] for name in re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, re.MULTILINE)}
    assert imported <= {"__future__", "re", "unicodedata", "collections", "contextlib", "contextvars", "functools",
                        "pathlib", "typing", "babel"}, imported


def test_english_shows_verdict_ids_by_their_names():
    """The data and the JSON keep ids such as "holds-with-caveat"; a reader sees words, in both editions."""
    assert lang.label("holds-with-caveat", "en") == "holds, with a caveat"
    assert lang.label("not-checkable", "en") == "cannot be checked"
    assert lang.label("holds", "en") == "holds"
    assert "-" not in lang.label("holds-with-caveat", "zh")
