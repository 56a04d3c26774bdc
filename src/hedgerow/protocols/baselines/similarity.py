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
from hedgerow.protocols.base import OverlayProtocol, as_choice, as_float, as_int
from hedgerow.protocols.maintenance import TIE_RULES, Maintenance, TaskSpec, make_engine, run_engine


class Similarity(OverlayProtocol):
    """``similarity(x, y)``: ``x`` links by largest subscription intersection + ``y`` random links.

    Parameters
    ----------
    similar : int, default 10
        ``x``, similarity links per node.
    random : int, default 0
        ``y``, random links per node.
    margin : int, default 5
        Links accepted above the target.
    membership : float, default 1.0
        Fraction of other nodes in each view (the paper uses full views).
    ties : {"uniform", "sequential"}, default "uniform"
        How NEXTSIMILARITYNODE breaks ties.  Uniform by default: the paper's
        similarity(10,0) and similarity(20,0) degrees, 10.08 and 20.04, leave
        no room for the hubs that the one-pass ``"sequential"`` rule creates
        (10.42 and 20.53 with it; 10.11 and 20.04 uniform), see
        ``docs/spidercast.md``.
    max_rounds : float, default 5000
        Safety bound on simulated time.
    """

    name: ClassVar[str] = "similarity"
    paper: ClassVar[str] = "SpiderCast (DEBS 2007) section 3.9.1; Chand & Felber, Euro-Par 2005."

    def __init__(
        self,
        *,
        similar: int = 10,
        random: int = 0,
        margin: int = 5,
        membership: float = 1.0,
        ties: str = "uniform",
        max_rounds: float = 5000.0,
    ) -> None:
        self.ties = ties
        self.similar = similar
        self.random = random
        self.margin = margin
        self.membership = membership
        self.max_rounds = max_rounds

    def _links(self) -> tuple[int, int]:
        return as_int(self.name, "similar", self.similar), as_int(self.name, "random", self.random)

    def _ties(self) -> str:
        return getattr(self, "ties", "uniform")

    def check_params(self) -> None:
        x, y = self._links()
        as_int(self.name, "margin", self.margin)
        as_float(self.name, "membership", self.membership, low=1e-9, high=1.0)
        as_float(self.name, "max_rounds", self.max_rounds, low=1.0, high=1e9)
        as_choice(self.name, "ties", self._ties(), tuple(TIE_RULES))
        if x + y == 0:
            raise ParameterError(f"{self.name}: no links requested; set similar or random above 0")

    def _validate(self, instance: Instance) -> None:
        self.check_params()
        x, y = self._links()
        if x + y >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: {x + y} links per node need more than {instance.n_nodes} nodes"
            )

    def degree_bound(self, instance: Instance) -> np.ndarray:
        x, y = self._links()
        m = as_int(self.name, "margin", self.margin)
        bound = (x + m if x else 0) + (y + m if y else 0)
        return np.full(instance.n_nodes, bound, dtype=np.int64)

    def maintenance_engine(
        self, instance: Instance, streams: RngStreams, *, sim: Simulator | None = None
    ) -> Maintenance:
        """The configured message-passing engine (not yet run), e.g. for a churn run."""
        x, y = self._links()
        tasks = [
            TaskSpec("similarity", x, degree_target=True),
            TaskSpec("random", y, degree_target=True),
        ]
        return make_engine(
            instance,
            tasks,
            as_int(self.name, "margin", self.margin),
            float(self.membership),
            0.0,
            float(self.max_rounds),
            streams,
            ties=as_choice(self.name, "ties", self._ties(), tuple(TIE_RULES)),
            sim=sim,
        )

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: bool
    ) -> tuple[Overlay, dict[str, Any]]:
        return run_engine(self.maintenance_engine(instance, streams), progress, self.name)


class RandomOverlay(Similarity):
    """``random(y)``: ``y`` uniformly random links per node (``similarity(0, y)``).

    Parameters
    ----------
    links : int, default 10
        ``y``, random links per node.
    margin : int, default 5
        Links accepted above the target.
    membership : float, default 1.0
        Fraction of other nodes in each view.
    max_rounds : float, default 5000
        Safety bound on simulated time.
    """

    name: ClassVar[str] = "random"
    paper: ClassVar[str] = "SpiderCast (DEBS 2007) section 3.9.1."

    def __init__(
        self,
        *,
        links: int = 10,
        margin: int = 5,
        membership: float = 1.0,
        max_rounds: float = 5000.0,
    ) -> None:
        self.links = links
        self.margin = margin
        self.membership = membership
        self.max_rounds = max_rounds

    def _links(self) -> tuple[int, int]:
        return 0, as_int(self.name, "links", self.links)
