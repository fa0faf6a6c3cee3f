"""What a run used, recorded as it goes: the trained networks (what each is, its test accuracy).

:func:`stitchkit.networks.network.load_or_train` notes every network it returns; a page's results keep the
list (:class:`stitchkit.verdicts.results.Run`), its Configuration table reads the values that ran from it
(:func:`stitchkit.registry.scales.as_table`), and the book states how well trained each scale's networks
are. Plain Python: importing it costs nothing.
"""

from __future__ import annotations

from typing import Any

_NETWORKS: dict[str, dict[str, Any]] = {}


def note_network(key: str, what: dict[str, Any]) -> None:
    """Record that this process used the trained network stored under ``key``."""
    _NETWORKS[key] = dict(what)


def networks_used() -> list[dict[str, Any]]:
    """The trained networks this process used, one record each (``key``: the cache key's first
    16 characters), by key."""
    return [{"key": k[:16], **v} for k, v in sorted(_NETWORKS.items())]


__all__ = ["note_network", "networks_used"]
