"""Similarity-based and random overlays (SpiderCast section 3.9.1).

The SpiderCast paper builds its unstructured baselines with SpiderCast's own
maintenance code, replacing the neighbour-choice functions by
NEXTSIMILARITYNODE (the view member whose subscription shares most topics with
the node's, ties random) and NEXTRANDOMNODE (a uniformly random view member).
``similarity(x, y)`` gives each node ``x`` similarity links and ``y`` random
links; ``random(y)`` is ``similarity(0, y)``.  The idea of similarity links is
from Chand and Felber, *Semantic peer-to-peer overlays for publish/subscribe
networks*, Euro-Par 2005.

A node's target is a number of links, not a topic coverage: it is
under-covered while it has fewer than ``x`` (resp. ``y``) neighbours in the
task, with ``L^max = x`` (see :mod:`hedgerow.protocols.maintenance`).

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=200, topics=20, subs=4, seed=1)
>>> ov = Similarity(similar=4, random=0).build(inst, seed=1)
>>> bool(ov.degree().min() >= 4)
True
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hedgerow.engine.core import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Float, Int
from hedgerow.protocols.base import MaintainedProtocol, StaticProtocol
from hedgerow.protocols.maintenance import (
    TIE_RULES,
    Maintenance,
    TaskSpec,
    make_engine,
    run_engine,
)

#: parameters shared by similarity(x, y) and random(y)
_SHARED = {
    "margin": Int(5, "links accepted above the target", low=0, unit="links"),
    "membership": Float(
        1.0, "fraction of the other nodes in each view", low=0.0, high=1.0, low_open=True
    ),
    "max_rounds": Float(
        5000.0, "safety bound on simulated time", low=1.0, high=1e9, unit="connect_timeout"
    ),
}


class Similarity(StaticProtocol, MaintainedProtocol):
    """``similarity(x, y)``: ``x`` links by largest subscription intersection + ``y`` random links.

    ``ties`` is uniform by default: the paper's similarity(10,0) and
    similarity(20,0) degrees, 10.08 and 20.04, leave no room for the hubs
    that the one-pass ``"sequential"`` rule creates (10.42 and 20.53 with it;
    10.11 and 20.04 uniform), see ``docs/spidercast.md``.
    """

    name: ClassVar[str] = "similarity"
    paper: ClassVar[str] = "SpiderCast (DEBS 2007) section 3.9.1; Chand & Felber, Euro-Par 2005."
    params = {
        "similar": Int(10, "x, similarity links per node", low=0, unit="links"),
        "random": Int(0, "y, random links per node", low=0, unit="links"),
        **_SHARED,
        "ties": Choice("uniform", tuple(TIE_RULES), "tie rule of NEXTSIMILARITYNODE"),
    }
    quick_params = {"similar": 3, "random": 1}

    def _links(self, values: dict[str, Any]) -> tuple[int, int]:
        return values["similar"], values["random"]

    def _check(self, values: dict[str, Any]) -> None:
        if sum(self._links(values)) == 0:
            raise ParameterError(
                f"{self.name}: no links requested; set similar or random above 0", key="similar"
            )

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        x, y = self._links(values)
        if x + y >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: {x + y} links per node need more than {instance.n_nodes} nodes"
            )

    def degree_bound(self, instance: Instance) -> np.ndarray:
        values = self.checked()
        x, y = self._links(values)
        m = values["margin"]
        bound = (x + m if x else 0) + (y + m if y else 0)
        return np.full(instance.n_nodes, bound, dtype=np.int64)

    def maintenance_engine(
        self, instance: Instance, streams: RngStreams, *, sim: Simulator | None = None
    ) -> Maintenance:
        """The configured message-passing engine (not yet run), e.g. for a churn run."""
        values = self.checked()
        x, y = self._links(values)
        tasks = [
            TaskSpec("similarity", x, degree_target=True),
            TaskSpec("random", y, degree_target=True),
        ]
        return make_engine(
            instance,
            tasks,
            values["margin"],
            values["membership"],
            0.0,
            values["max_rounds"],
            streams,
            ties=values.get("ties", "uniform"),
            sim=sim,
        )

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        return run_engine(self.maintenance_engine(instance, streams), progress, self.name)


class RandomOverlay(Similarity):
    """``random(y)``: ``y`` uniformly random links per node (``similarity(0, y)``)."""

    name: ClassVar[str] = "random"
    paper: ClassVar[str] = "SpiderCast (DEBS 2007) section 3.9.1."
    params = {"links": Int(10, "y, random links per node", low=0, unit="links"), **_SHARED}
    quick_params = {"links": 3}

    def _links(self, values: dict[str, Any]) -> tuple[int, int]:
        return 0, values["links"]

    def _check(self, values: dict[str, Any]) -> None:
        if values["links"] == 0:
            raise ParameterError(
                "random: parameter links must be above 0 (no links requested)", key="links"
            )
