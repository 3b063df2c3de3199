"""The house figure style: complete labels, byte-stable SVG, Chinese text without warnings."""

import math
import re
import warnings

import pytest

from multigpu.book import plotting


def draw(title: str = "All-reduce time / 全归约时间"):
    fig, ax = plotting.figure(title, "message size (bytes)", "time (µs)", source="test data")
    ax.plot([1, 2, 3], [1, 4, 9], label="ring / 环")
    ax.plot([1, 2, 3], [2, 3, 4], label="tree")
    ax.legend()
    return fig


def test_svg_is_byte_identical_between_runs():
    first, second = plotting.to_svg(draw()), plotting.to_svg(draw())
    assert first == second
    assert "<dc:date>" not in first


def test_chinese_labels_draw_without_missing_glyph_warnings():
    assert plotting.cjk_font() is not None, "no CJK font installed: run `make book` (installs fonts-wqy-microhei)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plotting.to_svg(draw("中文标题"))


def test_figure_has_title_labels_and_source():
    fig = draw()
    ax = fig.axes[0]
    assert fig._suptitle.get_text()
    assert ax.get_xlabel() == "message size (bytes)" and ax.get_ylabel() == "time (µs)"
    assert any(t.get_text() == "Source: test data" for t in fig.texts)


@pytest.mark.parametrize("missing", ["title", "xlabel", "ylabel", "source"])
def test_figure_refuses_missing_parts(missing):
    parts = {"title": "t", "xlabel": "x (s)", "ylabel": "y (s)", "source": "s"}
    parts[missing] = " "
    with pytest.raises(ValueError, match=missing):
        plotting.figure(**parts)


def test_lines_differ_in_style_for_greyscale_print():
    ax = draw().axes[0]
    first, second = ax.lines[:2]
    assert first.get_linestyle() != second.get_linestyle()
    assert first.get_marker() != second.get_marker()


# ------------------------------------------------------------------ readability: text floor, phone, contrast, layout


def sized(width_in: float, fontsize_pt: float, title: str = "Sized figure"):
    """A one-panel figure ``width_in`` inches wide whose smallest text is ``fontsize_pt``."""
    fig, ax = plotting.figure(title, "x (unit)", "y (unit)", source="test", figsize=(width_in, 3.0))
    ax.plot([1, 2], [1, 2])
    ax.text(1.5, 1.5, "note", fontsize=fontsize_pt)
    return plotting.set_alt(fig, "A line from 1 to 2")


def test_min_text_px_is_the_smallest_font_at_rendered_size():
    narrow, wide = sized(5.0, 8.0), sized(11.0, 8.0)
    assert plotting.min_text_pt(narrow) == 8.0
    assert plotting.rendered_scale(narrow) == 1.0
    assert plotting.min_text_px(narrow) == pytest.approx(8.0 * 96 / 72)
    width = plotting.natural_width_px(wide)
    assert width > 11 * 96  # the saved width: the figure plus its padding
    assert plotting.min_text_px(wide) == pytest.approx(8.0 * 96 / 72 * plotting.COLUMN_PX / width)
    assert plotting.min_text_px(wide) < plotting.MIN_TEXT_PX  # shrunk to the column, 8 pt is too small


def test_min_text_px_counts_tick_labels_legends_and_the_source_line():
    fig, ax = plotting.figure("t", "x (unit)", "y (unit)", source="s", figsize=(5.0, 3.0))
    ax.plot([1, 2], [1, 2], label="line")
    ax.legend(fontsize=6)
    assert plotting.min_text_pt(fig) == 6
    ax.legend(fontsize=9)
    ax.tick_params(labelsize=5)
    assert plotting.min_text_pt(fig) == 5
    ax.tick_params(labelsize=9)
    fig.texts[-1].set_fontsize(4)  # the source line
    assert plotting.min_text_pt(fig) == 4
    fig.texts[-1].set_visible(False)  # hidden text does not count
    assert plotting.min_text_pt(fig) > 4


def test_show_refuses_small_text_naming_the_figure():
    with pytest.raises(ValueError, match="Too wide to read"):
        plotting.to_html(sized(11.0, 7.0, title="Too wide to read"))
    with pytest.raises(ValueError, match="Tiny notes"):
        plotting.show(sized(5.0, 6.0, title="Tiny notes"))


def test_show_needs_alt_text():
    fig, ax = plotting.figure("No alt", "x (unit)", "y (unit)", source="test")
    with pytest.raises(ValueError, match="No alt"):
        plotting.to_html(fig)
    with pytest.raises(ValueError, match="alt"):
        plotting.to_html(fig, alt=" ")
    with pytest.raises(ValueError, match="alt"):
        plotting.set_alt(fig, "")
    assert 'aria-label="given here"' in plotting.to_html(fig, alt="given here")


def test_html_is_byte_stable_accessible_and_offline():
    first, second = plotting.to_html(sized(6.0, 8.0)), plotting.to_html(sized(6.0, 8.0))
    assert first == second
    assert first.startswith('<figure class="mg-figure" data-min-text-px="10.6"')  # 8 pt, unshrunk
    assert '<div class="mg-figure-scroll" style="overflow-x:auto">' in first
    assert 'role="img" aria-label="A line from 1 to 2"' in first and "<title>A line from 1 to 2</title>" in first
    assert "<!DOCTYPE" not in first and "<?xml" not in first and "<metadata>" not in first
    assert not re.search(r'(src|href)="(https?:)?//', first) and "url(http" not in first and "@import" not in first


def test_html_keeps_the_floor_on_a_phone_and_fits_the_column_on_a_desktop():
    fig = sized(6.0, 8.0)
    page = plotting.to_html(fig)
    natural = float(re.search(r'viewBox="0 0 ([0-9.]+)', page).group(1)) * 96 / 72  # how the browser sizes it
    assert natural == pytest.approx(plotting.natural_width_px(fig), abs=2)
    narrowest = int(re.search(r"min-width:(\d+)px", page).group(1))
    widest = int(re.search(r"max-width:(\d+)px", page).group(1))
    assert widest == math.ceil(natural) and "width:100%" in page and 'width="100%"' in page
    assert 390 < narrowest <= widest  # a 390 px phone scrolls sideways rather than shrink the text
    stated = float(re.search(r'data-min-text-px="([0-9.]+)"', page).group(1))  # at natural size
    assert stated <= plotting.min_text_pt(fig) * 96 / 72 < stated + 0.1
    assert stated * narrowest / natural >= plotting.MIN_TEXT_PX  # the floor at the narrowest width
    assert stated * (narrowest - 1) / natural < plotting.MIN_TEXT_PX  # and no wider than it needs


def test_svg_ids_are_unique_per_figure():
    a = plotting.to_html(sized(6.0, 8.0, "First"))
    b = plotting.to_html(sized(6.0, 8.0, "Second"))
    ids_a, ids_b = set(re.findall(r'\bid="([^"]+)"', a)), set(re.findall(r'\bid="([^"]+)"', b))
    assert ids_a and not ids_a & ids_b
    assert all(ref in ids_a for ref in re.findall(r'href="#([^"]+)"', a))


def test_contrast_ratio_and_text_colour_follow_wcag():
    assert plotting.contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert plotting.contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert plotting.contrast_ratio("#767676", "white") == pytest.approx(4.54, abs=0.01)  # the AA edge grey
    assert plotting.text_color_on("#0072B2") == "#ffffff"  # Okabe-Ito blue
    assert plotting.text_color_on("#E69F00") == "#000000"  # Okabe-Ito orange
    for fill in plotting.COLORS + ["#404040", "#d9d9d9"]:
        assert plotting.contrast_ratio(plotting.text_color_on(fill), fill) >= plotting.MIN_CONTRAST


def test_contrast_check_finds_pale_text_on_bars_and_text_on_hatching():
    fig, ax = plotting.figure("t", "x (unit)", "y (unit)", source="s")
    ax.bar([0, 1], [10, 10], color=["#E69F00", "#0072B2"], hatch=["", "///"])
    ax.text(0, 5, "white on orange", color="white", ha="center", fontsize=8)
    ax.text(1, 5, "on hatching", color="white", ha="center", fontsize=8)
    ax.text(0, 8, "black on orange", color="black", ha="center", fontsize=8)
    problems = plotting.contrast_problems(fig)
    assert any("white on orange" in p and "contrast" in p for p in problems)
    assert any("on hatching" in p and "hatching" in p for p in problems)
    assert not any("black on orange" in p for p in problems)


def test_overlap_check_finds_a_title_on_an_axis_label():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3))
    ax.set_xlabel("a label at the bottom")
    fig.suptitle("a title pushed down", y=0.0, va="bottom")
    assert plotting.label_title_overlaps(fig)
    plt.close(fig)


def test_overlap_check_finds_two_panel_titles_that_meet():
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(5, 3))
    long = "HGX A100 8-GPU with 4 x 100 Gb/s AWS EFA, 16 GPUs, 2 node(s)"
    left.set_title(long, fontsize=9)
    right.set_title(long, fontsize=9)
    assert any("overlaps title" in m and m.startswith("title") for m in plotting.label_title_overlaps(fig))
    left.set_title("short", fontsize=9)
    right.set_title("short", fontsize=9)
    assert not plotting.label_title_overlaps(fig)
    plt.close(fig)


# ------------------------------------------------------------------ every figure the book makes


#: The book's figures drawn once per language (plotting.show_both), by "module.function".
CURRENCY_FIGURES = ("ch04.", "ch05.figure_class_costs", "ch05.figure_pareto")  # CNY first in the Chinese edition


def _book_figures() -> dict[str, object]:
    """Every figure the book's notebooks make, built as they build them (default price table and calibration),
    keyed by "module.function" (tornado charts: one per entry of evidence.cost.tornados); each again in Chinese, as the
    notebooks draw one per edition, keyed "module.function[zh]"."""
    from multigpu.book import lang

    figures = _figures_in_current_language()
    with lang.using("zh"):
        figures.update({f"{name}[zh]": fig for name, fig in _figures_in_current_language().items()})
    return figures


def _figures_in_current_language() -> dict[str, object]:
    from pathlib import Path

    from multigpu.book import app_claims, app_validation_figures, inputs
    from multigpu.book import ch01_generations as ch01
    from multigpu.book import ch02_figures as ch02fig
    from multigpu.book import ch03_figures as ch03fig
    from multigpu.book import ch04_figures as ch04fig
    from multigpu.book import ch05_figures as ch05fig
    from multigpu.book import ch05_guide as ch05
    from multigpu.evidence import bottlenecks, claims, guide, measurements, sweepchecks, underload, validation
    from multigpu.evidence import cost as analysis
    from multigpu.market import premium

    table, cal = inputs.price_table(), inputs.model_calibration()
    ref = guide.reference_pricing(table)
    verdicts = app_claims.claims_table(claims.check_all(claims.Inputs(prices=table)))
    titles = app_claims.chapter_titles(verdicts["chapter"], root=Path(__file__).resolve().parents[1])
    figures = {
        "ch01.figure_timeline": ch01.figure_timeline(),
        "ch01.figure_nvlink_pcie_ratio": ch01.figure_nvlink_pcie_ratio(),
        "ch01.figure_bytes_per_flop": ch01.figure_bytes_per_flop(),
        "ch01.figure_export_variants": ch01.figure_export_variants(),
        "ch02.figure_group_bandwidth": ch02fig.figure_group_bandwidth(),
        "ch02.figure_allreduce_vs_size": ch02fig.figure_allreduce_vs_size(cal),
        "ch02.figure_ring_terms": ch02fig.figure_ring_terms(cal),
        "ch02.figure_nvls_gain": ch02fig.figure_nvls_gain(cal),
        "ch02.figure_scaling": ch02fig.figure_scaling(cal),
        "ch02.figure_predicted_vs_measured": ch02fig.figure_predicted_vs_measured(measurements.compare(cal=cal)),
        "ch03.figure_training_breakdown": ch03fig.figure_training_breakdown(bottlenecks.training_breakdown(cal=cal)),
        "ch03.figure_decode_breakdown": ch03fig.figure_decode_breakdown(bottlenecks.decode_breakdown(cal=cal)),
        "ch03.figure_scaling": ch03fig.figure_scaling(bottlenecks.scaling(cal=cal)),
        "ch03.figure_dp_share": ch03fig.figure_dp_share(bottlenecks.dp_batch_sweep(cal=cal)),
        "ch03.figure_decode_ratio": ch03fig.figure_decode_ratio(bottlenecks.decode_ratio(cal=cal)),
        "ch03.figure_switch_benefit": ch03fig.figure_switch_benefit(bottlenecks.compare_fixed_batch(cal=cal)),
        "ch03.figure_under_load": ch03fig.figure_under_load(
            underload.curves(underload.best(underload.layouts(cal=cal)), cal=cal)),
        "ch03.figure_throughput_vs_rate": ch03fig.figure_throughput_vs_rate(cal),
        "ch04.figure_landscape": ch04fig.figure_landscape(table),
        "ch04.figure_break_even": ch04fig.figure_break_even(analysis.interconnect_values(),
                                                         premium.charged_premiums(table), table),
        "ch04.figure_best_by_class": ch04fig.figure_best_by_class(analysis.best_by_class(table=table), table),
        "ch05.figure_decision_matrix": ch05fig.figure_decision_matrix(guide.decisions(table), table),
        "ch05.figure_class_costs": ch05fig.figure_class_costs(ch05.class_cost_frames(table, ref), table, ref),
        "ch05.figure_pareto": ch05fig.figure_pareto(ch05.pareto_options(table, ref), table, ref),
        "app_claims.figure_verdicts_by_chapter": app_claims.figure_verdicts_by_chapter(
            app_claims.verdicts_by_chapter(verdicts, titles), table),
        "app_validation.figure_holdout_sweeps": app_validation_figures.figure_holdout_sweeps(
            sweepchecks.comparison(cal), cal),
        "app_validation.figure_holdout_sweeps[sealed]": app_validation_figures.figure_holdout_sweeps(
            sweepchecks.comparison(cal), cal, split="sealed"),
        "app_validation.figure_anchored": app_validation_figures.figure_anchored(sweepchecks.anchored_points(cal)),
        "app_validation.figure_scale_out": app_validation_figures.figure_scale_out(
            sweepchecks.scale_points(sweepchecks.comparison(cal))),
        "app_validation.figure_protocol_switches": app_validation_figures.figure_protocol_switches(cal),
        "app_validation.figure_twins": app_validation_figures.figure_twins(sweepchecks.twin_points(
            sweepchecks.comparison(cal), sweepchecks.held_out_wide_misses(sweepchecks.comparison(cal)))),
        "app_validation.figure_predicted_vs_measured": app_validation_figures.figure_predicted_vs_measured(
            validation.comparisons(cal)),
    }
    for i, (kind, workload_id, tornado) in enumerate(analysis.tornados(table)):
        figures[f"ch04.figure_tornado[{i}]"] = ch04fig.figure_tornado(kind, workload_id, tornado, table)
    return figures


@pytest.fixture(scope="module")
def book_figures():
    """:func:`_book_figures`, built once; the guide's options are memoised while building (the decision
    matrix, the class costs and the Pareto figure ask for the same options)."""
    import matplotlib.pyplot as plt

    from multigpu.evidence import guide

    memo, options = {}, guide.options

    def cached(model_id, kind, table=None, serve=None, cal=None, tokens_scale=1.0):
        key = (model_id, kind, id(table), repr(serve), id(cal), tokens_scale)
        if key not in memo:
            memo[key] = options(model_id, kind, table, serve, cal=cal, tokens_scale=tokens_scale)
        return memo[key].copy()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guide, "options", cached)
        patch.setitem(plt.rcParams, "figure.max_open_warning", 0)
        figures = _book_figures()
    yield figures
    for fig in figures.values():
        plt.close(fig)


def test_the_book_figures_are_every_figure_function(book_figures):
    from multigpu.book import (
        app_claims,
        app_validation_figures,
        ch01_generations,
        ch02_figures,
        ch03_figures,
        ch04_figures,
        ch05_figures,
    )

    modules = {"ch01": ch01_generations, "ch02": ch02_figures, "ch03": ch03_figures, "ch04": ch04_figures,
               "ch05": ch05_figures, "app_claims": app_claims, "app_validation": app_validation_figures}
    defined = {f"{short}.{name}" for short, module in modules.items() for name in dir(module)
               if name.startswith("figure_") and callable(getattr(module, name))}
    built = {name.split("[")[0] for name in book_figures}
    assert built == defined


@pytest.fixture(scope="module")
def checked(book_figures):
    """:func:`plotting.readability` of every book figure (one drawing each)."""
    return {name: plotting.readability(fig) for name, fig in book_figures.items()}


def test_every_book_figure_keeps_text_above_the_floor(checked):
    small = {name: round(c["min_text_px"], 2) for name, c in checked.items() if c["min_text_px"] < plotting.MIN_TEXT_PX}
    assert not small, f"text under {plotting.MIN_TEXT_PX} px in the {plotting.COLUMN_PX} px column: {small}"
    assert all(c["phone_min_width_px"] <= plotting.COLUMN_PX for c in checked.values())


def test_every_book_figure_has_alt_text_with_its_numbers(book_figures):
    for name, fig in book_figures.items():
        alt = plotting.get_alt(fig)
        assert alt and len(alt) > 40 and re.search(r"\d", alt), (name, alt)
    alts = [plotting.get_alt(fig) for fig in book_figures.values()]
    assert len(set(alts)) == len(alts)  # each says what its own figure shows


def test_text_on_fills_meets_wcag_aa_in_every_book_figure(checked):
    assert not {name: c["contrast_problems"] for name, c in checked.items() if c["contrast_problems"]}


def test_no_axis_label_runs_into_a_title_in_any_book_figure(checked):
    assert not {name: c["overlaps"] for name, c in checked.items() if c["overlaps"]}


def test_decision_matrix_is_a_clean_labelled_grid(book_figures):
    from matplotlib.patches import Rectangle

    fig = book_figures["ch05.figure_decision_matrix"]
    ax = fig.axes[0]
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(cells) == len(ax.texts) > 0
    assert not any(p.get_hatch() for p in cells)
    short = {"PCIe", "bridge", "mesh", "NVSwitch", "multi-node", "none"}
    assert {t.get_text().split("\n")[0] for t in ax.texts} <= short  # the class is named, not only coloured
    for cell in cells:
        assert plotting.contrast_ratio("#000000", cell.get_facecolor()) >= 7  # light fills
    assert len({cell.get_facecolor() for cell in cells}) >= 3


def test_show_displays_the_html_and_closes_the_figure(monkeypatch):
    import IPython.display
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    fig = sized(6.0, 8.0)
    plotting.show(fig)
    assert fig not in map(plt.figure, plt.get_fignums())  # closed
    assert len(shown) == 1 and shown[0].data == plotting.to_html(sized(6.0, 8.0))


def test_a_book_figure_shows_as_html(book_figures):
    page = plotting.to_html(book_figures["ch05.figure_decision_matrix"])
    assert page.count("<svg") == 1 and "Grid of 7 models" in page


def test_source_line_wraps_between_clauses_to_the_figure_width():
    source = "price file prices.csv (sha256 d2f37d17e891); " + "; ".join(f"multigpu.module{i}.function" for i in range(8))
    fig, _ = plotting.figure("t", "x (unit)", "y (unit)", source=source, figsize=(5.0, 3.0))
    text = fig.texts[-1].get_text()
    assert text.count("\n") >= 2 and "price file prices.csv (sha256 d2f37d17e891);" in text.splitlines()[0]
    assert text.replace(";\n", "; ").replace("\n", " ") == f"Source: {source}"
    assert plotting.natural_width_px(fig) < 5.4 * 96  # the source line does not widen the figure


# ------------------------------------------------------------------ both editions from one execution


def test_the_source_line_and_ranges_come_in_the_current_language():
    from multigpu.book import lang

    with lang.using("zh"):
        fig = draw()
        assert any(t.get_text() == "来源：test data" for t in fig.texts)
        assert plotting.span([3, 180], "%") == "3 至 180 %" and plotting.span([], "%") == "没有有限值"
    assert plotting.span([3, 180], "%") == "3 to 180 %"


def test_ranges_read_as_people_write_numbers():
    """Alt text never shows an exponent or a rounded count: three significant figures for a measured or
    modelled value, a whole number (a batch, a GPU count) exactly."""
    assert plotting.span([70798.6, 177534.1], "µs") == "70,800 to 178,000 µs"
    assert plotting.span([7.77, 3.25e5], "µs") == "7.77 to 325,000 µs"
    assert plotting.span([64, 2048]) == "64 to 2,048" and plotting.span([12.04, 0.000123]) == "0.000123 to 12"
    assert plotting.span([0.5, 0.514], fmt=".2g") == "0.5 to 0.51" and "e+" not in plotting.span([1e9, 2.5e12])


def test_chinese_sources_wrap_at_chinese_semicolons_within_the_width():
    source = ("multigpu 目录，data/gpus.csv（H800、H20 和 L20 依据二手资料）；"
              "multigpu.evidence.generations.export_variants")
    text = plotting.wrap_source(source, 5.0)
    assert text.splitlines()[0].endswith("；") and text.replace("\n", "") == source
    chars = int(5.0 * 72 / (0.55 * plotting.SOURCE_PT))
    assert all(plotting.text_width(line) <= chars for line in text.splitlines())


def drawn_in_language():
    """A small figure whose words are in the current language (the source line's "Source:")."""
    from multigpu.book import lang

    fig = draw("标题" if lang.current() == "zh" else "Title")
    return plotting.set_alt(fig, f"Line chart in {lang.current()}, 1 to 9")


def test_show_both_displays_one_figure_per_edition_and_closes_them(monkeypatch):
    import IPython.display
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    before = set(plt.get_fignums())
    plotting.show_both(drawn_in_language)
    assert set(plt.get_fignums()) == before  # both closed
    (page,) = [obj.data for obj in shown]
    with plotting.phone_layout():
        phones = plotting.draw_editions(drawn_in_language)
    assert page == plotting.editions_html(plotting.draw_editions(drawn_in_language), phones)
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    assert en.startswith('<div class="mg-lang-en"><figure class="mg-figure"') and en.count("<svg") == 2
    assert zh.startswith('<figure class="mg-figure"') and zh.count("<svg") == 2
    assert en.count('<template class="mg-figure-phone"') == zh.count('<template class="mg-figure-phone"') == 1
    assert "Line chart in en" in en and "Line chart in zh" in zh  # each with its own alt text


def test_show_of_figures_by_language_checks_each(monkeypatch):
    """The text floor and the alt text are checked for every language's figure, not only the first."""
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: None)
    with pytest.raises(ValueError, match="alt text"):
        plotting.show({"en": drawn_in_language(), "zh": draw()})
    with pytest.raises(ValueError, match="under the 9 px floor"):
        plotting.show({"en": drawn_in_language(), "zh": plotting.set_alt(sized(12.0, 6.0), "tiny text, 1 to 2")})
    with pytest.raises(ValueError, match="own alt text"):
        plotting.show({"en": drawn_in_language(), "zh": drawn_in_language()}, alt="one for both")


def test_the_chinese_figures_are_chinese(book_figures):
    """Each figure has a Chinese twin with Chinese words: title, axis labels, source line, alt text; the same
    legend entries (on the validation page, each in Chinese) and, outside the cost figures (CNY first there), the
    same numbers in its alt text. The readability checks of both twins are the tests above."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for name, english in [(n, f) for n, f in book_figures.items() if not n.endswith("[zh]")]:
        fig = book_figures[f"{name}[zh]"]
        assert cjk.search(fig._suptitle.get_text()) and cjk.search(plotting.get_alt(fig)), name
        assert fig.texts[-1].get_text().startswith("来源："), name
        for ax, ax_en in zip(fig.axes, english.axes):
            for text, text_en in ((ax.get_xlabel(), ax_en.get_xlabel()), (ax.get_ylabel(), ax_en.get_ylabel())):
                assert not re.search("[a-z]{4}", text_en) or cjk.search(text), (name, text)
            if ax_en.get_legend() is not None:
                assert len(ax.get_legend().get_texts()) == len(ax_en.get_legend().get_texts()), name
                if name.startswith("app_validation."):  # the validation page's legends are words throughout
                    assert all(cjk.search(t.get_text()) for t in ax.get_legend().get_texts()), name
        if not name.startswith(CURRENCY_FIGURES):
            numbers = [sorted(re.findall(r"\d+(?:\.\d+)?", plotting.get_alt(f))) for f in (fig, english)]
            assert numbers[0] == numbers[1], name

def test_a_phone_drawing_stacks_the_panels_at_the_phone_width():
    with plotting.phone_layout():
        fig, axes = plotting.figure("Two panels side by side on a desktop", "x (unit)", "y (unit)", source="s",
                                    ncols=2, figsize=(6.8, 3.6))
        grid, _ = plotting.figure("Six panels", "x (unit)", "y (unit)", source="s", ncols=3, nrows=2)
    assert fig.mg_phone and fig.get_figwidth() == plotting.PHONE_FIGWIDTH_IN
    assert len(axes) == 2 and axes[0].get_subplotspec().get_gridspec().get_geometry() == (2, 1)
    assert grid.axes[0].get_subplotspec().get_gridspec().get_geometry() == (3, 2)  # many panels keep two columns
    assert not getattr(draw(), "mg_phone", False)


def test_phone_fit_puts_the_legend_under_the_panel_and_keeps_the_text_on_a_phone():
    with plotting.phone_layout():
        fig = plotting.set_alt(draw("A line chart whose title needs two lines on a phone's narrow figure"),
                               "Line chart, 1 to 9")
    height = fig.get_figheight()
    plotting.phone_fit(fig)
    renderer = plotting._renderer(fig)
    legend, ax = fig.legends[0], fig.axes[0]
    assert legend.get_window_extent(renderer).y1 < ax.xaxis.get_tightbbox(renderer).y0  # under the x axis
    assert fig.get_figheight() > height  # the panel keeps its height
    assert "\n" in fig._suptitle.get_text()
    assert plotting.min_text_px(fig, plotting.PHONE_COLUMN_PX) >= plotting.MIN_TEXT_PX
    assert not plotting.label_title_overlaps(fig)


def test_phone_fit_wraps_long_bar_labels_and_turns_crowded_ticks_upright():
    with plotting.phone_layout():
        fig, ax = plotting.figure("Bars", "value (unit)", "setup", source="s", figsize=(6.8, 5.0))
        ax.barh(range(4), [1, 2, 3, 4])
        ax.set_yticks(range(4), [f"8x A100 PCIe server, tensor parallel {i}: batch 32" for i in range(4)])
        ax.set_xticks(range(5), [f"label number {i}" for i in range(5)])
    plotting.phone_fit(fig)
    assert all("\n" in t.get_text() for t in ax.get_yticklabels())
    assert ax.get_xticklabels()[0].get_rotation() == 90


def test_html_carries_the_phone_drawing_in_a_template_and_refuses_one_too_small():
    with plotting.phone_layout():
        phone = plotting.phone_fit(plotting.set_alt(draw(), "Line chart, 1 to 9"))
    page = plotting.to_html(sized(6.0, 8.0), phone=phone)
    template = re.search(r'<template class="mg-figure-phone" data-min-text-px="([0-9.]+)" '
                         r'data-max-width="(\d+)" data-min-width="(\d+)">\n<svg', page)
    assert template and float(template.group(1)) >= plotting.MIN_TEXT_PX
    assert int(template.group(3)) <= plotting.PHONE_COLUMN_PX  # it fits a 390 px phone with its text at 9 px
    with pytest.raises(ValueError, match="phone drawing of figure"):
        plotting.to_html(sized(6.0, 8.0), phone=sized(6.0, 8.0, title="Desktop size"))


def test_show_both_gives_a_diagram_no_phone_drawing(monkeypatch):
    import IPython.display
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)

    def diagram():
        fig = plt.figure(figsize=(6.0, 3.0))
        fig.text(0.5, 0.5, "a diagram drawn without plotting.figure", fontsize=9)
        return plotting.set_alt(fig, "A diagram, 1 box")

    plotting.show_both(diagram)
    assert "mg-figure-phone" not in shown[0].data
