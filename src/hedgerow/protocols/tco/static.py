"""GM, MinMaxODA and LowODA: centralized builders of topic-connected overlays (TCO).

Papers: GM, G. Chockler, R. Melamed, Y. Tock, R. Vitenberg, "Constructing
scalable overlays for pub-sub with many topics", PODC 2007; MinMaxODA,
M. Onus, A. W. Richa, "Minimum maximum degree publish-subscribe overlay network
design", INFOCOM 2009; LowODA, M. Onus, A. W. Richa, "Parameterized maximum and
average degree approximation in topic-based publish-subscribe overlay network
design", ICDCS 2010, as used by OMen (C. Chen, R. Vitenberg, H.-A. Jacobsen,
DEBS 2016, Table 1 and §6.1: the initial TCO of every churn run is built by
LowODA from scratch).

All three run the one engine of :mod:`hedgerow.protocols.tco.engine` (its
docstring states the selection rules, the LowODA reading and the seeded tie
rule) on every node, from no edges.  The build is centralized: no control
messages.

Examples
--------
>>> from hedgerow.workloads import make_instance
>>> inst = make_instance(nodes=60, topics=12, subs=3, seed=2)
>>> from hedgerow.metrics import topic_components
>>> ov = LowODA(rho=2.0).build(inst, seed=1)
>>> int((topic_components(ov, inst) > 1).sum())
0
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.params import Float, check_memory
from hedgerow.protocols.base import StaticProtocol
from hedgerow.protocols.tco.engine import tco_augment
from hedgerow.workloads.memory import tco_matrix_bytes

__all__ = ["DEFAULT_RHO", "GreedyMerge", "LowODA", "MinMaxODA", "build_edges"]

#: LowODA's default ρ (docs/tco.md: calibrated on FB 1K; OMen never states its value)
DEFAULT_RHO = 2.0


def build_edges(instance: Instance, rule: str, rho: float, rng: np.random.Generator,
                nodes: np.ndarray | None = None) -> np.ndarray:
    """The edges ``rule`` adds to an empty overlay over ``nodes`` (all by default)."""
    return tco_augment(instance.masks, nodes, np.empty((0, 2), np.int64), rule=rule, rho=rho,
                       rng=rng)


class _TcoBuilder(StaticProtocol):
    rule: ClassVar[str] = ""
    claims_topic_connected: ClassVar[bool] = True
    stream_key: ClassVar[str] = "tco"

    def _rho(self, values: dict[str, Any]) -> float:
        return 1.0

    def _check_instance(self, values: dict[str, Any], instance: Instance) -> None:
        """Refuse, before the build allocates, a contribution matrix that cannot fit.

        The bound counts every node (the engine leaves out those with no topic to
        connect, and checks its exact size again before allocating).
        """
        n = instance.n_nodes
        check_memory(f"{self.name} on {n:,} nodes (its {n:,} x {n:,} contribution matrix)",
                     tco_matrix_bytes(n, instance.n_topics))

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        values = self.checked()
        stats: dict[str, Any] = {}
        edges = tco_augment(instance.masks, None, np.empty((0, 2), np.int64), rule=self.rule,
                            rho=self._rho(values), rng=streams.stream("ties"), stats=stats)
        # the matrix's layout is not a statistic of the overlay (every layout adds the same
        # edges): the build rows keep the engine's counters only
        for key in ("cell_bits", "overflow"):
            stats.pop(key, None)
        ov = Overlay.from_edges(instance.n_nodes, edges)
        return ov, {"control_messages": 0, "quiescent": True, "edges_added": len(edges),
                    **stats}


class GreedyMerge(_TcoBuilder):
    """GM: add the edge that merges the most topic components until the overlay is a TCO."""

    name: ClassVar[str] = "gm"
    paper: ClassVar[str] = "Chockler, Melamed, Tock, Vitenberg, PODC 2007 (greedy merge)."
    rule: ClassVar[str] = "gm"


class MinMaxODA(_TcoBuilder):
    """MinMaxODA: add the positive-contribution edge of least ``max(d(u), d(v))``."""

    name: ClassVar[str] = "minmaxoda"
    paper: ClassVar[str] = "Onus and Richa, INFOCOM 2009 (MinMaxODA)."
    rule: ClassVar[str] = "minmaxoda"


class LowODA(_TcoBuilder):
    """LowODA(ρ): least ``max(d(u), d(v))`` among edges whose contribution is ≥ W/ρ."""

    name: ClassVar[str] = "lowoda"
    paper: ClassVar[str] = ("Onus and Richa, ICDCS 2010 (LowODA), as used by OMen "
                            "(Chen, Vitenberg, Jacobsen, DEBS 2016).")
    rule: ClassVar[str] = "lowoda"
    params = {
        "rho": Float(DEFAULT_RHO, "LowODA's trade-off ρ: 1 = GM-like (low average degree), "
                     "large = MinMaxODA-like (low maximum degree)", low=1.0),
    }
    quick_params = {"rho": 2.0}

    def _rho(self, values: dict[str, Any]) -> float:
        return float(values["rho"])
