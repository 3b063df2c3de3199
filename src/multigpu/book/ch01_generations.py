"""Chapter 1 (NVLink generations): its figures, drawn from :mod:`multigpu.evidence.generations`."""

from __future__ import annotations

from multigpu.book import plotting
from multigpu.evidence import generations

_TIMELINE_TAGS = {"NVLink": lambda name: name.split()[1].split(".")[0],
                  "PCIe x16": lambda name: name.split()[1],
                  "InfiniBand 4x port": lambda name: name.split()[1]}



def plot_timeline(ax) -> None:
    """Per-GPU bandwidth (one direction, GB/s, log scale) of NVLink, PCIe x16 and one IB port by year."""
    data = generations.bandwidth_timeline()
    for family, rows in data.groupby("family", sort=False):
        ax.plot(rows["year"], rows["per_gpu_GBps_per_dir"], label=family)
        for year, value, name in zip(rows["year"], rows["per_gpu_GBps_per_dir"], rows["generation"]):
            ax.annotate(_TIMELINE_TAGS[family](name), (year, value), textcoords="offset points",
                        xytext=(0, 6), ha="center", fontsize=7.5)
    ax.set_yscale("log")
    ax.legend(loc="upper left")



def plot_nvlink_pcie_ratio(ax) -> None:
    """NVLink / PCIe per GPU generation: like with like, and the mixed-convention trap (dashed)."""
    data = generations.nvlink_pcie_ratio()
    ax.plot(data["year"], data["ratio_same_convention"], label="per direction / per direction (like with like)")
    ax.plot(data["year"], data["ratio_mixed_convention"], label="NVLink bidirectional / PCIe per direction (trap)")
    for year, value, gpu in zip(data["year"], data["ratio_same_convention"], data["gpu"]):
        ax.annotate(generations.short_name(gpu), (year, value), textcoords="offset points", xytext=(4, -12),
                    ha="left", fontsize=7.5)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")



def plot_bytes_per_flop(ax) -> None:
    """NVLink and PCIe bytes per 1,000 dense FLOP per GPU generation (bars, log scale)."""
    data = generations.bytes_per_flop()
    hatch = plotting.hatches()
    positions = range(len(data))
    width = 0.4
    for offset, column, label in ((-width / 2, "nvlink_bytes_per_kFLOP", "NVLink"),
                                  (width / 2, "pcie_bytes_per_kFLOP", "PCIe x16")):
        ax.bar([p + offset for p in positions], data[column], width, label=label, hatch=next(hatch),
               edgecolor="black", linewidth=0.6)
    # one-line tick labels: the house style's source line sits just below the axis label
    ax.set_xticks(list(positions), [f"{generations.short_name(g)} {p}" for g, p in zip(data["gpu"], data["precision"])],
                  fontsize=8.5)
    ax.set_yscale("log")
    ax.grid(axis="x", visible=False)
    ax.legend()



def plot_export_variants(ax) -> None:
    """Each China-market variant as % of its parent: GPU-to-GPU bandwidth, dense BF16, HBM bandwidth."""
    data = generations.export_variants()
    hatch = plotting.hatches()
    series = (("gpu_to_gpu_pct_of_parent", "GPU-to-GPU bandwidth (NVLink, or PCIe where none)"),
              ("dense_TFLOPS_pct_of_parent", "dense BF16 compute"),
              ("mem_bw_pct_of_parent", "memory bandwidth"))
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
    ax.legend(loc="upper left", fontsize=8)
