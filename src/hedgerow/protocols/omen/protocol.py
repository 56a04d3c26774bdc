"""OMen and OMen-G as maintained protocols (Chen, Vitenberg, Jacobsen, DEBS 2016).

``omen`` keeps every node's local view by gossip (section 4.3); ``omen-g``
gives every coordinator the global view (Table 3: "Maintaining a *global*
view at each node", the paper's sensitivity variant).  Both repair the
overlay with Algorithm 1 on the shadow set and the LowODA rule; the engine
and the readings chosen are in :mod:`hedgerow.protocols.omen.engine`.

Examples
--------
>>> import numpy as np
>>> from hedgerow.engine import Simulator
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=60, topics=8, subs="2:3", popularity="rss", seed=3)
>>> proto = Omen(coverage=3, warmup_cycles=5)
>>> eng = proto.maintenance_engine(inst, proto.streams(1), sim=Simulator())
>>> eng.start(np.ones(60, dtype=bool)); eng.leave(7); n = eng.settle()
>>> from hedgerow.protocols.omen.checks import omen_violations
>>> omen_violations(eng), eng.events[-1].done
([], True)
"""

from __future__ import annotations

from typing import Any, ClassVar

from hedgerow.engine.core import Simulator
from hedgerow.model.instance import Instance
from hedgerow.model.rng import RngStreams
from hedgerow.params import Choice, Float, Int
from hedgerow.protocols.base import MaintainedProtocol
from hedgerow.protocols.omen.checks import omen_hook
from hedgerow.protocols.omen.engine import OmenEngine
from hedgerow.protocols.tco.static import DEFAULT_RHO

__all__ = ["Omen", "OmenG"]

_PAPER = (
    "C. Chen, R. Vitenberg, H.-A. Jacobsen, OMen: Overlay Mending for Topic-based"
    " Publish/Subscribe Systems Under Churn, DEBS 2016"
)


class Omen(MaintainedProtocol):
    """OMen: shadow-set repair with gossip-maintained backup sets."""

    name: ClassVar[str] = "omen"
    paper: ClassVar[str] = _PAPER
    claims_topic_connected: ClassVar[bool] = True
    #: a TCO after each event's repair, links only added (the churn driver's observer)
    repairs_tco: ClassVar[bool] = True
    repair_kind: ClassVar[str] = "add-only"
    #: OMen's own invariants, checked by the churn driver after every event
    invariant_hooks: ClassVar[tuple] = (omen_hook,)
    view: ClassVar[str] = "partial"
    params = {
        "coverage": Int(5, "coverage factor lambda of backup sets (eq. 3)", low=0),
        "resilience": Int(1, "L: concurrent churn events tolerated", low=1),
        "backups": Choice("pd", ("pd", "greedy"), "backup builder (section 4.2)"),
        "pd_pick": Choice(
            "dual", ("dual", "random", "max-gain"), "primal-dual subscriber choice (reading R-5)"
        ),
        "ready": Choice(
            "lambda", ("lambda", "cover"), "when a backup set is ready (reading R-6)"
        ),
        "rho": Float(
            DEFAULT_RHO, "LowODA trade-off in Algorithm 1 and the initial build", low=1.0
        ),
        "components": Choice(
            "true", ("true", "local"), "components Algorithm 1 sees (reading R-1)"
        ),
        "rnd_view": Int(10, "peer-sampling nodes in a gossip buffer", low=0),
        "sampler": Choice(
            "uniform", ("uniform", "newscast", "cyclon"), "peer sampling behind rnd.view"
        ),
        "warmup_cycles": Int(100, "gossip cycles before the first event", low=0),
        "detect": Float(1.0, "failure-detection delay", low=0.0, unit="cycles"),
        "standby_timeout": Float(20.0, "standbyL timer", low=0.0, low_open=True, unit="cycles"),
        "join_timeout": Float(
            60.0, "longest wait of a join for a ready backup set (reading R-6)",
            low=0.0, low_open=True, unit="cycles",
        ),
    }
    quick_params: ClassVar[dict[str, Any]] = {"coverage": 3, "resilience": 2, "warmup_cycles": 5}

    def _engine_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        return {**values, "view": self.view}

    def maintenance_engine(
        self, instance: Instance, streams: RngStreams, *, sim: Simulator | None = None
    ) -> OmenEngine:
        """An :class:`OmenEngine` on ``sim`` (not yet started)."""
        values = self._validate(instance)
        return OmenEngine(instance, streams, sim, **self._engine_kwargs(values))


class OmenG(Omen):
    """OMen-G: OMen with a global view (backups built over all live nodes at repair time)."""

    name: ClassVar[str] = "omen-g"
    view: ClassVar[str] = "global"
    params = {
        **{
            k: v
            for k, v in Omen.params.items()
            if k not in ("rnd_view", "sampler", "warmup_cycles", "ready", "join_timeout")
        },
        "backups": Choice("pd", ("pd", "greedy", "all"), "backup builder; all = every live node"),
    }
    quick_params: ClassVar[dict[str, Any]] = {"coverage": 3, "resilience": 2}

    def _engine_kwargs(self, values: dict[str, Any]) -> dict[str, Any]:
        return {**values, "view": self.view, "warmup_cycles": 0}


