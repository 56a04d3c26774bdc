"""Shared parameter handling of the Topiary baselines that give every node ``d`` out-links."""

from __future__ import annotations

from typing import ClassVar

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.params import Int
from hedgerow.protocols.base import StaticProtocol


class FixedOutDegree(StaticProtocol):
    """Base of the directed baselines with one parameter, the out-degree ``d`` of every node.

    Subclasses set :attr:`name`, :attr:`paper` and implement ``_build``; ``d``
    must be an integer in ``[1, n_nodes)``.

    Parameters
    ----------
    d : int, default 6
        Outgoing degree of every node.
    """

    directed: ClassVar[bool] = True
    forwarding: ClassVar[str] = "ttl"
    params = {"d": Int(6, "out-degree of every node", low=1, unit="links")}
    quick_params = {"d": 3}
    d: int  # bound by ``params``

    def _check_instance(self, values: dict, instance: Instance) -> None:
        d = values["d"]
        if d >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: parameter d must be below the number of nodes "
                f"({instance.n_nodes}), got {d}"
            )

    def degree_bound(self, instance: Instance) -> int | None:
        """Out-degree bound ``d``."""
        return self.checked()["d"]
