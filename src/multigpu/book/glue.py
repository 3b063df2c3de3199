"""The one way computed values reach the book's prose: myst-nb ``glue``, fed by the chapter modules.

A chapter module (``multigpu.book.ch04_cost``, ...) returns its prose values as
a dict of names to values (:class:`Facts`); the notebook glues them all with
one call, :func:`glue_all`, and the Markdown cites them by name:

- numbers (int, float, numpy scalars) are glued as plain Python numbers, for
  ``{glue:text}`name:.1f``` (a numpy scalar would print ``np.float64(...)``);
- text (str) is glued as Markdown, for ``{glue:md}`name```: computed
  sentences, names, formatted values with their units.

No number the model produces is typed in a notebook or in the prose.

Text in both editions: a chapter module computes its text facts once per language from one execution
(:func:`per_language`): ``in_short`` is the English, ``in_short_zh`` the Chinese, which the page's Chinese
catalog cites (``{glue:md}`in_short_zh```). Numbers are glued once, under one name, for both editions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from multigpu.book import lang, vocabulary
from multigpu.book.lang import N_, _
from multigpu.common.findings import Finding, Sentence
from multigpu.evidence.claims import Verdict

#: What a chapter module returns for its prose: name -> number or Markdown text.
Facts = dict[str, Any]


def plain(value: Any) -> Any:
    """A numpy scalar as a plain Python number (myst-nb would print ``np.float64(...)``)."""
    return value.item() if hasattr(value, "item") else value


#: Significant digits a glued float keeps: far more than any prose shows (a few), far fewer than the 15-17 in
#: which two BLAS kernels' sums may differ, so the stored outputs nbval compares are the same on any machine.
GLUED_DIGITS = 10


def glue(name: str, value: Any) -> Any:
    """Glue one value under ``name``: text as Markdown (``{glue:md}``), anything else as a plain value
    (``{glue:text}``), a float to :data:`GLUED_DIGITS` significant digits; return what was glued."""
    from IPython.display import Markdown
    from myst_nb import glue as _glue

    value = Markdown(value) if isinstance(value, str) else plain(value)
    if isinstance(value, float):
        value = float(f"{value:.{GLUED_DIGITS}g}")
    _glue(name, value, display=False)
    return value


def glue_all(values: Mapping[str, Any]) -> None:
    """Glue every item of ``values`` (a chapter module's :data:`Facts`) with :func:`glue`."""
    for name, value in values.items():
        glue(name, value)


def per_language(make: Callable[[], Facts]) -> Facts:
    """Text facts in every language from one execution: ``make()`` runs once per language of the book
    (:func:`multigpu.book.lang.using`); English keeps each name, another language adds ``_<language>``."""
    out: Facts = {}
    for language, values in lang.per_language(make).items():
        suffix = "" if language == "en" else f"_{language}"
        out |= {f"{name}{suffix}": value for name, value in values.items()}
    return out


def render(finding: Finding) -> str:
    """``finding`` (:mod:`multigpu.common.findings`) in the current language: its message from the catalogs
    (:func:`multigpu.book.lang.label`: outside English a message without a translation is a LookupError), its
    values shown as they are typed."""
    return finding.render(vocabulary.label)


def say(text: Any) -> Any:
    """A value of the evidence layer as the current language shows it: a :class:`~multigpu.common.findings.
    Sentence` or a :class:`Finding` rendered from the catalogs (:func:`render`), any other text as its message
    (:func:`multigpu.book.lang.label`: outside English, text without a translation is a LookupError), anything
    else (a number, None) as it is."""
    if isinstance(text, Sentence):
        return text.render(vocabulary.label)
    if isinstance(text, Finding):
        return render(text)
    return lang.label(text) if isinstance(text, str) else text


#: The verdicts' words (:data:`multigpu.evidence.claims.VERDICTS`), as messages.
VERDICT_WORDS = (N_("holds"), N_("holds-with-caveat"), N_("misleading"), N_("wrong"), N_("not-checkable"))
#: The groups of a verdict's tests, as :func:`multigpu.evidence.claims.tests_markdown` makes them: label, the
#: kinds of test it takes and their outcome.
TEST_GROUPS = ((N_("Holds"), ("fact", "conclusion"), True), (N_("Fails"), ("fact", "conclusion"), False),
               (N_("Caveat"), ("caveat",), True), (N_("Missing"), ("input",), False))


def tests_markdown(verdict: Verdict) -> str:
    """What decided ``verdict`` as Markdown sentences in the current language, each test's finding rendered from
    the catalogs (:func:`render`); in English exactly :func:`multigpu.evidence.claims.tests_markdown`."""
    tests = getattr(verdict.rule, "tests", ())
    sentences = []
    for group, kinds, passed in TEST_GROUPS:
        texts = [render(t.finding) for t in tests if t.kind in kinds and t.passed == passed]
        if texts:
            sentences.append(_("*{label}:* {tests}. ", label=lang.label(group), tests=_("; ").join(texts)))
    return "".join(sentences).rstrip()


def verdict_facts(checked: Mapping[str, Verdict]) -> Facts:
    """For each claim id, in the current language: ``<id>_verdict`` (the verdict in bold) and ``<id>_tests``
    (what decided it, :func:`tests_markdown`), so that a chapter states no judgement of its own. Both editions:
    :func:`per_language` of this."""
    out: Facts = {}
    for claim_id, verdict in checked.items():
        out[f"{claim_id.lower()}_verdict"] = f"**{lang.label(verdict.verdict)}**"
        out[f"{claim_id.lower()}_tests"] = tests_markdown(verdict)
    return out
