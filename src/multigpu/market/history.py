"""Dated list prices from before the price file's window: what an NVLink-class instance was charged over a PCIe
one in the past.

``data/price_history.csv`` holds offers observed long before the price file's newest ones, more than
:data:`multigpu.market.pricecheck.MAX_OBSERVATION_AGE_DAYS` days (a price file warns of such a row): they
are history, never a verdict's input. Each row states the GPU memory per GPU, since a catalogue GPU id names a
chip and form factor that were sold with more than one memory size. :func:`past_premiums` pairs an
NVLink-class instance with a PCIe one of the same provider, list, date, GPU chip, memory and GPU count; the
premium is a ratio of two prices in one currency, so it needs no exchange rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from functools import cache

from pydantic import ConfigDict

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, Positive
from multigpu.hardware import catalog
from multigpu.market.prices import ListedPrice, Offer

PATH = DATA_DIR / "price_history.csv"
#: Link categories (``data/links.csv``) of an NVLink-class instance and of a PCIe-only one.
NVLINK_CATEGORIES = ("nvlink", "nvlink-capped", "nvswitch")
PCIE_CATEGORY = "pcie"


class PastOffer(ListedPrice):
    """One dated list price (a row of ``data/price_history.csv``); ``price_per_hour`` per instance. Its GPU id
    names the chip and form factor; ``memory_GB_per_gpu`` the memory each of the instance's GPUs has."""

    model_config = ConfigDict(extra="forbid", frozen=True)  # only these columns
    memory_GB_per_gpu: Positive
    notes: str | None = None

    NOUN = "past offer"
    EXPECTED = {**{column: Offer.EXPECTED[column] for column in ListedPrice.model_fields},
                "currency": "a currency code, e.g. CNY",
                "observed": "the date of the page that lists the price (a commit's date), YYYY-MM-DD",
                "source": "the page, at that version (a URL)",
                "memory_GB_per_gpu": "the memory of each of its GPUs as the vendor states it (\"16 GB\": a binary "
                                     "size, GiB, as the catalogue's memory_GB), a number > 0",
                "notes": "optional: anything, kept as text"}


@cache
def past_offers() -> tuple[PastOffer, ...]:
    """Every row of ``data/price_history.csv``, in file order."""
    return tuple(row for _line, row in datafiles.read(PATH, PastOffer))


@dataclass(frozen=True)
class PastPremium:
    """An NVLink-class instance against a PCIe one of the same provider, list, date, GPU chip, memory and GPU
    count: the prices per instance-hour in ``currency`` and the premium charged, per cent; ``gpu_name`` what
    the two GPUs' catalogue names share ('Tesla V100' of 'Tesla V100 SXM2 32GB' and 'Tesla V100 PCIe 32GB')."""

    provider: str
    observed: date
    gpu_arch: str
    memory_GB_per_gpu: float
    gpus_per_instance: int
    currency: str
    pricing: str
    nvlink_instance: str
    pcie_instance: str
    nvlink_price_per_hour: float
    pcie_price_per_hour: float
    source: str
    gpu_name: str

    @property
    def premium_pct(self) -> float:
        """(NVLink price / PCIe price - 1) x 100."""
        return 100 * (self.nvlink_price_per_hour / self.pcie_price_per_hour - 1)


def wiring_class(offer: PastOffer) -> str | None:
    """'nvlink' for an NVLink-class instance, 'pcie' for a PCIe-only one, None for any other link."""
    category = catalog.link(offer.interconnect).category
    return "nvlink" if category in NVLINK_CATEGORIES else "pcie" if category == PCIE_CATEGORY else None


def past_premiums(offers: tuple[PastOffer, ...] | None = None) -> list[PastPremium]:
    """Every pair of an NVLink-class and a PCIe-only offer (:func:`wiring_class`) that differ only in their wiring:
    same provider, pricing, currency, date, GPU vendor and architecture, memory per GPU and GPU count; oldest
    first, then by GPU count (largest first)."""
    offers = past_offers() if offers is None else offers
    pairs = []
    for nv in (o for o in offers if wiring_class(o) == "nvlink"):
        for pc in (o for o in offers if wiring_class(o) == "pcie"):
            if _same_but_wiring(nv, pc):
                pairs.append(PastPremium(
                    provider=nv.provider, observed=nv.observed, gpu_arch=catalog.gpu(nv.gpu).arch,
                    memory_GB_per_gpu=nv.memory_GB_per_gpu, gpus_per_instance=nv.gpus_per_instance,
                    currency=nv.currency, pricing=nv.pricing, nvlink_instance=nv.instance, pcie_instance=pc.instance,
                    nvlink_price_per_hour=nv.price_per_hour, pcie_price_per_hour=pc.price_per_hour,
                    source=nv.source, gpu_name=_common_name(nv.gpu, pc.gpu)))
    return sorted(pairs, key=lambda p: (p.observed, -p.gpus_per_instance, p.nvlink_instance))


def _same_but_wiring(a: PastOffer, b: PastOffer) -> bool:
    ga, gb = catalog.gpu(a.gpu), catalog.gpu(b.gpu)
    return ((a.provider, a.pricing, a.currency, a.observed, a.memory_GB_per_gpu, a.gpus_per_instance)
            == (b.provider, b.pricing, b.currency, b.observed, b.memory_GB_per_gpu, b.gpus_per_instance)
            and (ga.vendor, ga.arch) == (gb.vendor, gb.arch))


def _common_name(gpu_a: str, gpu_b: str) -> str:
    """The leading words two catalogue GPU names share, memory sizes left out."""
    words = []
    for a, b in zip(catalog.gpu(gpu_a).name.split(), catalog.gpu(gpu_b).name.split()):
        if a != b:
            break
        words.append(a)
    return " ".join(w for w in words if not w.upper().endswith("GB")) or catalog.gpu(gpu_a).name
