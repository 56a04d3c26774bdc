"""SpiderCast: greedy and random K-coverage overlays for topic-based pub/sub.

Chockler, Melamed, Tock, Vitenberg.  *SpiderCast: A Scalable Interest-Aware
Overlay for Topic-Based Pub/Sub Communication.*  DEBS 2007.

Every node runs two neighbour-maintenance tasks (section 2.3): greedy coverage
with parameter ``K_g`` and random coverage with ``K_r``.  Each task adds links
until every topic of the node's interest is held by at least ``K`` of its
neighbours (NEXTGREEDYCOVERAGENODE picks the candidate covering most
under-covered topics; NEXTRANDOMCOVERAGENODE a random one covering at least
one), bounded by ``L^max = K |interest|`` plus ``Margin``, and sheds links of
over-covered nodes.  The protocol runs as message passing (CONNECT, CONNECT-OK,
REDIRECT, DISCONNECT, DISCONNECT-OK, LEAVE) on the event core until quiescent;
see :mod:`hedgerow.protocols.maintenance` for the node logic and the readings
chosen where the paper's pseudo-code is ambiguous.

``adaptive=True`` is section 3.3.1: ``K_g = 3``; a node whose greedy coverage
ends with exactly ``K_g`` neighbours starts random coverage with ``K_r = 1``,
and after each random coverage raises ``K_r`` while its degree is below its
number of subscriptions, up to ``K_r = 3`` (the paper's "K_r <= 3" read as a
cap of 3, the random-graph constant of section 2).  A node saturated at
``L^max`` before its greedy coverage is complete also starts with ``K_r = 1``.

Ties in the greedy argmax follow ``ties`` (default ``"sequential"``, the
one-pass argmax in view order; see :mod:`hedgerow.protocols.maintenance` and
``docs/spidercast.md`` for why this is the paper's reading).

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=300, topics=30, subs=5, popularity="rss", seed=2)
>>> proto = SpiderCast(kg=3, kr=0)
>>> ov = proto.build(inst, seed=2)
>>> from hedgerow.metrics import partitioned_topics
>>> partitioned_topics(ov, inst), proto.stats_["quiescent"]
(0, True)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hedgerow.engine.core import Simulator
from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.base import OverlayProtocol, as_bool, as_choice, as_float, as_int
from hedgerow.protocols.maintenance import TIE_RULES, Maintenance, TaskSpec, make_engine, run_engine


class SpiderCast(OverlayProtocol):
    """SpiderCast overlay builder (DEBS'07).

    Parameters
    ----------
    kg : int, default 3
        Greedy coverage ``K_g``.
    kr : int, default 0
        Random coverage ``K_r``.
    margin : int, default 5
        Links accepted above ``L^max``.
    adaptive : bool, default False
        Adaptive ``K_r`` of section 3.3.1 (then ``kg`` must be 3 and ``kr`` 0).
    membership : float, default 1.0
        Fraction of the other nodes in each interest view (section 3.7: 0.05 works).
    heartbeat : float, default 0.0
        Heartbeat period in ``connect_timeout`` units.  With a period ``> 0``
        a node knows its neighbours' degree and target from the values carried
        by CONNECT / CONNECT-OK and by heartbeats sent when they change; ``0``
        reads them live (perfect heartbeats, the default: measured results are
        the same within noise and the build is twice as fast).
    ties : {"sequential", "uniform"}, default "sequential"
        How NEXTGREEDYCOVERAGENODE breaks ties ("with ties broken randomly",
        Figure 5): ``"sequential"`` keeps the first best candidate in view
        order and lets each later tied one replace it with probability 1/2 (the
        one-pass argmax); ``"uniform"`` draws uniformly among the tied
        candidates.  The sequential rule reproduces the paper's Zipf(2)
        partitions and its maximum degree of 32; see ``docs/spidercast.md``.
    raise_target : bool, default False
        Raise the target ``L`` on every accepted link, as Figure 4 lines 4-5
        read literally; the default follows the text (``L`` = the degree needed
        for coverage), see :mod:`hedgerow.protocols.maintenance`.
    max_rounds : float, default 5000
        Safety bound on simulated time in ``connect_timeout`` units.
    """

    name: ClassVar[str] = "spidercast"
    paper: ClassVar[str] = "Chockler, Melamed, Tock, Vitenberg. SpiderCast. DEBS 2007."
    claims_topic_connected: ClassVar[bool] = True

    def __init__(
        self,
        *,
        kg: int = 3,
        kr: int = 0,
        margin: int = 5,
        adaptive: bool = False,
        membership: float = 1.0,
        heartbeat: float = 0.0,
        ties: str = "sequential",
        raise_target: bool = False,
        max_rounds: float = 5000.0,
    ) -> None:
        self.ties = ties
        self.raise_target = raise_target
        self.kg = kg
        self.kr = kr
        self.margin = margin
        self.adaptive = adaptive
        self.membership = membership
        self.heartbeat = heartbeat
        self.max_rounds = max_rounds

    def _checked(self) -> tuple[int, int, int, bool, float, float]:
        kg = as_int(self.name, "kg", self.kg)
        kr = as_int(self.name, "kr", self.kr)
        margin = as_int(self.name, "margin", self.margin)
        adaptive = as_bool(self.name, "adaptive", self.adaptive)
        membership = as_float(self.name, "membership", self.membership, low=1e-9, high=1.0)
        max_rounds = as_float(self.name, "max_rounds", self.max_rounds, low=1.0, high=1e9)
        as_choice(self.name, "ties", self.ties, tuple(TIE_RULES))
        if kg == 0 and kr == 0 and not adaptive:
            raise ParameterError("spidercast: kg=0 and kr=0 build no links; set kg or kr above 0")
        if adaptive and (kg != 3 or kr != 0):
            raise ParameterError("spidercast: adaptive=true fixes kg=3 and starts from kr=0")
        return kg, kr, margin, adaptive, membership, max_rounds

    def check_params(self) -> None:
        self._checked()

    def degree_bound(self, instance: Instance) -> np.ndarray:
        """Per-node bound: ``sum over tasks of K * |interest| + Margin``."""
        kg, kr, margin, adaptive, _, _ = self._checked()
        kr_max = 3 if adaptive else kr
        subs = instance.n_subs.astype(np.int64)
        bound = (kg * subs + margin) if kg > 0 else 0
        return bound + (kr_max * subs + margin if (kr_max > 0 or adaptive) else 0)

    def maintenance_engine(
        self, instance: Instance, streams: RngStreams, *, sim: Simulator | None = None
    ) -> Maintenance:
        """The configured message-passing engine (not yet run), e.g. for a churn run.

        Examples
        --------
        >>> from hedgerow.model import Instance, RngStreams
        >>> inst = Instance.from_lists([[0, 1], [0], [1], [0, 1]] * 5, n_topics=2)
        >>> eng = SpiderCast().maintenance_engine(inst, RngStreams(0))
        >>> [t.spec.selection for t in eng.tasks]
        ['greedy', 'random-cover']
        """
        kg, kr, margin, adaptive, membership, max_rounds = self._checked()
        tasks = [
            TaskSpec("greedy", kg),
            TaskSpec("random-cover", kr, adaptive_random=adaptive),
        ]
        return make_engine(
            instance,
            tasks,
            margin,
            membership,
            as_float(self.name, "heartbeat", self.heartbeat, low=0.0, high=1e6),
            max_rounds,
            streams,
            raise_target=as_bool(self.name, "raise_target", self.raise_target),
            ties=as_choice(self.name, "ties", self.ties, tuple(TIE_RULES)),
            sim=sim,
        )

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: bool
    ) -> tuple[Overlay, dict[str, Any]]:
        return run_engine(self.maintenance_engine(instance, streams), progress, self.name)
