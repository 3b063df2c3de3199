"""Chapter 1 (NVLink generations): its figures, its claims table and the numbers its prose cites, drawn from
:mod:`multigpu.evidence.generations`, :mod:`multigpu.evidence.claims.generations` and the catalogue.

Its words come in both editions' languages (:mod:`multigpu.book.lang`): each figure function draws in the
current language (the notebook shows both with ``plotting.show_both``), the tables' Chinese headers are the
messages of :data:`TABLE_HEADERS`, and :func:`facts` holds every text fact in English and, as ``<name>_zh``,
in Chinese."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from multigpu.book import claim_values, glue, lang, plotting
from multigpu.book.glue import Facts, plain, verdict_facts
from multigpu.book.lang import N_, _
from multigpu.evidence import claims, generations
from multigpu.evidence.claims import generations as claim_checks
from multigpu.hardware import catalog

_TIMELINE_TAGS = {"NVLink": lambda name: name.split()[1].split(".")[0],
                  "PCIe x16": lambda name: name.split()[1],
                  "InfiniBand 4x port": lambda name: name.split()[1]}


#: The families' names (:data:`multigpu.evidence.generations.FAMILY_NAMES`) as messages, for the legends.
FAMILY_LABELS = (N_("NVLink"), N_("PCIe x16"), N_("InfiniBand 4x port"))


def plot_timeline(ax) -> None:
    """Per-GPU bandwidth (one direction, GB/s, log scale) of NVLink, PCIe x16 and one IB port by year."""
    data = generations.bandwidth_timeline()
    for family, rows in data.groupby("family", sort=False):
        ax.plot(rows["year"], rows["per_gpu_GBps_per_dir"], label=lang.label(family))
        for year, value, name in zip(rows["year"], rows["per_gpu_GBps_per_dir"], rows["generation"]):
            ax.annotate(_TIMELINE_TAGS[family](name), (year, value), textcoords="offset points",
                        xytext=(0, 6), ha="center", fontsize=plotting.SMALL_PT)
    ax.set_yscale("log")
    ax.legend(loc="upper left")


def plot_nvlink_pcie_ratio(ax) -> None:
    """NVLink / PCIe per GPU generation: like with like, and the mixed-convention trap (dashed)."""
    data = generations.nvlink_pcie_ratio()
    ax.plot(data["year"], data["ratio_same_convention"], label=_("per direction / per direction (like with like)"))
    ax.plot(data["year"], data["ratio_mixed_convention"], label=_("NVLink bidirectional / PCIe per direction (trap)"))
    for year, value, gpu in zip(data["year"], data["ratio_same_convention"], data["gpu"]):
        ax.annotate(generations.short_name(gpu), (year, value), textcoords="offset points", xytext=(4, -12),
                    ha="left", fontsize=plotting.SMALL_PT)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")


def plot_bytes_per_flop(ax) -> None:
    """NVLink and PCIe bytes per 1,000 dense FLOP per GPU generation (bars, log scale)."""
    data = generations.bytes_per_flop()
    hatch = plotting.hatches()
    positions = range(len(data))
    width = 0.4
    for offset, column, label in ((-width / 2, "nvlink_bytes_per_kFLOP", lang.label("NVLink")),
                                  (width / 2, "pcie_bytes_per_kFLOP", lang.label("PCIe x16"))):
        ax.bar([p + offset for p in positions], data[column], width, label=label, hatch=next(hatch),
               edgecolor="black", linewidth=0.6)
    # one-line tick labels: the house style's source line sits just below the axis label
    ax.set_xticks(list(positions), [f"{generations.short_name(g)} {p}" for g, p in zip(data["gpu"], data["precision"])],
                  fontsize=plotting.SMALL_PT + 0.5)
    ax.set_yscale("log")
    ax.grid(axis="x", visible=False)
    ax.legend()


def plot_export_variants(ax) -> None:
    """Each China-market variant as % of its parent: GPU-to-GPU bandwidth, dense BF16, HBM bandwidth."""
    data = generations.export_variants()
    hatch = plotting.hatches()
    series = (("gpu_to_gpu_pct_of_parent", _("GPU-to-GPU bandwidth (NVLink, or PCIe where none)")),
              ("dense_TFLOPS_pct_of_parent", _("dense BF16 compute")),
              ("mem_bw_pct_of_parent", _("memory bandwidth")))
    width = 0.8 / len(series)
    for i, (column, label) in enumerate(series):
        offset = (i - (len(series) - 1) / 2) * width
        ax.bar([p + offset for p in range(len(data))], data[column], width, label=label, hatch=next(hatch),
               edgecolor="black", linewidth=0.6)
    ax.axhline(100, color="#444444", linewidth=0.8, linestyle="--")
    ax.set_ylim(0, 175)
    ax.set_xticks(list(range(len(data))), [f"{generations.short_name(v)} / {generations.short_name(p)}" for v, p in
                                           zip(data["variant"], data["parent"])])
    ax.grid(axis="x", visible=False)
    ax.legend(loc="upper left", fontsize=plotting.SMALL_PT)


# ------------------------------------------------------------------ figures, with their house-style set-up
# Each draws in the current language (multigpu.book.lang): plotting.show_both(figure_timeline) shows both.


def figure_timeline() -> Figure:
    """The timeline figure: per-GPU bandwidth (GB/s, one direction, log scale) of NVLink, PCIe x16 and one
    InfiniBand port against the year (PCIe and InfiniBand: the specification's)."""
    fig, ax = plotting.figure(
        _("Per-GPU interconnect bandwidth by generation"),
        _("year introduced (PCIe and InfiniBand: specification)"),
        _("per-GPU bandwidth, one direction (GB/s, log scale)"),
        source=_("multigpu catalogue, data/links.csv (NVIDIA, PCI-SIG and IBTA figures via each row's sources)"))
    plot_timeline(ax)
    data = generations.bandwidth_timeline()
    ranges = _("; ").join(_("{family} {span} ({first} to {last})", family=lang.label(family),
                            span=plotting.span(rows["per_gpu_GBps_per_dir"], "GB/s"),
                            first=rows["year"].min(), last=rows["year"].max())
                          for family, rows in data.groupby("family", sort=False))
    return plotting.set_alt(fig, _("Line chart, log scale: per-GPU bandwidth in one direction by year. {ranges}.",
                                   ranges=ranges))


def figure_nvlink_pcie_ratio() -> Figure:
    """NVLink per GPU over the same GPU's PCIe x16 port (ratio, dimensionless) against the GPU's launch year."""
    fig, ax = plotting.figure(
        _("NVLink per GPU against the same GPU's PCIe x16 port"),
        _("GPU launch year"), _("NVLink / PCIe (ratio)"),
        source=_("multigpu catalogue, data/gpus.csv and data/links.csv; "
                 "multigpu.evidence.generations.nvlink_pcie_ratio"))
    plot_nvlink_pcie_ratio(ax)
    data = generations.nvlink_pcie_ratio()
    times = _("times")
    return plotting.set_alt(fig, _("Line chart: NVLink over PCIe x16 bandwidth per GPU launch year, like with like "
                                   "{same}; mixing bidirectional NVLink with one-direction PCIe gives {mixed}.",
                                   same=plotting.span(data["ratio_same_convention"], times),
                                   mixed=plotting.span(data["ratio_mixed_convention"])))


def figure_bytes_per_flop() -> Figure:
    """NVLink and PCIe bytes per 1,000 FLOP of dense 16-bit compute (one direction, log scale), per GPU."""
    fig, ax = plotting.figure(
        _("Interconnect bytes per 1,000 FLOP of dense 16-bit compute"),
        _("GPU and precision, by launch year"), _("bytes per 1,000 FLOP, one direction (log scale)"),
        source=_("multigpu catalogue, data/gpus.csv and data/links.csv; "
                 "multigpu.evidence.generations.bytes_per_flop"))
    plot_bytes_per_flop(ax)
    data = generations.bytes_per_flop()
    return plotting.set_alt(fig, _("Bar chart, log scale: interconnect bytes per 1,000 FLOP of dense 16-bit compute "
                                   "per GPU; NVLink {nvlink}, PCIe x16 {pcie}, falling with each generation.",
                                   nvlink=plotting.span(data["nvlink_bytes_per_kFLOP"]),
                                   pcie=plotting.span(data["pcie_bytes_per_kFLOP"])))


def figure_export_variants() -> Figure:
    """Each China-market variant as a share (%) of its parent GPU: GPU-to-GPU bandwidth, dense BF16 compute
    and memory bandwidth."""
    fig, ax = plotting.figure(
        _("China-market variants as a share of their parent GPU"),
        _("variant / parent"), _("share of the parent's figure (%)"),
        source=_("multigpu catalogue, data/gpus.csv (secondary sources for H800, H20 and L20); "
                 "multigpu.evidence.generations.export_variants"))
    plot_export_variants(ax)
    data = generations.export_variants()
    return plotting.set_alt(fig, _("Bar chart: China-market variants as a share of their parent GPU; GPU-to-GPU "
                                   "bandwidth {link}, dense BF16 {compute}, memory bandwidth {memory}.",
                                   link=plotting.span(data["gpu_to_gpu_pct_of_parent"], "%"),
                                   compute=plotting.span(data["dense_TFLOPS_pct_of_parent"], "%"),
                                   memory=plotting.span(data["mem_bw_pct_of_parent"], "%")))


# ------------------------------------------------------------------ the tables' words

#: The headers of the chapter's tables (:func:`multigpu.book.tables.header` of their columns), as messages:
#: the Chinese edition's headers (a header missing here fails the notebook, not just the catalog check).
TABLE_HEADERS = (
    N_("Generation"), N_("Year"), N_("First in catalogue"), N_("Links per GPU"), N_("Lanes per link"),
    N_("Lane (Gb/s)"), N_("Per link (GB/s per direction)"), N_("Per link (GB/s, both directions)"),
    N_("Per GPU (GB/s per direction)"), N_("Per GPU (GB/s, both directions)"), N_("Max GPUs per domain"),
    N_("In-network reduction"), N_("Family"), N_("First"), N_("Last"), N_("First year"), N_("Last year"),
    N_("First (GB/s per direction)"), N_("Last (GB/s per direction)"), N_("Growth (×)"), N_("Doubling (years)"),
    N_("GPU"), N_("PCIe"), N_("NVLink (GB/s per direction)"), N_("PCIe (GB/s per direction)"),
    N_("Ratio same convention"), N_("Ratio mixed convention"), N_("Precision"), N_("Dense (TFLOPS)"),
    N_("NVLink bytes per kFLOP"), N_("PCIe bytes per kFLOP"), N_("Variant"), N_("Parent"),
    N_("GPU to GPU (GB/s per direction)"), N_("GPU to GPU (% of parent)"), N_("Dense TFLOPS (% of parent)"),
    N_("Memory bandwidth (GB/s)"), N_("Memory bandwidth (% of parent)"), N_("Memory (GB)"),
    N_("Memory (% of parent)"), N_("Bytes per kFLOP"), N_("Parent bytes per kFLOP"), N_("ID"), N_("Verdict"),
    N_("Seed value"), N_("Model value"), N_("Unit"), N_("System"), N_("GPUs"), N_("BF16 dense (EFLOPS)"),
    N_("FP8 dense (EFLOPS)"), N_("FP4 dense (EFLOPS)"), N_("FP4 peak (EFLOPS)"),
)
#: The claims table's columns whose cells are words to translate (the rest is data).
LABEL_COLUMNS = claim_values.label_columns("verdict")


# ------------------------------------------------------------------ the article's claims

#: The claims chapter 1 checks (:mod:`multigpu.evidence.claims.generations`).
CLAIMS = ("C01", "C02", "C03", "C04", "C20")
def verdicts(inputs: claims.Inputs | None = None) -> dict[str, claims.Verdict]:
    """The verdicts of :data:`CLAIMS` by id, checked with ``inputs`` (None: shipped calibration, packaged
    prices; the hardware checks read only the catalogue)."""
    return {claim_id: claims.check(claim_id, inputs) for claim_id in CLAIMS}


def claims_table(inputs: claims.Inputs | None = None) -> pd.DataFrame:
    """The chapter's claims, one row each: ``id``, ``verdict``, ``seed_value`` (the article's, as text),
    ``model_value`` and ``unit`` (the catalogue's value and its unit, per claim)."""
    return pd.DataFrame([v.to_dict() for v in verdicts(inputs).values()])[
        ["id", "verdict", "seed_value", "model_value", "unit"]]


# ------------------------------------------------------------------ the prose's numbers
# Each function returns the named values one section of the chapter cites (myst-nb glue names), computed
# from the catalogue and multigpu.evidence; facts() gathers them all. Bandwidths are GB/s (1e9 B/s) unless
# the name says TBps; lane rates Gb/s; years are calendar years; ``_x`` and ratios are dimensionless.

#: The China-market variants the chapter names, by glue prefix: catalogue GPU ids.
VARIANTS = {"a800": "a800-sxm4-80gb", "h800": "h800-sxm", "h20": "h20", "l20": "l20"}
#: Exercise 1's shard, GB (1e9 bytes): an exercise input, not a catalogue figure.
EX1_SHARD_GB = 10


def convention_facts() -> Facts:
    """One link, two numbers: the H100's NVLink, ``h100_bidir`` and ``h100_per_dir`` (GB/s)."""
    h100 = catalog.gpu("h100-sxm")
    return {"h100_bidir": h100.nvlink_GBps_bidir, "h100_per_dir": h100.nvlink_GBps_per_dir}


def generation_facts() -> Facts:
    """The NVLink generations n = 1..6 (``nvl{n}_links`` count, ``nvl{n}_link`` and ``nvl{n}_dir`` GB/s per
    direction per link and per GPU, ``nvl{n}_lanes`` count, ``nvl{n}_lane`` Gb/s; unpublished signalling is left
    out) and the newest per GPU in TB/s (``nvl6_bidir_TBps``, ``nvl6_dir_TBps``)."""
    out: Facts = {}
    links = [catalog.link(link_id) for link_id in generations.FAMILIES["nvlink"]]
    for n, link in enumerate(links, start=1):
        out |= {f"nvl{n}_links": link.links_per_gpu, f"nvl{n}_link": link.per_link_GBps_per_dir,
                f"nvl{n}_dir": link.per_gpu_GBps_per_dir, f"nvl{n}_lanes": link.lanes_per_link,
                f"nvl{n}_lane": link.lane_Gbps}
    newest = len(links)
    out[f"nvl{newest}_bidir_TBps"] = links[-1].per_gpu_GBps_bidir / 1000
    out[f"nvl{newest}_dir_TBps"] = links[-1].per_gpu_GBps_per_dir / 1000
    return out


def switch_facts() -> Facts:
    """The first NVSwitch's year (``sw1_year``) and GPUs per domain (``sw1_domain``, count), and the GPUs the
    Blackwell NVLink Switch joins (``sw4_domain``, count)."""
    first = generations.FAMILIES["nvswitch"][0]
    return {"sw1_year": catalog.link(first).year, "sw1_domain": generations.largest_domain(first),
            "sw4_domain": generations.largest_domain("nvlink-switch4")}


def pcie_facts() -> Facts:
    """PCIe Gen5 and Gen6 x16: data rate and raw signalling rate per direction (``pcie5_dir``, ``pcie5_raw``,
    ``pcie6_dir``, ``pcie6_raw``, GB/s), Gen6's specification year and the year it reached a catalogued GPU."""
    pcie5, pcie6 = catalog.link("pcie5-x16"), catalog.link("pcie6-x16")
    return {"pcie5_dir": pcie5.per_gpu_GBps_per_dir, "pcie5_raw": pcie5.signalling_GBps_per_dir,
            "pcie6_dir": pcie6.per_gpu_GBps_per_dir, "pcie6_raw": pcie6.signalling_GBps_per_dir,
            "pcie6_year": pcie6.year, "pcie6_first_year": generations.first_gpu("pcie6-x16").year}


#: Glue prefix of each family of :func:`multigpu.evidence.generations.family_growth`.
_GROWTH_KEYS = {"nvlink": "nvlink", "pcie": "pcie", "infiniband": "ib"}


def growth_facts() -> Facts:
    """How fast each family grew: ``{nvlink,pcie,ib}_growth`` (last / first, x), ``_doubling`` (years per
    doubling), ``_first_year`` and ``_last_year``."""
    growth = generations.family_growth().set_index("family")
    out: Facts = {}
    for family, key in _GROWTH_KEYS.items():
        row = growth.loc[generations.FAMILY_NAMES[family]]
        out |= {f"{key}_growth": row["growth_x"], f"{key}_doubling": row["doubling_years"],
                f"{key}_first_year": row["first_year"], f"{key}_last_year": row["last_year"]}
    return out


def ratio_facts() -> Facts:
    """NVLink over the same GPU's PCIe port, like with like (x): the least and most of the flagships
    (``ratio_min``, ``ratio_max``) and the B200 and B300 (``ratio_b200``, ``ratio_b300``)."""
    ratio = generations.nvlink_pcie_ratio().set_index("gpu")["ratio_same_convention"]
    return {"ratio_min": ratio.min(), "ratio_max": ratio.max(),
            "ratio_b200": ratio[catalog.gpu("b200").name], "ratio_b300": ratio[catalog.gpu("b300").name]}


def bytes_per_flop_facts() -> Facts:
    """Bytes per 1,000 dense 16-bit FLOP, one direction: NVLink on the first and last flagship (``bpf_first``,
    ``bpf_last``) and their quotient (``bpf_drop``, x), PCIe on both (``bpf_pcie_first``, ``bpf_pcie_last``),
    NVLink on the H100 (``bpf_h100``)."""
    bpf = generations.bytes_per_flop().set_index("gpu")
    first, last = bpf.iloc[0], bpf.iloc[-1]
    return {"bpf_first": first["nvlink_bytes_per_kFLOP"], "bpf_last": last["nvlink_bytes_per_kFLOP"],
            "bpf_drop": first["nvlink_bytes_per_kFLOP"] / last["nvlink_bytes_per_kFLOP"],
            "bpf_pcie_first": first["pcie_bytes_per_kFLOP"], "bpf_pcie_last": last["pcie_bytes_per_kFLOP"],
            "bpf_h100": bpf.loc[catalog.gpu("h100-sxm").name, "nvlink_bytes_per_kFLOP"]}


def variant_facts() -> Facts:
    """Each variant of :data:`VARIANTS` against its parent: ``{key}_link_pct`` and ``{key}_compute_pct`` (% of
    the parent's GPU-to-GPU bandwidth and dense BF16), ``{key}_bpf`` (bytes per 1,000 FLOP) and ``{key}_bpf_x``
    (the variant's bytes per FLOP over the parent's, x)."""
    variants = generations.export_variants().set_index("variant")
    out: Facts = {}
    for key, gpu_id in VARIANTS.items():
        row = variants.loc[catalog.gpu(gpu_id).name]
        out |= {f"{key}_link_pct": row["gpu_to_gpu_pct_of_parent"],
                f"{key}_compute_pct": row["dense_TFLOPS_pct_of_parent"], f"{key}_bpf": row["bytes_per_kFLOP"],
                f"{key}_bpf_x": row["bytes_per_kFLOP"] / row["parent_bytes_per_kFLOP"]}
    return out


def claim_facts(inputs: claims.Inputs | None = None) -> Facts:
    """The claims section: ``{id}_verdict`` (bold Markdown) and ``{id}_tests`` (what decided it), with their
    Chinese as ``{id}_verdict_zh`` and ``{id}_tests_zh``, C01's year and NVLink/PCIe ratio (x), C03's
    bandwidths (GB/s, bidirectional) and ratios (x), C04's per-GPU bandwidths (``c04_bw{n}`` bidirectional,
    ``c04_dir{n}`` per direction, GB/s), years and years per generation, and C20's rack compute (EFLOPS) with
    the headline over GB200 NVL72 dense BF16 (``c20_x``)."""
    checked = verdicts(inputs)
    out: Facts = glue.per_language(lambda: verdict_facts(checked))
    first = generations.first_gpu(generations.FAMILIES["nvlink"][0])
    out["c01_year"] = checked["C01"].model_value
    out["c01_ratio"] = generations.nvlink_pcie_ratio((first.id,))["ratio_same_convention"].iloc[0]
    c03 = claim_checks.nvlink6_vs_pcie6()
    for key in ("nvlink_GBps_bidir", "pcie_GBps_bidir", "pcie_raw_GBps_bidir", "ratio_bidir", "ratio_raw_bidir",
                "ratio_mixed"):
        out[f"c03_{key}"] = c03[key]
    c04 = claim_checks.nvlink_cadence()
    for n, bw, year in zip((4, 5, 6), c04["GBps_bidir"], c04["years"]):
        out |= {f"c04_bw{n}": bw, f"c04_dir{n}": bw / 2, f"c04_year{n}": year}
    out["c04_gap"] = c04["years_per_generation"]
    out["c04_gap_all"] = c04["years_per_generation_all"]
    racks = generations.rack_compute().set_index("system")
    rubin, gb200 = racks.loc[catalog.system("vr-nvl72").name], racks.loc[catalog.system("gb200-nvl72").name]
    out |= {"c20_peak": checked["C20"].model_value, "c20_dense_fp4": rubin["fp4_dense_EFLOPS"],
            "c20_gb200_peak": gb200["fp4_peak_EFLOPS"], "c20_gb200_bf16": gb200["bf16_dense_EFLOPS"],
            "c20_x": checked["C20"].model_value / gb200["bf16_dense_EFLOPS"]}
    return out


def exercise_facts() -> Facts:
    """The exercises: 1, an :data:`EX1_SHARD_GB` GB shard over H800 and H100 NVLink (``ex1_h800_bidir`` /
    ``ex1_h800_dir`` GB/s, ``ex1_*_ms`` ms); 2, NVLink 5 against PCIe Gen5 x16 (GB/s bidirectional, ratios x);
    3, communication over compute time of the H20 and H800 relative to their parent (``ex3_h20``, ``ex3_h800``, x)."""
    h800, h100 = catalog.gpu("h800-sxm"), catalog.gpu("h100-sxm")
    out: Facts = {"ex1_size_GB": EX1_SHARD_GB, "ex1_h800_bidir": h800.nvlink_GBps_bidir,
                  "ex1_h800_dir": h800.nvlink_GBps_per_dir,
                  "ex1_h800_ms": generations.transfer_time_ms(EX1_SHARD_GB, h800.nvlink_GBps_per_dir),
                  "ex1_h800_wrong_ms": generations.transfer_time_ms(EX1_SHARD_GB, h800.nvlink_GBps_bidir),
                  "ex1_h100_ms": generations.transfer_time_ms(EX1_SHARD_GB, h100.nvlink_GBps_per_dir)}
    nvl5, pcie5 = catalog.link("nvlink5"), catalog.link("pcie5-x16")
    b200 = generations.nvlink_pcie_ratio(("b200",)).iloc[0]
    out |= {"ex2_nvl5_bidir": nvl5.per_gpu_GBps_bidir, "ex2_pcie5_bidir": pcie5.per_gpu_GBps_bidir,
            "ex2_pcie5_raw_bidir": 2 * pcie5.signalling_GBps_per_dir,
            "ex2_ratio": b200["ratio_same_convention"],
            "ex2_ratio_raw": nvl5.per_gpu_GBps_bidir / (2 * pcie5.signalling_GBps_per_dir),
            "ex2_ratio_mixed": b200["ratio_mixed_convention"]}
    variants = generations.export_variants().set_index("variant")
    for key in ("h20", "h800"):
        row = variants.loc[catalog.gpu(VARIANTS[key]).name]
        out[f"ex3_{key}"] = row["parent_bytes_per_kFLOP"] / row["bytes_per_kFLOP"]
    return out


def in_short(f: Facts) -> str:
    """The chapter's answer in two sentences in the current language, from its growth and ratio facts (``f``:
    :func:`facts`' values; growth x, years, ratios x)."""
    values = {name: f[name] for name in ("nvlink_growth", "nvlink_first_year", "nvlink_last_year",
                                         "nvlink_doubling", "pcie_growth", "pcie_first_year", "pcie_last_year",
                                         "pcie_doubling", "ratio_min", "ratio_max")}
    if f["nvlink_doubling"] < f["pcie_doubling"]:
        growth = _("NVLink bandwidth per GPU grew {nvlink_growth:.1f}x from {nvlink_first_year} to "
                   "{nvlink_last_year}, doubling every {nvlink_doubling:.1f} years, faster than a PCIe x16 port "
                   "({pcie_growth:.1f}x from {pcie_first_year} to {pcie_last_year}, doubling every "
                   "{pcie_doubling:.1f} years).", **values)
    else:
        growth = _("NVLink bandwidth per GPU grew {nvlink_growth:.1f}x from {nvlink_first_year} to "
                   "{nvlink_last_year}, doubling every {nvlink_doubling:.1f} years, slower than a PCIe x16 port "
                   "({pcie_growth:.1f}x from {pcie_first_year} to {pcie_last_year}, doubling every "
                   "{pcie_doubling:.1f} years).", **values)
    ratio = _("A GPU's NVLink now carries {ratio_min:.0f} to {ratio_max:.0f} times its PCIe port, per direction "
              "against per direction; compare figures only in the same convention.", **values)
    return _("{first} {second}", first=growth, second=ratio)


def facts(inputs: claims.Inputs | None = None) -> Facts:
    """Every value chapter 1's prose cites, by glue name (the section functions above, merged), as plain
    Python numbers or Markdown text; values the catalogue leaves empty (None) are left out. Each text fact
    is there in English and, as ``<name>_zh``, in Chinese (:func:`multigpu.book.glue.per_language`); the
    numbers once, for both editions."""
    merged: Facts = {}
    for part in (convention_facts(), generation_facts(), switch_facts(), pcie_facts(), growth_facts(),
                 ratio_facts(), bytes_per_flop_facts(), variant_facts(), claim_facts(inputs), exercise_facts()):
        merged |= part
    merged |= glue.per_language(lambda: {"in_short": in_short(merged)})
    return {name: plain(value) for name, value in merged.items() if value is not None}
