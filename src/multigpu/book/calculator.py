"""Chapter 4's price calculator: a reader's own prices against the model's GPU-hours, in the page itself.

:func:`gpu_hours` exports, at build time, the GPU-hours of every named workload on both systems of each
NVLink / PCIe pair of the chapter (:data:`multigpu.evidence.cost.VALUE_PAIRS`): GPU-hours per job for
training (the job's wall-clock hours x its GPUs), GPU-hours per million output tokens for serving, exactly
as :func:`multigpu.market.premium.interconnect_value` counts them. :func:`widget_html` turns them into one
self-contained HTML fragment (plain JavaScript, no request to any host) where the reader picks a pair and a
workload and types two prices per GPU-hour; the page multiplies GPU-hours by price (cost per job, or per
million output tokens) and gives the break-even premium, pcie_hours / nvlink_hours - 1. Without JavaScript
the fragment shows the same GPU-hours as a static table. :func:`show` displays it in a notebook.

All the widget's words, in each language, live in :data:`TEXT` (data, so a gettext catalog can take them
later). The fragment is byte-identical between runs (nbval compares stored outputs).
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

import pandas as pd

from multigpu.book import glue, lang, vocabulary
from multigpu.comm.calibration import Calibration
from multigpu.common.numtext import ESTIMATE_FIGURES, significant
from multigpu.evidence import answer, pcieside
from multigpu.evidence.cost import EXERCISE_PCIE_USD, VALUE_PAIRS
from multigpu.market import cost
from multigpu.market.workloads import Workload, workloads_table

#: GPUs per rented instance: the chapter compares 8-GPU servers.
GPUS_PER_INSTANCE = 8
#: The columns of :func:`gpu_hours`, in order.
COLUMNS = ("workload", "title", "title_zh", "kind", "system", "system_name", "system_name_zh", "pair", "side",
           "feasible", "reason", "gpu_hours", "unit")
#: The two sides of a pair, in the order of :data:`VALUE_PAIRS` (NVLink-class system first).
SIDES = ("nvlink", "pcie")
#: The unit of ``gpu_hours`` by workload kind (as :func:`multigpu.market.premium.interconnect_value` names it).
UNITS = {"train": "GPU-hours per job", "serve": "GPU-hours per 1M output tokens"}
#: The example prices the widget opens with: the PCIe offer in USD per GPU-hour, and the NVLink premium in %.
DEFAULT_PCIE_USD = EXERCISE_PCIE_USD
DEFAULT_PREMIUM_PCT = 20.0
#: Significant digits of the GPU-hours embedded in the page (stable output, far below the model's accuracy).
SIGNIFICANT = 12

#: Every visible word of the widget, by language. ``{currency}``, ``{amount}``, ``{per}``, ``{pct}``,
#: ``{reason}``, ``{price}``, ``{value}``, ``{rate}``, ``{nvlink}`` and ``{pcie}`` are filled in.
TEXT: dict[str, dict[str, str]] = {
    "en": {
        "html_lang": "en",
        "title": "Price calculator: NVLink or PCIe offer?",
        "intro": ("Type what two offers charge per GPU-hour. The calculator multiplies each price by the GPU-hours "
                  "the book's model gives for the workload on an NVLink system and on a PCIe system with the same "
                  "GPUs (per job for training, per million output tokens for serving), says which offer is "
                  "cheaper, and up to which premium the NVLink offer pays off."),
        "noscript": ("JavaScript is off, so the calculator cannot run. The table lists the GPU-hours it uses: "
                     "cost = GPU-hours x your price per GPU-hour."),
        "pair": "Systems compared",
        "pair_option": "{nvlink} vs {pcie}",
        "workload": "Workload",
        "group_train": "Training",
        "group_serve": "Serving",
        "pcie_price": "{side} offer price per GPU-hour ({currency})",
        "nvlink_price": "{side} offer price per GPU-hour ({currency})",
        "premium": "Premium of the {first} offer over the {second} offer (%)",
        "hint": "Editing the premium sets the first offer's price from the second's; editing either price updates "
                "the premium.",
        "fx_note": "Example prices converted at 1 USD = {rate} {currency}.",
        "offer": "Offer",
        "side_offer": "{side} offer",
        "hours_train": "GPU-hours per job",
        "hours_serve": "GPU-hours per 1M output tokens",
        "cost_train": "Cost per job",
        "cost_serve": "Cost per million output tokens",
        "per_train": "per job",
        "per_serve": "per million output tokens",
        "break_even": "Break-even premium",
        "break_even_price": "(NVLink pays off up to {price} per GPU-hour)",
        "break_even_any": "any (the PCIe system cannot run it)",
        "not_applicable": "n/a",
        "cannot_run": "cannot run: {reason}",
        "money": "{amount} {currency}",
        "percent": "{value} %",
        "verdict_first": ("{first} offer cheaper, by {amount} {per}: its premium of {asked} % is below the "
                          "break-even premium of {worth} % by more than the model's {band} % error."),
        "verdict_second": ("{second} offer cheaper, by {amount} {per}: the premium of {asked} % is above the "
                           "break-even premium of {worth} % by more than the model's {band} % error."),
        "verdict_close": ("Too close to call: the premium of {asked} % and the break-even premium of {worth} % "
                          "are within the model's {band} % error of each other (costs {nv} and {pc} {per})."),
        "verdict_nvlink_only": "Only the {first} offer can run this workload.",
        "verdict_pcie_only": "Only the {second} offer can run this workload.",
        "verdict_neither": "Neither system can run this workload.",
        "verdict_no_price": "Enter both prices as numbers above 0, with a decimal point (1.5).",
        "table_caption": "GPU-hours per workload from the model (cost = GPU-hours x price per GPU-hour)",
        "col_workload": "Workload",
        "col_nvlink": "NVLink: GPU-hours",
        "col_pcie": "PCIe: GPU-hours",
        "col_unit": "Unit",
    },
    "zh": {
        "html_lang": "zh-CN",
        "title": "价格计算器：选 NVLink 还是 PCIe 实例？",
        "intro": ("输入两个实例每 GPU 小时的价格。计算器把价格乘以本书模型给出的 GPU 小时数（训练按每个作业，"
                  "推理按每百万输出 token），比较同款 GPU 的 NVLink 系统与 PCIe 系统，指出哪个实例更便宜，"
                  "以及 NVLink 实例的溢价在多少以内仍然划算。"),
        "noscript": "JavaScript 已关闭，计算器无法运行。下表列出计算所用的 GPU 小时数：成本 = GPU 小时数 × 每 GPU 小时价格。",
        "pair": "比较的系统",
        "pair_option": "{nvlink} 对比 {pcie}",
        "workload": "工作负载",
        "group_train": "训练",
        "group_serve": "推理服务",
        "pcie_price": "{side}每 GPU 小时价格（{currency}）",
        "nvlink_price": "{side}每 GPU 小时价格（{currency}）",
        "premium": "{first}相对 {second}的溢价（%）",
        "hint": "修改溢价会按第二个实例的价格重新计算第一个实例的价格；修改任一价格会更新溢价。",
        "fx_note": "示例价格按 1 USD = {rate} {currency} 换算。",
        "offer": "实例",
        "side_offer": "{side}",
        "hours_train": "每个作业 GPU 小时数",
        "hours_serve": "每百万输出 token 的 GPU 小时数",
        "cost_train": "每个作业成本",
        "cost_serve": "每百万输出 token 成本",
        "per_train": "（每个作业）",
        "per_serve": "（每百万输出 token）",
        "break_even": "盈亏平衡溢价",
        "break_even_price": "（NVLink 每 GPU 小时价格不超过 {price} 即划算）",
        "break_even_any": "任意（PCIe 系统无法运行）",
        "not_applicable": "不适用",
        "cannot_run": "无法运行：{reason}",
        "money": "{amount} {currency}",
        "percent": "{value}%",
        "verdict_first": ("{first}更便宜，省 {amount}{per}：其溢价 {asked}% 低于盈亏平衡溢价 {worth}%，"
                          "差距超过模型 {band}% 的误差。"),
        "verdict_second": ("{second}更便宜，省 {amount}{per}：溢价 {asked}% 高于盈亏平衡溢价 {worth}%，"
                           "差距超过模型 {band}% 的误差。"),
        "verdict_close": ("难分高下：溢价 {asked}% 与盈亏平衡溢价 {worth}% 之差在模型 {band}% 的误差以内"
                          "（成本分别为 {nv} 和 {pc}{per}）。"),
        "verdict_nvlink_only": "只有 {first}能运行该工作负载。",
        "verdict_pcie_only": "只有 {second}能运行该工作负载。",
        "verdict_neither": "两个系统都无法运行该工作负载。",
        "verdict_no_price": "请输入两个大于 0 的价格，用小数点（1.5）。",
        "table_caption": "模型给出的各工作负载 GPU 小时数（成本 = GPU 小时数 × 每 GPU 小时价格）",
        "col_workload": "工作负载",
        "col_nvlink": "NVLink：GPU 小时数",
        "col_pcie": "PCIe：GPU 小时数",
        "col_unit": "单位",
    },
}


#: How the calculator names a side of a pair, by the system's interconnect class (as the decision table does:
#: "NVLink-class" against a PCIe server, "NVSwitch" against an NVLink mesh), in each language.
SIDE_WORDS = {"en": {"NVLink-class": "NVLink-class", "NVSwitch": "NVSwitch", "PCIe": "PCIe",
                     "NVLink mesh": "NVLink mesh"},
              "zh": {"NVLink-class": "NVLink 级实例", "NVSwitch": "NVSwitch 实例", "PCIe": "PCIe 实例",
                     "NVLink mesh": "NVLink 全互联实例"}}


def side_word(system_id: str, other_id: str) -> str:
    """The word for ``system_id``'s side of a pair against ``other_id`` (a key of :data:`SIDE_WORDS`)."""
    cls = cost.interconnect_class(system_id)
    if cls == "NVSwitch":
        return "NVLink-class" if cost.interconnect_class(other_id) == "PCIe only" else "NVSwitch"
    return {"PCIe only": "PCIe", "GPU mesh": "NVLink mesh"}.get(cls, cls)


def error_bands() -> dict[str, float]:
    """The model's error band (%) the verdict weighs a premium against, by workload kind, as the decision table
    shows it (:func:`multigpu.evidence.answer.shown`)."""
    sides = pcieside.verdict_errors()
    return {kind: answer.shown(sides[band].band_pct) for kind, band in answer.BAND.items()}


# ------------------------------------------------------------------ data


def gpu_hours(cal: Calibration | None = None) -> pd.DataFrame:
    """GPU-hours of every named workload on both systems of each pair of :data:`VALUE_PAIRS`, 8-GPU instances.

    One row per (pair, workload, side), columns :data:`COLUMNS`: ``gpu_hours`` is GPU-hours per job for
    training (wall-clock hours x the job's GPUs) and GPU-hours per million output tokens for serving (``unit``
    says which), NaN when ``feasible`` is False, and ``reason`` then says why (else ""). A price per GPU-hour
    times ``gpu_hours`` is the cost per job (per million output tokens) at full utilisation.
    """
    rows = [_row(w, pair, side, system, cal) for pair in VALUE_PAIRS for w in workloads_table().values()
            for side, system in zip(SIDES, pair)]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(w: Workload, pair: tuple[str, str], side: str, system: str, cal: Calibration | None) -> dict[str, Any]:
    """One workload on one system: GPU-hours per job (train) or per 1M output tokens (serve), or why not."""
    p = cost.plan(w.id, system, GPUS_PER_INSTANCE, cal)
    hours = p.time_h() * (w.gpus if w.kind == "train" else 1) if p.feasible else math.nan
    return {"workload": w.id, "title": w.title, "title_zh": w.title_zh or w.title, "kind": w.kind, "system": system,
            "system_name": vocabulary.system_name(system, "en"), "system_name_zh": vocabulary.system_name(system, "zh"),
            "pair": " / ".join(pair), "side": side,
            "feasible": bool(p.feasible), "reason": "" if p.feasible else p.reason, "gpu_hours": hours,
            "unit": UNITS[w.kind]}


def _round(x: float) -> float | None:
    """GPU-hours to :data:`SIGNIFICANT` significant digits; None (JSON null) when missing or infinite."""
    return None if x is None or not math.isfinite(x) else float(f"{x:.{SIGNIFICANT}g}")


def _pairs(hours: pd.DataFrame) -> list[dict[str, str]]:
    """The pairs of the frame, in its order: id and each side's system and catalogue name."""
    out: dict[str, dict[str, str]] = {}
    for r in hours.to_dict("records"):
        out.setdefault(r["pair"], {"pair": r["pair"]}).update({r["side"]: r["system"],
                                                                f"{r['side']}_name": r["system_name"]})
    for p in out.values():
        p.update(nvlink_word=side_word(p["nvlink"], p["pcie"]), pcie_word=side_word(p["pcie"], p["nvlink"]))
    return list(out.values())


def _workloads(hours: pd.DataFrame) -> list[dict[str, str]]:
    """The workloads of the frame, in its order: id, title and kind."""
    first = hours.drop_duplicates("workload")
    return [{"workload": r["workload"], "title": r["title"], "kind": r["kind"]} for r in first.to_dict("records")]


def widget_data(hours: pd.DataFrame, currency: str, text: dict[str, str],
                words: dict[str, str] | None = None) -> dict[str, Any]:
    """What the widget's script reads: pairs, workloads, one row per (workload, pair, side) with GPU-hours
    rounded to :data:`SIGNIFICANT` digits (null if infeasible) and the reason, the currency, the words, the
    words for each side (``words``, default English :data:`SIDE_WORDS`) and the error band per workload kind
    (:func:`error_bands`), which the verdict uses by the decision table's rule."""
    rows = [{"workload": r["workload"], "pair": r["pair"], "side": r["side"], "gpu_hours": _round(r["gpu_hours"]),
             "reason": r["reason"]} for r in hours.to_dict("records")]
    return {"currency": currency, "pairs": _pairs(hours), "workloads": _workloads(hours), "rows": rows,
            "text": text, "words": words or SIDE_WORDS["en"], "bands": error_bands(), "figures": ESTIMATE_FIGURES}


def _json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` (escaped as \\u00XX)."""
    out = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False, separators=(",", ":"))
    return out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# ------------------------------------------------------------------ HTML


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float, digits: int = 2) -> str:
    """A price for an input's ``value``: at most ``digits`` decimals, no trailing zeros."""
    return f"{x:.{digits}f}".rstrip("0").rstrip(".")


def hours_text(x: float) -> str:
    """GPU-hours, a model estimate, as the widget shows them (the script's ``sig`` does the same): to
    :data:`~multigpu.common.numtext.ESTIMATE_FIGURES` significant figures, with separators."""
    return significant(x)


STYLE = """<style>
.mg-calc-widget{border:1px solid #c8ccd2;border-radius:6px;padding:.75rem;margin:1rem 0;max-width:100%;
box-sizing:border-box;font-size:.95rem}
.mg-calc-widget [hidden]{display:none!important}
.mg-calc-title{font-weight:600;margin:0 0 .4rem}
.mg-calc-intro,.mg-calc-hint,.mg-calc-note{margin:.3rem 0}
.mg-calc-hint,.mg-calc-note{font-size:.85rem;opacity:.85}
.mg-calc-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(14rem,100%),1fr));gap:.5rem .75rem;
margin:.5rem 0}
.mg-calc-field{display:flex;flex-direction:column;gap:.2rem;min-width:0;font-size:.9rem}
.mg-calc-input{width:100%;max-width:100%;box-sizing:border-box;padding:.25rem .35rem;font:inherit}
.mg-calc-table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem}
.mg-calc-table th,.mg-calc-table td{border-bottom:1px solid #dde1e6;padding:.25rem .5rem;text-align:left;
vertical-align:top}
.mg-calc-table td.mg-calc-num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.mg-calc-system{display:block;font-weight:normal;font-size:.8rem;opacity:.8}
.mg-calc-verdict{font-weight:600;margin:.4rem 0}
</style>"""


def _select(wid: str, name: str, label: str, options: str) -> str:
    return (f'<label class="mg-calc-field">{_e(label)}<select id="{wid}-{name}" class="mg-calc-input">'
            f"{options}</select></label>")


def _number(wid: str, name: str, label: str, value: str) -> str:
    """A number field: text typed as the script parses it (a decimal point; a comma only between thousands), so
    "1,5" is refused with a message instead of being read as 15; its label's words name the pair's sides."""
    return (f'<label class="mg-calc-field"><span id="{wid}-{name}-label">{_e(label)}</span><input type="text" '
            f'id="{wid}-{name}" class="mg-calc-input" inputmode="decimal" autocomplete="off" value="{value}">'
            "</label>")


def _pair_options(hours: pd.DataFrame, t: dict[str, str]) -> str:
    return "".join(f'<option value="{_e(p["pair"])}">'
                   f'{_e(t["pair_option"].format(nvlink=p["nvlink_name"], pcie=p["pcie_name"]))}</option>'
                   for p in _pairs(hours))


def _workload_options(hours: pd.DataFrame, t: dict[str, str]) -> str:
    groups = []
    for kind in ("train", "serve"):
        options = "".join(f'<option value="{_e(w["workload"])}">{_e(w["title"])}</option>'
                          for w in _workloads(hours) if w["kind"] == kind)
        if options:
            groups.append(f'<optgroup label="{_e(t["group_" + kind])}">{options}</optgroup>')
    return "".join(groups)


def _inputs(wid: str, t: dict[str, str], words: dict[str, str], currency: str, usd_per_unit: float) -> str:
    """The three price fields: the second side's price, the premium, the first side's price (per GPU-hour, in
    ``currency``), labelled for the first pair (``words``: its sides' words; the script relabels them)."""
    pcie = _num(DEFAULT_PCIE_USD / usd_per_unit)
    nvlink = _num(float(pcie) * (1 + DEFAULT_PREMIUM_PCT / 100), 4)  # as the script sets it from the premium
    return (_number(wid, "pcie-price", t["pcie_price"].format(side=words["pcie"], currency=currency), pcie)
            + _number(wid, "premium", t["premium"].format(first=words["nvlink"], second=words["pcie"]),
                      _num(DEFAULT_PREMIUM_PCT))
            + _number(wid, "nvlink-price", t["nvlink_price"].format(side=words["nvlink"], currency=currency), nvlink))


def _result(wid: str, t: dict[str, str], words: dict[str, str]) -> str:
    """The output: each offer's GPU-hours and cost, the break-even premium and the verdict (the script fills
    them and puts the raw numbers in ``data-value``)."""
    rows = "".join(
        f'<tr><th scope="row"><span id="{wid}-{side}-offer">{_e(t["side_offer"].format(side=words[side]))}</span>'
        f'<span class="mg-calc-system" id="{wid}-{side}-system">'
        f'</span></th><td class="mg-calc-num"><output id="{wid}-{side}-hours" data-value=""></output></td>'
        f'<td><output id="{wid}-{side}-cost" data-value="" data-feasible=""></output></td></tr>' for side in SIDES)
    head = (f'<tr><th scope="col">{_e(t["offer"])}</th><th scope="col" id="{wid}-hours-head">'
            f'{_e(t["hours_train"])}</th><th scope="col" id="{wid}-cost-head">{_e(t["cost_train"])}</th></tr>')
    return (f'<div style="overflow-x:auto"><table class="mg-calc-table"><thead>{head}</thead><tbody>{rows}'
            f'</tbody></table></div><p>{_e(t["break_even"])}: <output id="{wid}-break-even" data-value="">'
            f'</output> <output id="{wid}-break-even-price" data-value=""></output></p>'
            f'<p class="mg-calc-verdict" id="{wid}-verdict" aria-live="polite" data-value=""></p>')


def _form(hours: pd.DataFrame, wid: str, t: dict[str, str], side_words: dict[str, str], currency: str,
          usd_per_unit: float) -> str:
    """The calculator, hidden until the script shows it, labelled for the first pair (``side_words``: the
    language's :data:`SIDE_WORDS`)."""
    first = _pairs(hours)[0]
    words = {side: side_words[first[side + "_word"]] for side in SIDES}
    fx = (f'<p class="mg-calc-note">{_e(t["fx_note"].format(currency=currency, rate=f"{1 / usd_per_unit:.4f}"))}</p>'
          if currency != "USD" else "")
    return (f'<form id="{wid}-form" class="mg-calc-form" hidden><div class="mg-calc-grid">'
            f'{_select(wid, "pair", t["pair"], _pair_options(hours, t))}'
            f'{_select(wid, "workload", t["workload"], _workload_options(hours, t))}'
            f'{_inputs(wid, t, words, currency, usd_per_unit)}</div><p class="mg-calc-hint">{_e(t["hint"])}</p>'
            f"{fx}{_result(wid, t, words)}</form>")


def _cell(row: dict[str, Any], t: dict[str, str]) -> str:
    if not row["feasible"]:
        return f"<td>{_e(t['cannot_run'].format(reason=row['reason']))}</td>"
    return f'<td class="mg-calc-num">{_e(hours_text(row["gpu_hours"]))}</td>'


def _static_table(hours: pd.DataFrame, wid: str, t: dict[str, str]) -> str:
    """The same GPU-hours as plain tables, one per pair: what a reader without JavaScript sees."""
    by_side = {(r["workload"], r["pair"], r["side"]): r for r in hours.to_dict("records")}
    head = "".join(f'<th scope="col">{_e(t[c])}</th>' for c in ("col_workload", "col_nvlink", "col_pcie", "col_unit"))
    tables = []
    for p in _pairs(hours):
        body = "".join(
            f"<tr><td>{_e(w['title'])}</td>"
            + "".join(_cell(by_side[(w["workload"], p["pair"], side)], t) for side in SIDES)
            + f"<td>{_e(t['hours_' + w['kind']])}</td></tr>"
            for w in _workloads(hours) if (w["workload"], p["pair"], "nvlink") in by_side)
        name = t["pair_option"].format(nvlink=p["nvlink_name"], pcie=p["pcie_name"])
        tables.append(f'<div style="overflow-x:auto"><table class="mg-calc-table"><caption>{_e(name)}</caption>'
                      f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
    return (f'<div id="{wid}-static" class="mg-calc-static"><p class="mg-calc-note">{_e(t["table_caption"])}</p>'
            f'{"".join(tables)}</div>')


SCRIPT = r"""(function (ID) {
  "use strict";
  function $(name) { return document.getElementById(ID + "-" + name); }
  var data = JSON.parse($("data").textContent), T = data.text, rows = {}, kinds = {}, pairs = {};
  data.rows.forEach(function (r) { rows[r.workload + "|" + r.pair + "|" + r.side] = r; });
  data.workloads.forEach(function (w) { kinds[w.workload] = w.kind; });
  data.pairs.forEach(function (p) { pairs[p.pair] = p; });
  var pairIn = $("pair"), wlIn = $("workload"), pcIn = $("pcie-price"), nvIn = $("nvlink-price"),
      premIn = $("premium");

  function sub(text, v) { return text.replace(/\{(\w+)\}/g, function (m, k) { return k in v ? v[k] : m; }); }
  function group(x, digits) {
    var s = Math.abs(x).toFixed(digits), parts = s.split(".");
    parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return (x < 0 && Number(s) !== 0 ? "-" : "") + parts.join(".");
  }
  // a model estimate to data.figures significant figures (numtext.significant): 32723.31 -> "32,700"
  function sig(x) {
    if (!isFinite(x) || x === 0) return group(x, 0);
    var d = data.figures - 1 - Math.floor(Math.log10(Math.abs(x))), r = round(x, d);
    if (r !== 0 && Math.floor(Math.log10(Math.abs(r))) !== Math.floor(Math.log10(Math.abs(x)))) d -= 1;
    return group(round(x, d), Math.max(d, 0));
  }
  function money(x) { return sub(T.money, {amount: sig(x), currency: data.currency}); }
  // a number as typed: a decimal point, and commas only between thousands ("1,500"); "1,5" is not a number
  function parse(text) {
    var t = String(text).trim();
    if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(t)) t = t.replace(/,/g, "");
    return /^-?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : NaN;
  }
  function num(input) { return parse(input.value); }
  function price(input) { var v = num(input); return v > 0 ? v : NaN; }
  // a premium or an error band as shown and decided on: whole per cent, halves up (answer.shown in Python)
  function shown(x) { return isFinite(x) ? Math.floor(x + 0.5) : x; }
  function round(x, digits) { var f = Math.pow(10, digits); return Math.round(x * f) / f; }
  function show(el, text, value) { el.textContent = text; el.setAttribute("data-value", value); }

  function words(pair) { return {first: data.words[pair.nvlink_word], second: data.words[pair.pcie_word]}; }
  function labels(pair) {
    var w = words(pair);
    $("nvlink-offer").textContent = sub(T.side_offer, {side: w.first});
    $("pcie-offer").textContent = sub(T.side_offer, {side: w.second});
    $("nvlink-price-label").textContent = sub(T.nvlink_price, {side: w.first, currency: data.currency});
    $("pcie-price-label").textContent = sub(T.pcie_price, {side: w.second, currency: data.currency});
    $("premium-label").textContent = sub(T.premium, w);
  }

  function side(name, row, perHour) {
    $(name + "-system").textContent = pairs[row.pair][name + "_name"];
    var cost = $(name + "-cost");
    cost.setAttribute("data-feasible", row.gpu_hours === null ? "false" : "true");
    if (row.gpu_hours === null) {
      show($(name + "-hours"), "\u2014", "");
      show(cost, sub(T.cannot_run, {reason: row.reason}), "");
      return null;
    }
    show($(name + "-hours"), sig(row.gpu_hours), String(row.gpu_hours));
    var c = row.gpu_hours * perHour;
    show(cost, isNaN(c) ? "\u2014" : money(c), isNaN(c) ? "" : String(c));
    return c;
  }

  function breakEven(nv, pc, pcPrice) {
    var el = $("break-even"), at = $("break-even-price");
    show(at, "", "");
    if (nv.gpu_hours === null) return show(el, T.not_applicable, "");
    if (pc.gpu_hours === null) return show(el, T.break_even_any, "inf");
    var ratio = pc.gpu_hours / nv.gpu_hours, pct = 100 * (ratio - 1);
    show(el, sub(T.percent, {value: group(shown(pct), 0)}), String(pct));
    if (!isNaN(pcPrice)) show(at, sub(T.break_even_price, {price: money(pcPrice * ratio)}), String(pcPrice * ratio));
  }

  // the decision table's rule (answer.verdict), on the numbers as shown: the first offer is cheaper when its
  // premium lies below the break-even premium by more than the model's error band, the second when above
  function verdict(nv, pc, kind, nvRow, pcRow, w) {
    var el = $("verdict"), per = T["per_" + kind];
    if (nv === null && pc === null) return show(el, T.verdict_neither, "neither");
    if (pc === null) return show(el, sub(T.verdict_nvlink_only, w), "first-only");
    if (nv === null) return show(el, sub(T.verdict_pcie_only, w), "second-only");
    if (isNaN(nv) || isNaN(pc)) return show(el, T.verdict_no_price, "");
    var asked = shown(100 * (price(nvIn) / price(pcIn) - 1)),
        worth = shown(100 * (pcRow.gpu_hours / nvRow.gpu_hours - 1)),
        band = shown(data.bands[kind]), ask = 1 + asked / 100, worthy = 1 + worth / 100,
        v = {first: w.first, second: w.second, per: per, asked: String(asked), worth: String(worth),
             band: String(band), amount: money(Math.abs(nv - pc)), nv: money(nv), pc: money(pc)};
    if (ask < worthy * (1 - band / 100)) return show(el, sub(T.verdict_first, v), "first");
    if (ask > worthy * (1 + band / 100)) return show(el, sub(T.verdict_second, v), "second");
    show(el, sub(T.verdict_close, v), "close");
  }

  function update() {
    var key = wlIn.value + "|" + pairIn.value + "|", kind = kinds[wlIn.value];
    var nvRow = rows[key + "nvlink"], pcRow = rows[key + "pcie"];
    $("hours-head").textContent = T["hours_" + kind];
    $("cost-head").textContent = T["cost_" + kind];
    labels(pairs[pairIn.value]);
    var nv = side("nvlink", nvRow, price(nvIn)), pc = side("pcie", pcRow, price(pcIn));
    breakEven(nvRow, pcRow, price(pcIn));
    verdict(nv, pc, kind, nvRow, pcRow, words(pairs[pairIn.value]));
  }
  function syncPremium() {
    var nv = price(nvIn), pc = price(pcIn);
    premIn.value = isNaN(nv) || isNaN(pc) ? "" : String(round(100 * (nv / pc - 1), 2));
  }
  function syncNvlink() {
    var pc = price(pcIn), prem = num(premIn);
    if (!isNaN(pc) && !isNaN(prem)) nvIn.value = String(round(pc * (1 + prem / 100), 4));
  }

  premIn.addEventListener("input", function () { syncNvlink(); update(); });
  nvIn.addEventListener("input", function () { syncPremium(); update(); });
  pcIn.addEventListener("input", function () { syncPremium(); update(); });
  pairIn.addEventListener("input", update);
  wlIn.addEventListener("input", update);
  $("form").addEventListener("submit", function (e) { e.preventDefault(); });
  $("static").hidden = true;
  $("form").hidden = false;
  syncPremium();
  update();
})"""


def _check(lang: str, currency: str, usd_per_unit: float, widget_id: str) -> None:
    if lang not in TEXT:
        raise ValueError(f"lang {lang!r}: expected one of {', '.join(TEXT)}")
    if not re.fullmatch(r"[A-Z]{3}", currency):
        raise ValueError(f"currency {currency!r}: expected a three-letter ISO 4217 code such as USD or CNY")
    if not (math.isfinite(usd_per_unit) and usd_per_unit > 0):
        raise ValueError(f"usd_per_unit {usd_per_unit!r}: expected the USD value of one {currency}, a number > 0")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", widget_id):
        raise ValueError(f"widget_id {widget_id!r}: expected letters, digits, '-' or '_', starting with a letter")


def reason_text(reason: str, language: str) -> str:
    """Why a workload cannot run (a reason of :func:`gpu_hours`, rendered from its finding; "" when it can) in
    ``language``, its numbers as they are."""
    with lang.using(language):
        return glue.say(reason) if reason else ""


def widget_html(hours: pd.DataFrame, *, lang: str = "en", currency: str = "USD", usd_per_unit: float = 1.0,
                widget_id: str = "price-calculator") -> str:
    """The calculator as one self-contained HTML fragment (no request to any host; byte-identical per input).

    ``hours``: :func:`gpu_hours`. ``lang``: a key of :data:`TEXT` (``en``, ``zh``). ``currency``: the code the
    reader's prices per GPU-hour are in; the costs (GPU-hours x price) come out in it. ``usd_per_unit``: USD per
    unit of ``currency`` (the FX rate), used only to convert the example prices (:data:`DEFAULT_PCIE_USD`) the
    form opens with. ``widget_id`` prefixes every element id (two widgets on a page need two ids).
    """
    _check(lang, currency, usd_per_unit, widget_id)
    t = TEXT[lang]
    if lang == "zh":  # the Chinese titles and system names (title_zh, name_zh in data/), the reasons translated
        hours = hours.assign(title=hours["title_zh"], system_name=hours["system_name_zh"],
                             reason=[reason_text(r, lang) for r in hours["reason"]])
    data = _json(widget_data(hours, currency, t, SIDE_WORDS[lang]))
    return (f'<div id="{widget_id}" class="mg-calc-widget" lang="{t["html_lang"]}">{STYLE}'
            f'<p class="mg-calc-title">{_e(t["title"])}</p><p class="mg-calc-intro">{_e(t["intro"])}</p>'
            f'<noscript><p class="mg-calc-note">{_e(t["noscript"])}</p></noscript>'
            f"{_static_table(hours, widget_id, t)}"
            f"{_form(hours, widget_id, t, SIDE_WORDS[lang], currency, usd_per_unit)}"
            f'<script type="application/json" id="{widget_id}-data">{data}</script>'
            f"<script>{SCRIPT}({json.dumps(widget_id)});</script></div>")


def show(hours: pd.DataFrame, **kw: Any) -> None:
    """Display :func:`widget_html` (same keywords) in a notebook."""
    from IPython.display import HTML, display

    display(HTML(widget_html(hours, **kw)))


def editions_html(hours: pd.DataFrame, cny_usd_per_unit: float, widget_id: str = "price-calculator") -> str:
    """Both editions' widgets in one output: English in USD, Chinese in CNY (``cny_usd_per_unit``: USD per CNY,
    from the build's FX table). The site's style sheet shows each page the one of its language (``mg-lang-en``
    and ``mg-lang-zh`` by the page's ``lang``), so the notebook runs once for both editions."""
    english = widget_html(hours, lang="en", currency="USD", widget_id=widget_id)
    chinese = widget_html(hours, lang="zh", currency="CNY", usd_per_unit=cny_usd_per_unit,
                          widget_id=f"{widget_id}-zh")
    return lang.editions_html({"en": english, "zh": chinese})


def show_editions(hours: pd.DataFrame, cny_usd_per_unit: float, widget_id: str = "price-calculator") -> None:
    """Display :func:`editions_html` in a notebook."""
    from IPython.display import HTML, display

    display(HTML(editions_html(hours, cny_usd_per_unit, widget_id)))
