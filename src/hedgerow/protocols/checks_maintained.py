"""Invariants of a maintained overlay after churn, for tests and conformance suites.

:func:`check_maintained` takes an engine that implements
:class:`~hedgerow.protocols.engine_api.ChurnEngine` once it is quiescent (no
event pending: every message delivered, every link request answered) and lists
what is wrong with its state.  Through the interface it checks that no link
touches an offline node and that :meth:`~ChurnEngine.undercovered` agrees with
:meth:`~ChurnEngine.is_covered`; for the message-passing
:class:`~hedgerow.protocols.maintenance.Maintenance` engine it also recounts
each task's state from its neighbour sets: symmetric links, degrees, coverage
counts and the under-covered bookkeeping.  An engine of another protocol gets
the interface checks; its own recount belongs beside :func:`_maintenance_violations`.

Examples
--------
>>> import numpy as np
>>> from hedgerow.model import RngStreams
>>> from hedgerow.protocols import get_protocol
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=40, topics=6, subs=3, seed=1)
>>> proto = get_protocol("spidercast", kg=3, kr=0, ties="sequential")
>>> eng = proto.maintenance_engine(inst, RngStreams(0))
>>> eng.start(np.arange(40) % 4 != 0)
>>> eng.run_until(200.0)
>>> check_maintained(eng)
[]
>>> eng.tasks[0].deg[1] += 1
>>> check_maintained(eng)
['task 0, node 1: degree 5 but 4 neighbours']
"""

from __future__ import annotations

import numpy as np

from hedgerow.model import interest_matrix
from hedgerow.protocols.engine_api import ChurnEngine
from hedgerow.protocols.maintenance import Maintenance

__all__ = ["check_maintained"]

#: violations reported per check before the rest are summarised
_LIMIT = 20


def check_maintained(engine: ChurnEngine) -> list[str]:
    """Violations of a quiescent maintained engine's invariants (``[]`` when it is sound).

    Parameters
    ----------
    engine : ChurnEngine
        An engine with no event pending (e.g. after ``run_until`` past the last
        churn event); in a static build (before ``start``) every node counts as online.

    Returns
    -------
    list of str
        One line per violation (at most 20, then a count of the rest): a link
        to an offline node, a one-sided link, a degree, coverage count or
        under-covered flag that disagrees with a recount.
    """
    online = engine.online if engine.online is not None else np.ones(engine.n, dtype=bool)
    out: list[str] = []
    edges = engine.overlay().edges()
    for u, v in edges[~(online[edges[:, 0]] & online[edges[:, 1]])].tolist():
        out.append(f"link {u}-{v} touches offline node {u if not online[u] else v}")
    under = np.asarray(engine.undercovered(), dtype=bool)
    for p in np.flatnonzero(online).tolist():
        if bool(under[p]) == engine.is_covered(p):
            out.append(f"node {p}: undercovered() is {bool(under[p])}, so is is_covered()")
    for p in np.flatnonzero(under & ~online).tolist():
        out.append(f"offline node {p} is reported under-covered")
    if isinstance(engine, Maintenance):
        out.extend(_maintenance_violations(engine, online))
    if len(out) > _LIMIT:
        out = [*out[:_LIMIT], f"... and {len(out) - _LIMIT} more"]
    return out


def _maintenance_violations(engine: Maintenance, online: np.ndarray) -> list[str]:
    """Recount every task of a :class:`Maintenance` engine from its neighbour sets."""
    out: list[str] = []
    n_topics = engine.inst.n_topics
    holds = interest_matrix(engine.masks, n_topics)
    indptr, topics = engine.sub_indptr, engine.sub_topics
    for ti, task in enumerate(engine.tasks):
        for p in range(engine.n):
            nb = sorted(task.nbrs[p])
            at = f"task {ti}, node {p}"
            if not online[p]:
                if nb or task.deg[p]:
                    out.append(f"{at}: offline but keeps {len(nb)} links")
                continue
            if task.deg[p] != len(nb):
                out.append(f"{at}: degree {task.deg[p]} but {len(nb)} neighbours")
            for q in nb:
                if not online[q]:
                    out.append(f"{at}: keeps offline neighbour {q}")
                elif p not in task.nbrs[q]:
                    out.append(f"{at}: link {p}-{q} is one-sided")
            k = int(task.k[p])
            if task.degree_target:
                if int(task.uc[p]) != max(0, k - len(nb)):
                    out.append(f"{at}: {task.uc[p]} links missing, recount {max(0, k - len(nb))}")
                continue
            mine = topics[indptr[p] : indptr[p + 1]]
            expect = np.zeros(n_topics, dtype=np.int64)
            expect[mine] = holds[nb][:, mine].sum(axis=0)
            cov = np.asarray(task.cov[p], dtype=np.int64)
            for x in np.flatnonzero(cov != expect).tolist():
                out.append(f"{at}: {cov[x]} neighbours hold topic {x}, recount {expect[x]}")
            if k > 0:
                short = int((expect[mine] < k).sum())
                if int(task.uc[p]) != short:
                    out.append(f"{at}: {task.uc[p]} topics under-covered, recount {short}")
    return out
