"""The forms of Lean Gossip's world settings: ``bimodal_churn`` and ``peer_table``.

Read by :mod:`hedgerow.scenarios.lean_gossip`, which runs that world, and
checked here when a scenario is resolved (``docs/gossipsub.md``, "Lean
Gossip's world").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hedgerow.errors import ParameterError

__all__ = ["TICK_MS", "BimodalChurn", "parse_bimodal_churn", "parse_peer_table"]

#: Lean Gossip's tick (ms)
TICK_MS = 100.0


@dataclass(frozen=True)
class BimodalChurn:
    """Bimodal churn: ``churny_fraction`` of the peers leave with probability ``leave`` and
    rejoin with probability ``rejoin`` per tick of ``tick_ms``; the others never leave.

    Examples
    --------
    >>> c = BimodalChurn(0.2, 0.01, 0.05)
    >>> round(c.online_share, 4), round(c.mean_offline_s, 1), round(c.mean_online_s, 1)
    (0.9667, 2.0, 10.0)
    """

    churny_fraction: float
    leave: float = 0.01
    rejoin: float = 0.05
    tick_ms: float = TICK_MS

    @property
    def online_share(self) -> float:
        """The long-run share of peers online: ``1 - F * leave / (leave + rejoin)``."""
        if self.churny_fraction == 0 or self.leave == 0:
            return 1.0
        return 1.0 - self.churny_fraction * self.leave / (self.leave + self.rejoin)

    @property
    def mean_offline_s(self) -> float:
        """Mean offline session of a churny peer (s)."""
        return self.tick_ms / 1000.0 / self.rejoin if self.rejoin > 0 else math.inf

    @property
    def mean_online_s(self) -> float:
        """Mean online session of a churny peer (s)."""
        return self.tick_ms / 1000.0 / self.leave if self.leave > 0 else math.inf


def parse_bimodal_churn(text: str, key: str = "bimodal_churn") -> BimodalChurn:
    """``F:LEAVE:REJOIN[:TICK_MS]`` as a :class:`BimodalChurn` (a bad value names ``key``).

    Examples
    --------
    >>> parse_bimodal_churn("0.2:0.01:0.05")
    BimodalChurn(churny_fraction=0.2, leave=0.01, rejoin=0.05, tick_ms=100.0)
    >>> parse_bimodal_churn("0.2:2:0.05")
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: bimodal_churn: LEAVE must be a probability in [0, 1], got 2.0
    """
    parts = str(text).split(":")
    if len(parts) not in (3, 4):
        raise ParameterError(f"{key}: expected F:LEAVE:REJOIN[:TICK_MS], got {text!r}", key=key)
    try:
        vals = [float(x) for x in parts]
    except ValueError:
        raise ParameterError(f"{key}: expected numbers in F:LEAVE:REJOIN[:TICK_MS], got "
                             f"{text!r}", key=key) from None
    for name, v in zip(("F", "LEAVE", "REJOIN"), vals[:3], strict=False):
        if not 0.0 <= v <= 1.0:
            raise ParameterError(f"{key}: {name} must be a probability in [0, 1], got {v}",
                                 key=key)
    tick = vals[3] if len(vals) == 4 else TICK_MS
    if not tick > 0:
        raise ParameterError(f"{key}: TICK_MS must be positive, got {tick}", key=key)
    return BimodalChurn(vals[0], vals[1], vals[2], tick)


def parse_peer_table(text: str, key: str = "peer_table") -> tuple[int, int]:
    """``LO:HI`` as ``(lo, hi)``, ``1 <= lo <= hi`` (a bad value names ``key``).

    Examples
    --------
    >>> parse_peer_table("40:80")
    (40, 80)
    >>> parse_peer_table("80:40")
    Traceback (most recent call last):
    ...
    hedgerow.errors.ParameterError: peer_table: expected LO:HI with 1 <= LO <= HI, got '80:40'
    """
    lo, sep, hi = str(text).partition(":")
    if not (sep and lo.isdigit() and hi.isdigit() and 1 <= int(lo) <= int(hi)):
        raise ParameterError(f"{key}: expected LO:HI with 1 <= LO <= HI, got {text!r}", key=key)
    return int(lo), int(hi)
