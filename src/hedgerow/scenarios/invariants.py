"""The invariants a mended overlay keeps, checked after every churn event.

OMen (Chen, Vitenberg, Jacobsen, DEBS 2016) promises, for OMen, OMen-G,
LowODA-Inc and LowODA-Re, a topic-connected overlay once each churn event's
repair completes (Lemma 1b; §5's main property under Assumption 0).
:class:`InvariantObserver` reads a running
:class:`~hedgerow.protocols.engine_api.ChurnEngine` after each event (only
through the interface, plus the optional ``last_added`` attribute an engine
may expose) and returns the event's measured row and its violations:

``partitioned_topics``
    Topics whose online subscribers lie in more than one component of the
    topic subgraph of the online nodes (paths through any online subscriber).
    A violation when the protocol promises a TCO after each repair
    (``expect_tco``).
``offline_links``, ``self_loops``
    Links touching an offline node, or a node to itself (always violations).
``degree_bookkeeping``
    With ``repair="add-only"`` (a repair only adds links; OMen, LowODA-Inc):
    every link present before the event is still there unless it touched the
    node that left, and every new link is one the repair reported adding
    (``engine.last_added``, when the engine exposes it); equivalently a
    node's degree changes only by links added to it or a neighbour's
    departure.  ``repair="rebuild"`` (LowODA-Re) and ``None`` (SpiderCast,
    measured, not asserted) skip it.
hooks
    Callables ``hook(engine, event) -> {name: violations}`` add the checks a
    protocol knows about (OMen: backup-set acceptability, storage bounds);
    each name becomes a column ``viol_<name>`` and counts in ``violations``.

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import RngStreams
>>> from hedgerow.protocols import get_protocol
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=40, topics=8, subs=3, seed=1)
>>> eng = get_protocol("lowoda-inc").maintenance_engine(inst, RngStreams(1))
>>> eng.start(np.ones(40, dtype=bool))
>>> obs = InvariantObserver(inst.n_topics, repair="add-only")
>>> obs.reset(eng)
>>> eng.leave(5)
>>> row = obs.after_event(eng, {"type": "leave", "node": 5})
>>> row["partitioned_topics"], row["violations"]
(0, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.metrics import topic_components
from hedgerow.protocols.engine_api import ChurnEngine
from hedgerow.scenarios.observers import online_view

__all__ = ["REPAIR_KINDS", "Hook", "InvariantObserver"]

#: what a protocol's repair may do to existing links
REPAIR_KINDS = ("add-only", "rebuild", None)

#: a protocol-specific check: ``hook(engine, event) -> {name: violations}``
Hook = Callable[[ChurnEngine, Mapping[str, Any]], Mapping[str, int]]


def _keys(edges: np.ndarray, n: int) -> np.ndarray:
    e = np.sort(np.asarray(edges, dtype=np.int64).reshape(-1, 2), axis=1)
    return np.unique(e[:, 0] * n + e[:, 1])


class InvariantObserver:
    """Measure a churn engine after each event and count violated invariants.

    Parameters
    ----------
    n_topics : int
        Number of topics.
    expect_tco : bool, default True
        Whether a partitioned topic after an event's repair is a violation.
    repair : {"add-only", "rebuild", None}
        What the repair may do to links (module docstring).
    hooks : sequence of Hook, optional
        Protocol-specific checks.

    Attributes
    ----------
    totals : dict
        Violations summed over the events so far, by name, and ``events``.
    """

    def __init__(self, n_topics: int, *, expect_tco: bool = True,
                 repair: str | None = "add-only", hooks: tuple[Hook, ...] | list = ()) -> None:
        if repair not in REPAIR_KINDS:
            raise ParameterError(f"repair must be one of {REPAIR_KINDS}, got {repair!r}",
                                 key="repair")
        self.n_topics = int(n_topics)
        self.expect_tco = bool(expect_tco)
        self.repair = repair
        self.hooks = list(hooks)
        self._prev: np.ndarray | None = None
        self.totals: dict[str, int] = {"events": 0, "violations": 0}

    def reset(self, engine: ChurnEngine) -> None:
        """Remember the links of a freshly started engine (before the first event)."""
        self._prev = _keys(engine.overlay().edges(), engine.n)

    def after_event(self, engine: ChurnEngine, event: Mapping[str, Any]) -> dict[str, Any]:
        """The row of one event: degrees, partitioned topics, violations by kind.

        ``event`` holds at least ``type`` (``"join"``/``"leave"``) and ``node``.
        """
        n = engine.n
        edges = engine.overlay().edges()
        online = np.asarray(engine.online, dtype=bool)
        ids, ov, inst = online_view(engine, self.n_topics)
        comps = topic_components(ov, inst)
        deg = ov.degree().astype(np.float64)
        partitioned = int((comps > 1).sum())
        viol: dict[str, int] = {}
        viol["partitioned_topics"] = partitioned if self.expect_tco else 0
        viol["offline_links"] = int((~online[edges]).any(axis=1).sum()) if len(edges) else 0
        viol["self_loops"] = int((edges[:, 0] == edges[:, 1]).sum()) if len(edges) else 0
        now = _keys(edges, n)
        added = np.zeros(0, dtype=np.int64)
        if self._prev is not None:
            added = np.setdiff1d(now, self._prev, assume_unique=True)
            if self.repair == "add-only":
                gone = np.setdiff1d(self._prev, now, assume_unique=True)
                p = int(event.get("node", -1))
                left = event.get("type") == "leave"
                bad_gone = gone if not left else gone[(gone // n != p) & (gone % n != p)]
                bad = len(bad_gone)
                reported = getattr(engine, "last_added", None)
                if reported is not None:
                    rep = _keys(reported, n)
                    bad += len(np.setxor1d(added, rep, assume_unique=True))
                viol["degree_bookkeeping"] = bad
        self._prev = now
        for hook in self.hooks:
            for k, v in dict(hook(engine, event)).items():
                viol[k] = int(v)
        row: dict[str, Any] = {
            "online": int(online.sum()),
            "edges": len(edges),
            "edges_added": len(added),
            "max_degree": int(deg.max()) if len(deg) else 0,
            "avg_degree": float(deg.mean()) if len(deg) else 0.0,
            "partitioned_topics": partitioned,
        }
        total = 0
        for k, v in viol.items():
            row[f"viol_{k}"] = v
            total += v
            self.totals[k] = self.totals.get(k, 0) + v
        row["violations"] = total
        self.totals["violations"] += total
        self.totals["events"] += 1
        del ids
        return row
