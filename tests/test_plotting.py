"""The house figure style: complete labels, byte-stable SVG, Chinese text without warnings."""

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
