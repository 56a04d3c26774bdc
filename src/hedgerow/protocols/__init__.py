"""Overlay protocols, one module per protocol, and the one registry of them all.

Adding a protocol = one module + one line in :data:`REGISTRY` (see
``docs/contributing.md``).  A protocol declares its capabilities by the base
classes it derives from (:mod:`hedgerow.protocols.base`) and its parameters
in ``params`` (:mod:`hedgerow.params`); help texts, spec checks, the
conformance checks (:mod:`hedgerow.scenarios.checks`) and the parameter
reference of ``docs/specs.md`` (:func:`params_reference`) read both from here.

Examples
--------
>>> protocol_names(capability="maintained")
['lowoda-inc', 'lowoda-re', 'omen', 'omen-g', 'random', 'similarity', 'spidercast']
>>> from hedgerow.model import Instance
>>> get_protocol("ringpt").build(
...     Instance.from_lists([[0], [0], [0]], n_topics=1)).n_edges
3
"""

from __future__ import annotations

from typing import Any

from hedgerow.errors import ParameterError
from hedgerow.protocols.base import (
    CAPABILITIES,
    AdaptiveProtocol,
    MaintainedProtocol,
    OverlayProtocol,
    StaticProtocol,
    capabilities,
)
from hedgerow.protocols.baselines.complete import CompleteGraph
from hedgerow.protocols.baselines.gossipsub import GossipSubSplit
from hedgerow.protocols.baselines.opt import OPT
from hedgerow.protocols.baselines.perigee import Perigee
from hedgerow.protocols.baselines.random_graph import RandomGraph
from hedgerow.protocols.baselines.ringpt import RingPerTopic
from hedgerow.protocols.baselines.rvr import RVR
from hedgerow.protocols.baselines.scribe import ScribeRandom, ScribeTopic
from hedgerow.protocols.baselines.similarity import RandomOverlay, Similarity
from hedgerow.protocols.goldfish import Goldfish
from hedgerow.protocols.omen import Omen, OmenG
from hedgerow.protocols.spidercast import SpiderCast
from hedgerow.protocols.tco.repair import LowODAInc, LowODARe
from hedgerow.protocols.tco.static import GreedyMerge, LowODA, MinMaxODA
from hedgerow.protocols.topiary import Topiary
from hedgerow.protocols.vitis import Vitis

#: name -> protocol class, for every protocol (the key is the class's ``name``)
REGISTRY: dict[str, type[OverlayProtocol]] = {
    cls.name: cls
    for cls in (
        SpiderCast,
        Similarity,
        RandomOverlay,
        RingPerTopic,
        Topiary,
        RandomGraph,
        CompleteGraph,
        GossipSubSplit,
        ScribeRandom,
        ScribeTopic,
        Goldfish,
        Perigee,
        GreedyMerge,
        MinMaxODA,
        LowODA,
        LowODARe,
        LowODAInc,
        Omen,
        OmenG,
        OPT,
        RVR,
        Vitis,
    )
}


def protocol_names(capability: str | None = None) -> list[str]:
    """Registered protocol names, sorted; only those with ``capability`` when given.

    Raises :class:`ParameterError` for an unknown capability.
    """
    if capability is None:
        return sorted(REGISTRY)
    if capability not in CAPABILITIES:
        raise ParameterError(
            f"unknown capability {capability!r}; allowed: {', '.join(CAPABILITIES)}"
        )
    return sorted(n for n, cls in REGISTRY.items() if capability in capabilities(cls))


def protocol_class(name: str, capability: str | None = None) -> type[OverlayProtocol]:
    """The class registered as ``name`` (with ``capability`` when given).

    The error lists the allowed names.
    """
    if not isinstance(name, str) or name not in REGISTRY:
        raise ParameterError(f"unknown protocol {name!r}; allowed: {', '.join(protocol_names())}")
    cls = REGISTRY[name]
    if capability is not None and capability not in capabilities(cls):
        allowed = ", ".join(protocol_names(capability))
        raise ParameterError(
            f"{name} is not a {capability} protocol (it is {', '.join(capabilities(cls))});"
            f" {capability} protocols: {allowed}"
        )
    return cls


def get_protocol(name: str, capability: str | None = None, **params: Any) -> OverlayProtocol:
    """An unbuilt protocol ``name`` with ``params`` set.

    Raises :class:`ParameterError` for an unknown protocol or parameter.
    """
    return protocol_class(name, capability)(**params)


def protocol_help(capability: str | None = None) -> str:
    """One line per protocol: name, capabilities and parameters (for ``--help`` texts)."""
    lines = []
    for n in protocol_names(capability):
        cls = REGISTRY[n]
        ps = ", ".join(cls.params) or "no parameters"
        lines.append(f"{n} [{'/'.join(capabilities(cls))}]: {ps}")
    return "\n".join(lines)


def params_reference() -> str:
    """The parameter reference of every registered protocol, as Markdown (``docs/specs.md``).

    One table per protocol, generated from the declarations, so the docs
    cannot drift from the code (a test compares ``docs/specs.md`` with it).

    Examples
    --------
    >>> params_reference().splitlines()[0]
    '#### `complete` (static)'
    """
    out = []
    for n in protocol_names():
        cls = REGISTRY[n]
        out.append(f"#### `{n}` ({', '.join(capabilities(cls))})")
        if not cls.params:
            out.append("No parameters.")
            continue
        rows = ["| parameter | type, range, default | meaning |", "|---|---|---|"]
        for k, p in cls.params.items():
            rows.append(f"| `{k}` | {_md(p.describe())} | {_md(p.doc)} |")
        out.append("\n".join(rows))
    return "\n\n".join(out) + "\n"


def _md(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


__all__ = [
    "CAPABILITIES",
    "REGISTRY",
    "AdaptiveProtocol",
    "MaintainedProtocol",
    "OverlayProtocol",
    "StaticProtocol",
    "capabilities",
    "get_protocol",
    "params_reference",
    "protocol_class",
    "protocol_help",
    "protocol_names",
]
