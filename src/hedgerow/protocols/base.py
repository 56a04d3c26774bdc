"""The protocol contract shared by every overlay protocol.

Like scikit-learn estimators, protocol classes take keyword-only parameters in
``__init__`` and only store them; :meth:`OverlayProtocol.build` validates them
(:meth:`_validate`) and runs.  State built while running ends in ``_``
(``overlay_``, ``stats_``).  That gives :meth:`get_params`, :meth:`set_params`,
:meth:`clone`, sweeps over parameters and clear parameter errors for free.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from hedgerow.errors import ParameterError
from hedgerow.model.instance import Instance
from hedgerow.model.overlay import Overlay
from hedgerow.model.rng import RngStreams


class OverlayProtocol(ABC):
    """Base class: a protocol that builds an :class:`~hedgerow.model.Overlay`.

    Subclasses set :attr:`name`, :attr:`paper`, :attr:`claims_topic_connected`
    and implement :meth:`_build`; they may override :meth:`degree_bound`.
    """

    name: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    #: whether the protocol promises every topic-induced subgraph connected (without churn)
    claims_topic_connected: ClassVar[bool] = False
    #: whether the overlay it builds is directed (out-links chosen by each node)
    directed: ClassVar[bool] = False

    # ------------------------------------------------------------- params
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind is inspect.Parameter.KEYWORD_ONLY
        ]

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters and their current values."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params: Any) -> OverlayProtocol:
        """Set parameters by name; an unknown name raises :class:`ParameterError`."""
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise ParameterError(
                    f"{self.name}: unknown parameter {k!r}; allowed: {', '.join(names) or '(none)'}"
                )
            setattr(self, k, v)
        return self

    def clone(self) -> OverlayProtocol:
        """A fresh, unbuilt protocol with the same parameters."""
        return type(self)(**self.get_params())

    def check_params(self) -> None:
        """Check the parameters alone (no instance needed); raise :class:`ParameterError`.

        The base check only confirms every constructor parameter is stored.
        """
        missing = [k for k in self._param_names() if not hasattr(self, k)]
        if missing:
            raise ParameterError(f"{self.name}: parameters not stored: {', '.join(missing)}")

    def _validate(self, instance: Instance) -> None:
        """Check parameters against ``instance``; raise :class:`ParameterError`."""
        self.check_params()

    # ------------------------------------------------------------- running
    def build(self, instance: Instance, *, seed: int = 0, progress: bool = False) -> Overlay:
        """Build the overlay for ``instance``; sets ``overlay_`` and ``stats_``."""
        self._validate(instance)
        streams = RngStreams(seed).child(f"protocol:{self.name}")
        overlay, stats = self._build(instance, streams, progress=progress)
        self.overlay_ = overlay
        self.stats_ = stats
        return overlay

    @abstractmethod
    def _build(
        self, instance: Instance, streams: RngStreams, *, progress: bool
    ) -> tuple[Overlay, dict[str, Any]]:
        """Build and return ``(overlay, stats)``; ``stats`` holds plain values."""

    def degree_bound(self, instance: Instance) -> int | None:
        """Declared per-node maximum degree, or ``None`` if the protocol declares none."""
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def as_int(proto: str, name: str, value: Any, *, minimum: int = 0) -> int:
    """Coerce a parameter to ``int >= minimum`` or raise a clear error."""
    try:
        v = int(value)
        if v != float(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ParameterError(
            f"{proto}: parameter {name} must be a whole number, got {value!r}"
        ) from None
    if v < minimum:
        raise ParameterError(f"{proto}: parameter {name} must be >= {minimum}, got {v}")
    return v


def as_float(proto: str, name: str, value: Any, *, low: float, high: float) -> float:
    """Coerce a parameter to a float in ``[low, high]`` or raise a clear error."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{proto}: parameter {name} must be a number, got {value!r}") from None
    if not (low <= v <= high):
        raise ParameterError(f"{proto}: parameter {name} must be in [{low}, {high}], got {v}")
    return v


def as_bool(proto: str, name: str, value: Any) -> bool:
    """Coerce ``true/false/1/0/yes/no`` to a bool or raise a clear error."""
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off"):
        return False
    raise ParameterError(f"{proto}: parameter {name} must be true or false, got {value!r}")


def as_choice(proto: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Check a parameter is one of ``choices`` (case-insensitive) or raise a clear error."""
    v = str(value).strip().lower()
    if v not in choices:
        raise ParameterError(
            f"{proto}: parameter {name} must be one of {', '.join(choices)}, got {value!r}"
        )
    return v
