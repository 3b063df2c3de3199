"""The Chinese edition's message catalogs: ``python -m multigpu.book.i18n update`` (or ``check``).

The book's Markdown prose is translated with Sphinx's gettext machinery, never forked: a gettext build of the
book (notebooks not executed: only their Markdown is read) writes one template per page into
``_build/gettext``, and sphinx-intl merges them into ``book/locales/zh_CN/LC_MESSAGES/<page>.po``, where the
translations live. ``check`` regenerates the templates and lists every message that is missing, empty or
fuzzy in a catalog (exit status 1 when there is one), so prose added later cannot slip into the Chinese
edition untranslated.

The text the notebooks compute (figure words, table headers, computed sentences) is translated by the package's
own catalog, ``src/multigpu/book/locales/zh_CN/LC_MESSAGES/multigpu.po`` (:mod:`multigpu.book.lang`): ``update``
also extracts the messages marked ``_("...")`` / ``N_("...")`` in ``src/multigpu/book/*.py`` with Babel and
merges them into it, and ``check`` reports its gaps the same way (page ``multigpu``).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from babel.messages import pofile
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file

from multigpu.book import lang

ROOT = Path(__file__).resolve().parents[3]
LOCALES = ROOT / "book" / "locales"
LANGUAGE = "zh_CN"
CATALOGS = LOCALES / LANGUAGE / "LC_MESSAGES"
#: The page whose catalog holds the site's title and the captions of the table of contents.
ROOT_PAGE = "book/intro"
#: The Python modules whose messages the package's catalog holds, and that catalog (Chinese).
PY_SOURCES = Path(__file__).resolve().parent
#: The model's package, whose findings' messages (every layer under the book) have a catalog of their own
#: (:data:`multigpu.book.lang.FINDINGS`).
FINDING_SOURCES = PY_SOURCES.parent
PY_CATALOG = lang.catalog_path("zh")


def _bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


#: myst-nb's prompts on a folded code cell ("Show code cell source"), shown in a translated edition without the
#: English word for what is folded.
CODE_PROMPTS = {"nb_code_prompt_show": lang.N_("Show code cell"), "nb_code_prompt_hide": lang.N_("Hide code cell")}


def config(path: Path, *, language: str | None = None, execute: str | None = None,
           cache: Path | None = None) -> Path:
    """Write the book's ``_config.yml`` to ``path`` with ``language`` (Sphinx's), the notebooks' execution mode
    and cache folder replaced where given, and every path made absolute (the copy lives outside the book)."""
    settings = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = settings["sphinx"]
    sphinx["local_extensions"] = {name: str(ROOT / folder) for name, folder in sphinx["local_extensions"].items()}
    settings["bibtex_bibfiles"] = [str(ROOT / f) for f in settings["bibtex_bibfiles"]]
    settings["html"]["favicon"] = str(ROOT / settings["html"]["favicon"])
    for key in ("html_extra_path", "html_static_path", "locale_dirs"):
        sphinx["config"][key] = [str(ROOT / f) for f in sphinx["config"][key]]
    if language:
        sphinx["config"]["language"] = language
        settings["title"] = translate(settings["title"], language)
        short = {locale: code for code, locale in lang.LOCALES.items()}.get(language)
        if short:
            sphinx["config"].update({key: lang.label(text, short) for key, text in CODE_PROMPTS.items()})
    if execute:
        settings["execute"]["execute_notebooks"] = execute
    if cache:
        settings["execute"]["cache"] = str(cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(settings, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def translate(text: str, language: str, page: str = ROOT_PAGE) -> str:
    """``text`` as the catalog of ``page`` translates it into ``language`` (itself where there is no catalog
    or no translation): for the strings Sphinx does not translate itself, the site's title and the table of
    contents' captions, which the root page's catalog holds."""
    path = LOCALES / language / "LC_MESSAGES" / f"{page}.po"
    if not path.exists():
        return text
    with path.open("rb") as handle:
        message = pofile.read_po(handle).get(text)
    return message.string if message is not None and message.string and not message.fuzzy else text


def toc(path: Path, language: str) -> Path:
    """Write the book's ``_toc.yml`` to ``path`` with its part captions translated into ``language``."""
    contents = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in contents.get("parts", []):
        if "caption" in part:
            part["caption"] = translate(part["caption"], language)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(contents, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def templates(out: Path) -> Path:
    """Build the message templates (``.pot``, one per page) of the book's Markdown into ``out``; return the
    folder that holds them. The notebooks are not executed: their Markdown cells are all gettext reads."""
    settings = config(out / "_config.gettext.yml", execute="off")
    command = [_bin("jupyter-book"), "build", str(ROOT), "--builder", "custom", "--custom-builder", "gettext",
               "--config", str(settings), "--path-output", str(out)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return out / "_build" / "gettext"


def _modules(sources: Path) -> list[tuple[Path, str]]:
    """The modules whose messages the catalogs hold, each with its catalog: ``sources/*.py`` by
    :func:`multigpu.book.lang.domain`, and for the package's own sources the modules of the layers under the
    book, whose findings' messages (:func:`multigpu.common.findings.msg`) go to :data:`multigpu.book.lang.FINDINGS`."""
    found = [(path, lang.domain(path.stem)) for path in sorted(sources.glob("*.py"))]
    if sources == PY_SOURCES:
        found += [(path, lang.FINDINGS) for path in sorted(FINDING_SOURCES.rglob("*.py"))
                  if not path.is_relative_to(PY_SOURCES)]
    return found


def python_template(sources: Path = PY_SOURCES, name: str | None = None) -> Catalog:
    """The messages of the modules of :func:`_modules` (:data:`multigpu.book.lang.KEYWORDS`), in file order;
    only those of catalog ``name`` (:func:`multigpu.book.lang.domain`) when given."""
    template = Catalog(domain=name or lang.DOMAIN, project="multigpu")
    for path, domain in _modules(sources):
        if name is not None and domain != name:
            continue
        for line, message, comments, _context in extract_from_file("python", path, keywords=lang.KEYWORDS,
                                                                    comment_tags=("NOTE:",)):
            template.add(message, locations=[(path.name, line)], auto_comments=comments)
    return template


def python_domains(sources: Path = PY_SOURCES) -> list[str]:
    """The catalogs the modules of :func:`_modules` need, :data:`multigpu.book.lang.DOMAIN` first."""
    names = {domain for _, domain in _modules(sources)}
    return sorted(names, key=lambda name: (name != lang.DOMAIN, name))


def update_python(path: Path | None = None, sources: Path = PY_SOURCES) -> Path:
    """Merge the messages of :func:`python_template` into the catalog at ``path`` (created if missing): new
    messages arrive empty, changed ones fuzzy, gone ones are dropped; return ``path``. Without ``path``, every
    catalog of :func:`python_domains` gets its own modules' messages; return their folder."""
    if path is None:
        for name in python_domains(sources):
            _merge_python(lang.catalog_path("zh", name), python_template(sources, name))
        return PY_CATALOG.parent
    return _merge_python(path, python_template(sources))


def _merge_python(path: Path, template: Catalog) -> Path:
    if path.exists():
        with path.open("rb") as handle:
            catalog = pofile.read_po(handle)
    else:
        comment = ("# The Chinese of the text the book's notebooks compute (multigpu.book.lang).\n"
                   "# Messages come from `make i18n`; translate each, keeping its {fields}.")
        catalog = Catalog(locale=LANGUAGE, domain=template.domain, project="multigpu", fuzzy=False,
                          header_comment=comment)
    catalog.update(template, update_creation_date=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        pofile.write_po(handle, catalog, width=76, no_location=True, ignore_obsolete=True)
    lang.reload()
    return path


def update() -> Path:
    """Regenerate the templates and merge them into the catalogs (new messages arrive empty, changed ones
    fuzzy), the package's Python catalog too (:func:`update_python`); return the catalogs' folder."""
    update_python()
    with tempfile.TemporaryDirectory() as tmp:
        pot = templates(Path(tmp))
        subprocess.run([_bin("sphinx-intl"), "update", "-p", str(pot), "-d", str(LOCALES), "-l", LANGUAGE],
                       cwd=ROOT, check=True, capture_output=True)
    for path in CATALOGS.rglob("*.po"):  # no source locations: they name the machine's folders
        with path.open("rb") as handle:
            catalog = pofile.read_po(handle)
        with path.open("wb") as handle:
            pofile.write_po(handle, catalog, width=76, no_location=True)
    return CATALOGS


@dataclass(frozen=True)
class Gap:
    """A message the Chinese edition lacks: ``why`` is "missing", "empty" or "fuzzy"."""

    page: str
    msgid: str
    why: str


def _catalog_gaps(page: str, template: Catalog, po_path: Path) -> list[Gap]:
    """Every message of ``template`` that the catalog at ``po_path`` lacks, leaves empty or marks fuzzy."""
    translated = {}
    if po_path.exists():
        with po_path.open("rb") as handle:
            translated = {m.id: m for m in pofile.read_po(handle) if m.id}
    out = []
    for message in template:
        if not message.id:
            continue
        found = translated.get(message.id)
        why = "missing" if found is None else "fuzzy" if found.fuzzy else "empty" if not found.string else None
        if why:
            out.append(Gap(page, str(message.id), why))
    return out


def gaps(pot_dir: Path, catalogs: Path = CATALOGS) -> list[Gap]:
    """Every message of the templates in ``pot_dir`` that the catalogs lack, leave empty or mark fuzzy."""
    out: list[Gap] = []
    for pot in sorted(pot_dir.rglob("*.pot")):
        page = pot.relative_to(pot_dir).with_suffix("").as_posix()
        with pot.open("rb") as handle:
            out += _catalog_gaps(page, pofile.read_po(handle), catalogs / f"{page}.po")
    return out


def python_gaps(path: Path | None = None, sources: Path = PY_SOURCES, name: str | None = None) -> list[Gap]:
    """Every message of the Python modules (:func:`python_template` of catalog ``name``, or of all, extracted
    afresh) that the catalog at ``path`` lacks, leaves empty or marks fuzzy; without ``path``, every catalog's
    gaps, each page named for its catalog."""
    if path is not None:
        return _catalog_gaps(name or lang.DOMAIN, python_template(sources, name), path)
    return [gap for name in python_domains(sources)
            for gap in _catalog_gaps(name, python_template(sources, name), lang.catalog_path("zh", name))]


def check() -> list[Gap]:
    """Regenerate the templates (pages and Python messages) and return the catalogs' gaps."""
    with tempfile.TemporaryDirectory() as tmp:
        return gaps(templates(Path(tmp))) + python_gaps()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["update"]:
        print(f"catalogs updated in {update().relative_to(ROOT)}")
        return 0
    if args[:1] == ["check"]:
        found = check()
        for gap in found[:50]:
            print(f"{gap.page}: {gap.why}: {gap.msgid[:80]!r}")
        print(f"{len(found)} message(s) missing, empty or fuzzy" if found else "every message is translated")
        return 1 if found else 0
    print("usage: python -m multigpu.book.i18n update|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
