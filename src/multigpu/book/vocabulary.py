"""Words of the data files that more than one page shows, as messages: each page translates them with
:func:`multigpu.book.lang.label` (a word missing here fails that page's Chinese edition)."""

from __future__ import annotations

from multigpu.book.lang import N_

#: The out-of-sample checks of :func:`multigpu.evidence.wiring.out_of_sample_table`.
CHECK_LABELS = (
    N_("8x A100 ring all-reduce busbw"), N_("8x B200 NVLS all-reduce busbw"), N_("8x B200 ring all-reduce busbw"),
    N_("8x H800 NVLS all-reduce busbw"), N_("NDR 400G: all-reduce busbw per NIC (1 GPU per node, 2 nodes)"),
    N_("8x MI300X all-reduce busbw (RCCL)"), N_("2x MI300X all-reduce busbw (RCCL)"),
    N_("4x RTX 4090, P2P patched on, all-reduce busbw"),
    N_("8x RTX 5090 all-reduce busbw (variant: 4 GPUs per PCIe switch)"),
    N_("8x RTX 5090 all-reduce busbw (GPUs on CPU root ports)"),
    N_("4x RTX 5090 all-reduce busbw (GPUs on CPU root ports)"),
    N_("2x H100 PCIe NVLink-bridged all-reduce busbw (variant: 12 bridge links)"),
    N_("2x H100 PCIe NVLink-bridged all-reduce busbw (6 bridge links, NV6)"))
