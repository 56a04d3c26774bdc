"""Topic popularity distributions ``p_i`` (SpiderCast section 3.1).

Topic 0 is the most popular.  The named distributions are:

``rss``
    Zipf with exponent 0.5, ``p_i ∝ 1 / i^0.5`` (the RSS feed popularity study
    the paper cites); the paper's default.
``zipf1``
    Zipf with exponent 1.
``zipf2``
    Zipf with exponent 2: the *heavily skewed* workload of section 3.3.
``nyse``
    Exponential, ``p_i ∝ exp(-λ i)`` with ``λ`` solved so that the 10% most
    popular topics together have probability 0.55 (the NYSE stock popularity).
``uniform``
    ``p_i = 1 / T``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq

from hedgerow.errors import ParameterError


def zipf(n_topics: int, alpha: float) -> np.ndarray:
    """``p_i ∝ 1 / (i+1)^alpha`` for ``i = 0..n_topics-1``.

    Examples
    --------
    >>> p = zipf(4, 1.0)
    >>> [round(float(x), 3) for x in p]
    [0.48, 0.24, 0.16, 0.12]
    """
    ranks = np.arange(1, n_topics + 1, dtype=np.float64)
    w = ranks ** (-float(alpha))
    return w / w.sum()


def nyse(n_topics: int, top_fraction: float = 0.10, top_mass: float = 0.55) -> np.ndarray:
    """Exponential popularity whose top ``top_fraction`` of topics carry ``top_mass``.

    Examples
    --------
    >>> p = nyse(100)
    >>> round(float(p[:10].sum()), 3)
    0.55
    """
    k = max(1, round(top_fraction * n_topics))
    if k >= n_topics:
        return np.full(n_topics, 1.0 / n_topics)
    uniform_mass = k / n_topics
    if top_mass <= uniform_mass:
        return np.full(n_topics, 1.0 / n_topics)

    def mass(lam: float) -> float:
        w = np.exp(-lam * np.arange(n_topics))
        return w[:k].sum() / w.sum() - top_mass

    lam = brentq(mass, 1e-12, 50.0)
    w = np.exp(-lam * np.arange(n_topics))
    return w / w.sum()


def uniform(n_topics: int) -> np.ndarray:
    """Uniform popularity."""
    return np.full(n_topics, 1.0 / n_topics)


POPULARITY: dict[str, Callable[[int], np.ndarray]] = {
    "rss": lambda t: zipf(t, 0.5),
    "zipf1": lambda t: zipf(t, 1.0),
    "zipf2": lambda t: zipf(t, 2.0),
    "nyse": nyse,
    "uniform": uniform,
}


def popularity(name: str, n_topics: int) -> np.ndarray:
    """The named popularity vector over ``n_topics`` topics (sums to 1).

    ``name`` is one of :data:`POPULARITY` or ``zipf:ALPHA`` for any exponent.

    Examples
    --------
    >>> round(float(popularity("zipf:0.5", 100)[0] / popularity("rss", 100)[0]), 6)
    1.0
    """
    if n_topics < 1:
        raise ParameterError(f"topics must be at least 1, got {n_topics}", key="topics")
    if isinstance(name, str) and name in POPULARITY:
        return POPULARITY[name](n_topics)
    if isinstance(name, str) and name.startswith("zipf:"):
        try:
            alpha = float(name.split(":", 1)[1])
        except ValueError:
            alpha = -1.0
        if not (math.isfinite(alpha) and alpha >= 0):  # nan and inf are not exponents
            raise ParameterError(
                f"popularity {name!r}: zipf exponent must be a finite number >= 0",
                key="popularity",
            )
        return zipf(n_topics, alpha)
    allowed = ", ".join([*POPULARITY, "zipf:ALPHA"])
    raise ParameterError(f"unknown popularity {name!r}; allowed: {allowed}", key="popularity")
