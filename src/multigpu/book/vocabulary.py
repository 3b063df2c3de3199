"""Words of the data files that more than one page shows, as messages: each page translates them with
:func:`multigpu.book.lang.label` (a word missing here fails that page's Chinese edition)."""

from __future__ import annotations

import re
from functools import cache

from multigpu.book import lang
from multigpu.book.lang import N_
from multigpu.hardware import catalog
from multigpu.market import workloads

#: The out-of-sample checks of :func:`multigpu.evidence.topology.out_of_sample_table`.
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


@cache
def data_names(language: str) -> dict[str, str]:
    """The names the data files give in ``language``, English name -> name: each system's ``name_<language>``
    (``data/systems.csv``: ``name_zh``) and each named workload's ``title_<language>``
    (``data/cost_workloads.csv``: ``title_zh``), where it has one. A name without one is shown as it is."""
    language = lang.check(language)
    names = {s.name: getattr(s, f"name_{language}") for s in catalog.systems().values()
             if getattr(s, f"name_{language}", None)}
    names.update({w.title: getattr(w, f"title_{language}") for w in workloads.workloads_table().values()
                  if getattr(w, f"title_{language}", None)})
    return names


def label(text: str) -> str:
    """``text`` in the current language: a name the data translate (:func:`data_names`), else its message
    (:func:`multigpu.book.lang.label`, a LookupError outside English where the catalogs lack it)."""
    found = data_names(lang.current()).get(text) if lang.current() != "en" else None
    return found if found is not None else lang.label(text)


def data_name(name: str, language: str | None = None) -> str:
    """A name of the data (a system's or a workload's, in English) in ``language`` (default: the current one):
    its name there where the data give one (:func:`data_names`), else the name as it is."""
    language = lang.check(language or lang.current())
    return name if language == "en" else data_names(language).get(name, name)


def system_name(system_id: str, language: str | None = None) -> str:
    """The name of catalogue system ``system_id`` in ``language`` (default: the current one): its name there
    where the data give one (:func:`data_name`), else the catalogue name."""
    return data_name(catalog.system(system_id).name, language)


def short_system_name(system_id: str, language: str | None = None) -> str:
    """:func:`system_name` without what follows its first " /", parenthesis or comma ("DGX A100", "8x A100
    PCIe server"): a label where space is short."""
    return re.split(r" / | \(|（|，", system_name(system_id, language))[0]


def short_gpu_name(gpu_id: str) -> str:
    """A catalogue GPU's name without vendor, brand and memory size: 'H100 SXM5', 'RTX 4090', 'A100 PCIe' (the
    same in every language)."""
    words = catalog.gpu(gpu_id).name.replace("GeForce ", "").replace("NVIDIA ", "").split(" (")[0].split()
    return " ".join(w for w in words if not w.upper().endswith("GB")) or gpu_id


def workload_title(workload_id: str, language: str | None = None) -> str:
    """A named workload's title in ``language`` (default: the current one): ``title``, or ``title_<language>``
    of ``data/cost_workloads.csv`` where it has one; an id the file does not name is shown as it is."""
    table = workloads.workloads_table()
    if workload_id not in table:
        return workload_id
    return data_name(table[workload_id].title, language)


#: The training stacks (:data:`multigpu.compute.layout.TRAINING_STACKS`), for people: Megatron-LM as its defaults
#: run, NVIDIA's NeMo and Megatron-Bridge recipes, and the frameworks by their own names.
TRAINING_STACK_NAMES = {"megatron": N_("Megatron-LM defaults"), "nemo": N_("NeMo recipes"), "nanotron": N_("nanotron"),
                        "pytorch-ddp": N_("PyTorch DDP"), "pytorch-fsdp": N_("PyTorch FSDP"), "maxtext": N_("MaxText")}


def stack_names_label(text: str) -> str:
    """A table cell in the current language: a name of :data:`TRAINING_STACK_NAMES` translated, any other text (a
    framework's name, a range of GPUs) as it is."""
    return lang.label(text) if text in TRAINING_STACK_NAMES.values() else text


#: Providers known in Chinese by a name of their own; any other provider is shown as the data name it.
PROVIDERS = (N_("Tencent Cloud"),)


def provider_name(provider: str) -> str:
    """``provider`` as the price files name it, in the current language where :data:`PROVIDERS` holds it
    ("Tencent Cloud" is 腾讯云 in Chinese), else as it is (an analyst's file may name any provider)."""
    return lang.label(provider) if provider in PROVIDERS else provider
