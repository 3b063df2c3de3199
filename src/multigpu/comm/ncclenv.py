"""The settings of NCCL a run changed through its environment, and what the model makes of them.

A run may force NCCL's algorithm (``NCCL_ALGO``) or protocol (``NCCL_PROTO``),
or switch NVLS off (``NCCL_NVLS_ENABLE=0``). A log written with
``NCCL_DEBUG=INFO`` prints each (``NCCL_ALGO set by environment to Ring``), and
a published run's command line records them (``NCCL_ALGO=Ring``); either way
:class:`Settings` turns them into the model's ``algorithm``, ``protocol`` and
``nvls`` (:func:`multigpu.comm.collectives.evaluate`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from multigpu.comm import collectives

#: an environment assignment of one of the settings the model follows, as a command line records it
_ASSIGNMENT = re.compile(r"\b(NCCL_ALGO|NCCL_PROTO|NCCL_NVLS_ENABLE)=([^\s;,]+(?:,[^\s;,=]+)*)")
#: NCCL's algorithm names (NCCL_ALGO) -> the model's; NVLSTree is NVLS across nodes, CollNet a tree that the fabric
#: reduces in
NCCL_ALGORITHMS = {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvls", "collnetdirect": "tree",
                   "collnetchain": "tree"}


@dataclass(frozen=True)
class Settings:
    """The settings of NCCL a run changed (``NCCL_ALGO``, ``NCCL_PROTO``, ``NCCL_NVLS_ENABLE``: pairs of name
    and value as printed, by name), and what the model makes of them: ``algorithm`` (one the run forced, else ``auto``),
    ``protocol`` (likewise) and ``nvls`` (False where the run switched NVLS off, or left it out of
    ``NCCL_ALGO``)."""

    changed: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_environment(cls, text: str) -> Settings:
        """The settings ``text`` gives as environment assignments (``NCCL_NVLS_ENABLE=0 NCCL_ALGO=Ring``), as a
        published run's command line records them."""
        return cls(tuple(sorted(dict(_ASSIGNMENT.findall(text)).items())))

    def _value(self, name: str) -> str:
        return dict(self.changed).get(name, "").lower()

    def _algorithms(self) -> set[str] | None:
        """The model's algorithms NCCL_ALGO allows (a list, or ``^`` and the ones it excludes), None if unset or
        in a form the model does not read (per collective, or a name it does not know). The model's ``nvls`` is
        NCCL's NVLS and NVLSTree, so it stays allowed while either does."""
        value = self._value("NCCL_ALGO")
        names = set(value.removeprefix("^").split(","))
        if not value or ":" in value or not names <= NCCL_ALGORITHMS.keys():
            return None
        allowed = NCCL_ALGORITHMS.keys() - names if value.startswith("^") else names
        return {NCCL_ALGORITHMS[n] for n in allowed}

    @property
    def algorithm(self) -> str:
        allowed = self._algorithms()
        return next(iter(allowed)) if allowed is not None and len(allowed) == 1 else "auto"

    @property
    def protocol(self) -> str:
        value = self._value("NCCL_PROTO")
        return value if value in collectives.PROTOCOLS[1:] else "auto"

    @property
    def nvls(self) -> bool:
        allowed = self._algorithms()
        return self._value("NCCL_NVLS_ENABLE") != "0" and (allowed is None or "nvls" in allowed)
