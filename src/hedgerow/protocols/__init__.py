"""Overlay protocols, one module per protocol, and their registry.

Adding a protocol = one module + one line in :data:`REGISTRY`.
"""

from __future__ import annotations

from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.protocols.base import OverlayProtocol
from hedgerow.protocols.baselines.ringpt import RingPerTopic
from hedgerow.protocols.baselines.similarity import RandomOverlay, Similarity
from hedgerow.protocols.spidercast import SpiderCast

#: name -> protocol class, for every overlay builder
REGISTRY: dict[str, type[OverlayProtocol]] = {
    "spidercast": SpiderCast,
    "similarity": Similarity,
    "random": RandomOverlay,
    "ringpt": RingPerTopic,
}


def protocol_names() -> list[str]:
    """Names accepted by :func:`get_protocol` and :func:`build`."""
    return sorted(REGISTRY)


def get_protocol(name: str, **params: Any) -> OverlayProtocol:
    """An unbuilt protocol ``name`` with ``params`` set.

    Raises :class:`ParameterError` for an unknown protocol or parameter.
    """
    if name not in REGISTRY:
        raise ParameterError(f"unknown protocol {name!r}; allowed: {', '.join(protocol_names())}")
    proto = REGISTRY[name]()
    proto.set_params(**params)
    return proto


def build(
    name: str,
    instance: Instance,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    progress: bool = False,
) -> tuple[Overlay, dict[str, Any]]:
    """Build protocol ``name`` on ``instance``; returns ``(overlay, stats)``.

    Examples
    --------
    >>> from hedgerow.workloads import make_instance
    >>> inst = make_instance(nodes=50, topics=10, subs=3, seed=0)
    >>> ov, stats = build("ringpt", inst)
    >>> ov.is_symmetric()
    True
    """
    proto = get_protocol(name, **(params or {}))
    overlay = proto.build(instance, seed=seed, progress=progress)
    return overlay, dict(proto.stats_)


__all__ = ["REGISTRY", "OverlayProtocol", "build", "get_protocol", "protocol_names"]
