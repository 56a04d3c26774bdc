"""Hedgerow: a laboratory for topic-based publish/subscribe overlays.

The package builds, simulates and measures published pub/sub overlay protocols
on shared workloads and metrics.  See ``docs/architecture.md`` for the map of
the code.  Top-level names are imported lazily, so ``import hedgerow`` is cheap.

Examples
--------
>>> import hedgerow as hr
>>> inst = hr.make_instance(nodes=200, topics=20, subs=4, popularity="rss", seed=1)
>>> overlay, stats = hr.build("spidercast", inst, seed=1)
>>> hr.metrics.partitioned_topics(overlay, inst)
0
"""

from __future__ import annotations

import importlib
from typing import Any

#: the one version source (``pyproject.toml`` reads it; ``CHANGELOG.md`` names it first)
__version__ = "0.2.0"

_LAZY = {
    "DataError": "hedgerow.errors",
    "HedgerowError": "hedgerow.errors",
    "ParameterError": "hedgerow.errors",
    "SpecError": "hedgerow.errors",
    "Instance": "hedgerow.model",
    "Overlay": "hedgerow.model",
    "RngStreams": "hedgerow.model",
    "make_instance": "hedgerow.workloads",
    "build": "hedgerow.scenarios",
    "compare": "hedgerow.scenarios",
    "simulate": "hedgerow.scenarios",
    "make_world": "hedgerow.scenarios",
    "get_protocol": "hedgerow.protocols",
    "protocol_names": "hedgerow.protocols",
    "metrics": "hedgerow.metrics",
    "to_frame": "hedgerow.frames",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'hedgerow' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name])
    value = module if _LAZY[name] == f"hedgerow.{name}" else getattr(module, name)
    globals()[name] = value
    return value
