"""The Chinese edition's catalogs (multigpu.book.i18n): complete, and faithful to the MyST markup of the English.

The templates are regenerated from the pages (a gettext build that executes nothing, a few seconds), so prose
added to any page without its translation fails here. So are the messages of the package's Python catalog
(multigpu.book.lang: the text the notebooks compute), extracted afresh from src/multigpu/book/*.py.
"""

from __future__ import annotations

import re
import shutil
import string
from pathlib import Path

import pytest
from babel.messages import pofile

from multigpu.book import i18n, lang, vocabulary

#: Roles and markup a translation must keep byte for byte: computed values, citations, page links, maths, URLs.
KEPT = re.compile(r"\{(?:glue:\w+|cite|doc|ref|numref|eq|download)\}`[^`]*`|\$[^$]+\$|\]\([^)]*\)")
TERM = re.compile(r"\{term\}`([^`]*)`")
#: A Markdown fact a notebook computes in each language: the Chinese cites ``name_zh`` where the English cites ``name``.
CHINESE_FACT = re.compile(r"(\{glue:md\}`\w+)_zh`")


def _target(term: str) -> str:
    """The glossary entry a ``{term}`` role links to: ``text <target>`` or the text itself."""
    found = re.search(r"<([^>]+)>\s*$", term)
    return found.group(1) if found else term


def catalogs() -> list[Path]:
    return sorted(i18n.CATALOGS.rglob("*.po"))


def all_catalogs() -> list[Path]:
    """The pages' catalogs and the package's Python catalogs."""
    return [*catalogs(), *python_catalogs()]


def python_catalogs() -> list[Path]:
    return sorted(i18n.PY_CATALOG.parent.glob("*.po"))


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> Path:
    return i18n.templates(tmp_path_factory.mktemp("gettext"))


def test_every_message_of_every_page_is_translated(templates):
    assert list(templates.rglob("*.pot")), "the gettext build wrote no templates"
    gaps = i18n.gaps(templates)
    assert not gaps, f"{len(gaps)} untranslated: " + "; ".join(f"{g.page} ({g.why}): {g.msgid[:50]!r}"
                                                             for g in gaps[:10])


def test_a_missing_or_fuzzy_message_is_reported(templates, tmp_path):
    """The check can fail: an empty catalog folder lacks every message, and a fuzzy entry counts as a gap."""
    assert len(i18n.gaps(templates, tmp_path)) > 100
    page = next(templates.rglob("*.pot"))
    with page.open("rb") as handle:
        catalog = pofile.read_po(handle)
    message = next(m for m in catalog if m.id)
    message.string, message.flags = "译文", {"fuzzy"}
    target = tmp_path / page.relative_to(templates).with_suffix(".po")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle:
        pofile.write_po(handle, catalog)
    gaps = [g for g in i18n.gaps(templates, tmp_path) if g.msgid == message.id]
    assert [g.why for g in gaps] == ["fuzzy"]


@pytest.mark.parametrize("path", catalogs(), ids=lambda p: p.stem)
def test_translations_keep_the_markup(path):
    """Each translation keeps the English message's glue values, citations, page links, maths and URLs, and
    links the same glossary entries (its text may be Chinese: ``{term}`张量并行 <tensor parallelism>```)."""
    with path.open("rb") as handle:
        messages = [m for m in pofile.read_po(handle) if m.id and m.string]
    assert messages
    for m in messages:
        kept = CHINESE_FACT.sub(r"\1`", m.string)  # {glue:md}`in_short_zh` is the Chinese of {glue:md}`in_short`
        assert sorted(KEPT.findall(m.id)) == sorted(KEPT.findall(kept)), m.id[:80]
        assert sorted(map(_target, TERM.findall(m.id))) == sorted(map(_target, TERM.findall(m.string))), m.id[:80]


@pytest.mark.parametrize("path", catalogs(), ids=lambda p: p.stem)
def test_each_compiled_catalog_holds_its_po_files_translations(path):
    """The book build reads the committed ``.mo`` beside each ``.po``: one compiled before the ``.po``'s last
    change leaves English in the Chinese edition (``sphinx-intl build -d book/locales -l zh_CN`` recompiles)."""
    from babel.messages import mofile

    with path.open("rb") as handle:
        written = {m.id: m.string for m in pofile.read_po(handle) if m.id and m.string and not m.fuzzy}
    with path.with_suffix(".mo").open("rb") as handle:
        compiled = {m.id: m.string for m in mofile.read_mo(handle) if m.id}
    assert compiled == written, sorted(set(written.items()) ^ set(compiled.items()))[:1]


def test_numbers_stay_numbers():
    """70B stays 70B: no translation rewrites a number of the English into Chinese numerals (亿, 万)."""
    for path in all_catalogs():
        with path.open("rb") as handle:
            for m in pofile.read_po(handle):
                if m.id and m.string:
                    assert not re.search(r"\d+\s*[亿万]", m.string) or re.search(r"\d+\s*[亿万]", m.id), m.id[:80]


# ------------------------------------------------------------------ the package's Python catalog


def test_every_python_message_is_translated():
    """Every message marked in src/multigpu/book/*.py (extracted now) has a Chinese text, neither empty nor fuzzy."""
    assert len(i18n.python_template()) > 50
    gaps = i18n.python_gaps()
    assert not gaps, f"{len(gaps)} untranslated (run `make i18n`, then translate {i18n.PY_CATALOG.name}): " + "; ".join(
        f"{g.why}: {g.msgid[:50]!r}" for g in gaps[:10])


def test_a_broken_python_catalog_is_reported(tmp_path):
    """The check can fail: a message deleted, one emptied and one marked fuzzy in a copy of the catalog are the
    three gaps reported, and a missing catalog lacks every message."""
    broken = tmp_path / "multigpu.po"
    shutil.copy(i18n.PY_CATALOG, broken)
    with broken.open("rb") as handle:
        catalog = pofile.read_po(handle)
    deleted, emptied, fuzzy = (m.id for m in list(catalog)[1:4])
    catalog.delete(deleted)
    catalog[emptied].string = ""
    catalog[fuzzy].flags.add("fuzzy")
    with broken.open("wb") as handle:
        pofile.write_po(handle, catalog)
    found = {(g.msgid, g.why) for g in i18n.python_gaps(broken, name=lang.DOMAIN)}
    assert found == {(deleted, "missing"), (emptied, "empty"), (fuzzy, "fuzzy")}
    assert len(i18n.python_gaps(tmp_path / "none.po")) == len(i18n.python_template())  # every message


def test_update_python_adds_new_messages_empty_and_keeps_translations(tmp_path):
    """``update`` merges a new message into a catalog as a gap and keeps the translations it had."""
    sources = tmp_path / "src"
    sources.mkdir()
    (sources / "m.py").write_text('from multigpu.book.lang import _, N_\nA = N_("old")\nB = _("new {n:.1f}", n=1)\n',
                                  encoding="utf-8")
    po = tmp_path / "multigpu.po"
    i18n.update_python(po, sources)
    with po.open("rb") as handle:
        catalog = pofile.read_po(handle)
    catalog["old"].string = "旧"
    with po.open("wb") as handle:
        pofile.write_po(handle, catalog)
    i18n.update_python(po, sources)
    assert [(g.msgid, g.why) for g in i18n.python_gaps(po, sources)] == [("new {n:.1f}", "empty")]
    with po.open("rb") as handle:
        assert pofile.read_po(handle)["old"].string == "旧"


def _fields(text: str) -> list[str]:
    return sorted(f"{name}:{spec}" for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


def test_python_translations_keep_their_fields():
    """A Chinese message fills the same ``{name:spec}`` fields as its English (so the numbers print the same)."""
    for path in python_catalogs():
        with path.open("rb") as handle:
            messages = [m for m in pofile.read_po(handle) if m.id and m.string]
        for m in messages:
            assert _fields(m.string) == _fields(m.id), m.id[:80]
    assert lang.catalog_path("zh") == i18n.PY_CATALOG


def test_each_page_module_has_its_own_catalog():
    """A chapter's computed text is translated in its own catalog, the shared helpers' in multigpu.po."""
    assert lang.domain("ch01_generations") == "ch01_generations" and lang.domain("plotting") == lang.DOMAIN
    assert i18n.python_domains()[0] == lang.DOMAIN
    assert len(i18n.python_template(name="ch01_generations")) > 50 and len(i18n.python_template(name=lang.DOMAIN))
    assert lang.catalog_path("zh", "ch01_generations").is_file()


def test_a_message_in_two_catalogs_has_one_translation():
    """The book reads every Python catalog into one table (:func:`multigpu.book.lang.messages`), so where two
    catalogs translate one message differently, one of them is silently ignored: the validation appendix's
    "Family" header showed chapter 1's 系列 (a GPU family). One message, one translation."""
    translations: dict[str, dict[str, str]] = {}
    for path in python_catalogs():
        with path.open("rb") as handle:
            for m in pofile.read_po(handle):
                if m.id and m.string and not m.fuzzy:
                    translations.setdefault(str(m.id), {})[path.stem] = str(m.string)
    differ = {k: v for k, v in translations.items() if len(set(v.values())) > 1}
    assert not differ, differ


#: Words of an English system name that the Chinese edition must not show untranslated.
ENGLISH_WORDS = re.compile(r"\b(server|with|without|platform|Hypothetical|networking|bridges?|pairs|per|class)\b")


def test_every_system_name_with_english_words_has_a_chinese_name():
    """data/systems.csv ``name_zh``: product names (DGX H100, GB200 NVL72) stay as they are; a name with
    English words in it is given in Chinese, with the same numbers."""
    from multigpu.hardware import catalog

    for s in catalog.systems().values():
        if ENGLISH_WORDS.search(s.name):
            assert s.name_zh and not ENGLISH_WORDS.search(s.name_zh), s.id
            assert vocabulary.system_name(s.id, "zh") == s.name_zh and vocabulary.system_name(s.id, "en") == s.name
        if s.name_zh:
            assert sorted(re.findall(r"\d+", s.name)) == sorted(re.findall(r"\d+", s.name_zh)), s.id


def test_a_name_the_data_do_not_translate_is_shown_as_it_is():
    """A system a new price file or catalogue row brings without ``name_zh`` keeps its name in both editions,
    inside a finding too (no LookupError), while a translated name is shown in Chinese."""
    from multigpu.common.findings import Name, show

    with lang.using("zh"):
        shown = [show(Name(text), vocabulary.label) for text in ("Acme 8x Z900 box", "8x A100 PCIe server (no bridges)")]
    assert shown == ["Acme 8x Z900 box", "8 卡 A100 PCIe 服务器（无桥接）"]
    assert vocabulary.short_system_name("pcie-a100-8", "zh") == "8 卡 A100 PCIe 服务器"
    assert vocabulary.short_system_name("dgx-a100", "zh") == "DGX A100"
