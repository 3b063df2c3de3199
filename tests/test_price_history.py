"""Dated list prices kept as history (``data/price_history.csv``): read against their schema, older than any
price file's window, paired only where nothing but the wiring differs, and told in chapter 4's sentence."""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import date
from pathlib import Path

import pytest

from multigpu.book import ch04_cost, lang
from multigpu.common import datafiles
from multigpu.common.errors import InputError
from multigpu.market import history, pricecheck, prices

HEADER = ("provider,instance,gpu,memory_GB_per_gpu,gpus_per_instance,interconnect,price_per_hour,currency,pricing,"
          "observed,source")
PCIE = "Cloud,P8,v100-pcie,16,8,pcie3-x16,100,CNY,on-demand,2019-02-27,https://example.org/p"
NVLINK = "Cloud,N8,v100-sxm2,16,8,nvlink2,110,CNY,on-demand,2019-02-27,https://example.org/p"


def read(tmp_path: Path, *rows: str) -> tuple[history.PastOffer, ...]:
    path = tmp_path / "history.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return tuple(row for _line, row in datafiles.read(path, history.PastOffer))


def test_tencent_2019_list_prices_pair_v100_16gb_by_wiring_only():
    # Tencent Cloud GPU price page (tencentyun/qcloud-documents,
    # product/计算与网络/GPU 云服务器/购买指导/价格总览.md, commit ae3c5e5b0e039d7345bd56926b169e131160f62a,
    # 2019-02-27): GN10.20XLARGE320 (8x V100-PCIe 16 GB)
    # 139.02 CNY per hour, GN10S.18XLARGE320 (8x V100-NVLINK-16G) 142.36; the 4-GPU pair 69.51 and 71.18.
    pairs = history.past_premiums()
    assert [(p.nvlink_instance, p.pcie_instance) for p in pairs] == [
        ("GN10S.18XLARGE320", "GN10.20XLARGE320"), ("GN10S.9XLARGE160", "GN10.10XLARGE160")]
    assert pairs[0].premium_pct == pytest.approx(100 * (142.36 / 139.02 - 1))
    assert pairs[1].premium_pct == pytest.approx(100 * (71.18 / 69.51 - 1))
    assert {p.gpu_name for p in pairs} == {"Tesla V100"} and {p.memory_GB_per_gpu for p in pairs} == {16}
    assert all("ae3c5e5b0e039d7345bd56926b169e131160f62a" in p.source for p in pairs)


def test_history_is_older_than_the_price_files_window():
    """A row the price file would warn of as out of date, and nothing newer: a history row is never an offer."""
    newest = max(prices.default_table().offers["observed"])
    for offer in history.past_offers():
        assert (newest - offer.observed).days > pricecheck.MAX_OBSERVATION_AGE_DAYS, offer.instance
        assert offer.source.startswith("https://github.com/tencentyun/qcloud-documents/blob/")


def test_a_pair_needs_the_same_memory_size_and_date(tmp_path):
    assert [p.premium_pct for p in history.past_premiums(read(tmp_path, PCIE, NVLINK))] == pytest.approx([10.0])
    for changed in (NVLINK.replace(",16,8,", ",32,8,"), NVLINK.replace("2019-02-27", "2019-02-28"),
                    NVLINK.replace(",8,nvlink2", ",4,nvlink2"), NVLINK.replace("on-demand", "reserved"),
                    NVLINK.replace("v100-sxm2", "a100-sxm4-40gb")):
        assert not history.past_premiums(read(tmp_path, PCIE, changed)), changed
    bridged = NVLINK.replace("nvlink2", "nvlink-bridge-a100")  # bridged pairs are neither side of a pair here
    assert not history.past_premiums(read(tmp_path, PCIE, bridged))


def test_a_bad_row_names_its_line_and_column(tmp_path):
    with pytest.raises(InputError, match=r"history\.csv:3: column 'gpu'"):
        read(tmp_path, PCIE, NVLINK.replace("v100-sxm2", "v100-sxm9"))
    with pytest.raises(InputError, match=r"history\.csv:2: column 'memory_GB_per_gpu'"):
        read(tmp_path, PCIE.replace(",16,8,", ",0,8,"))


def test_the_sentence_follows_its_numbers():
    pair = history.past_premiums()[0]
    text = ch04_cost.history_sentence([pair], 16.0)
    assert "2.4 %" in text and "142.36 CNY" in text and "139.02 CNY" in text and "16 %" in text
    assert "2019-02-27" in text and "8 Tesla V100 GPUs of 16 GB" in text
    dearer = dataclasses.replace(pair, nvlink_price_per_hour=2 * pair.pcie_price_per_hour)
    assert "100.0 %" in ch04_cost.history_sentence([dearer], 16.0)
    assert "no pair to compare" in ch04_cost.history_sentence([pair], math.nan)
    assert "no same-day pair" in ch04_cost.history_sentence([], 16.0)
    with lang.using("zh"):
        chinese = ch04_cost.history_sentence([pair], 16.0)
    assert "¥142.36" in chinese and "2.4 %" in chinese and "16 %" in chinese and "wired" not in chinese
    assert chinese.startswith("腾讯云") and text.startswith("Tencent Cloud")  # the provider's own name in Chinese
    other = dataclasses.replace(pair, provider="Example Cloud")  # a provider an analyst's file names keeps its name
    with lang.using("zh"):
        assert ch04_cost.history_sentence([other], 16.0).startswith("Example Cloud")
    assert pair.observed == date(2019, 2, 27)


def test_the_cli_lists_each_pair_with_its_named_fields(capsys):
    from multigpu.cli import main
    from multigpu.cli.commands import prices as prices_command

    assert main(["prices", "history", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [tuple(row) for row in rows] == [prices_command._HISTORY_COLUMNS] * len(history.past_premiums())
    assert rows[0]["premium_pct"] == pytest.approx(2.40, abs=0.005) and rows[0]["nvlink_price_per_hour"] == 142.36
    assert main(["prices", "history", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == ",".join(prices_command._HISTORY_COLUMNS)
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert all(f"`{column}`" in readme for column in prices_command._HISTORY_COLUMNS)
