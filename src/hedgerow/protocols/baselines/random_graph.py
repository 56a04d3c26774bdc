"""Random graph baseline of Topiary (section V-A): ``d`` random outgoing neighbours per node.

Paper: Mao & Bojja Venkatakrishnan, "Topiary", arXiv:2312.06800 (2023),
section V-A, "Random graph. Nodes randomly pick the neighbors with the amount
of their outgoing degree."  This is also Topiary's epoch-0 topology ("Topiary
starts with random state"), drawn the same way: ``d`` distinct uniform nodes
other than itself; links carry traffic both ways.
"""

from __future__ import annotations

from typing import Any

from hedgerow.model.instance import Instance
from hedgerow.model.outlinks import out_overlay, random_out_neighbours
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams
from hedgerow.protocols.baselines._out_degree import FixedOutDegree


class RandomGraph(FixedOutDegree):
    """Each node connects to ``d`` distinct uniformly random other nodes.

    Parameters
    ----------
    d : int, default 6
        Outgoing degree of every node.

    Examples
    --------
    >>> from hedgerow.model import Instance
    >>> inst = Instance.from_lists([[0]] * 20, n_topics=1)
    >>> ov = RandomGraph(d=3).build(inst, seed=0)
    >>> ov.directed, ov.degree().tolist() == [3] * 20
    (True, True)
    """

    name = "random-graph"
    paper = "Mao & Bojja Venkatakrishnan, Topiary, arXiv:2312.06800 (2023), section V-A"

    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: Any
    ) -> tuple[Overlay, dict[str, Any]]:
        out = random_out_neighbours(instance.n_nodes, int(self.d), streams.stream("random-graph"))
        return out_overlay(out), {"out_degree": int(self.d)}
