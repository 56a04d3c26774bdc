"""Shared parameter handling of the Topiary baselines that give every node ``d`` out-links."""

from __future__ import annotations

from typing import ClassVar

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.protocols.base import OverlayProtocol, as_int


class FixedOutDegree(OverlayProtocol):
    """Base of the directed baselines with one parameter, the out-degree ``d`` of every node.

    Subclasses set :attr:`name`, :attr:`paper` and implement ``_build``; ``d``
    must be an integer in ``[1, n_nodes)``.

    Parameters
    ----------
    d : int, default 6
        Outgoing degree of every node.
    """

    directed: ClassVar[bool] = True

    def __init__(self, *, d: int = 6) -> None:
        self.d = d

    def _validate(self, instance: Instance) -> None:
        d = as_int(self.name, "d", self.d, minimum=1)
        if d >= instance.n_nodes:
            raise ParameterError(
                f"{self.name}: parameter d must be below the number of nodes "
                f"({instance.n_nodes}), got {d}"
            )

    def degree_bound(self, instance: Instance) -> int | None:
        """Out-degree bound ``d``."""
        return int(self.d)
