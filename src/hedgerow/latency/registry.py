"""Latency models by name: ``unit-square``, ``cities``, ``cities-placed``, ``perigee``,
``constant``, ``regions``, ``file:PATH``."""

from __future__ import annotations

from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.latency.model import LatencyModel, constant, unit_square
from hedgerow.latency.real import (
    _maybe_subset,
    cities,
    cities_placed,
    from_matrix_file,
    perigee_matrix,
)
from hedgerow.latency.regions import regions

#: Names accepted by :func:`latency_model` (plus ``file:PATH``).
LATENCY_MODELS = ("unit-square", "cities", "cities-placed", "perigee", "constant", "regions")

_ALLOWED_KW = {
    "unit-square": {"scale_ms", "grid", "ceil"},
    "cities": {"one_way", "complete_only"},
    "cities-placed": {"local_ms"},
    "perigee": set(),
    "constant": {"ms"},
    "regions": {"spread", "floor_ms", "tick_ms"},
    "file": set(),
}


def latency_model(
    name: str, n_nodes: int | None, rng: np.random.Generator | None = None, **kw: Any
) -> LatencyModel:
    """Build a latency model by name.

    Parameters
    ----------
    name : str
        ``"unit-square"`` (keywords ``scale_ms``, ``grid``, ``ceil``), ``"cities"``
        (``one_way``, ``complete_only``), ``"cities-placed"`` (``local_ms``; any
        number of nodes on the cities),
        ``"perigee"``, ``"constant"`` (``ms``, required), ``"regions"`` (``spread``,
        ``floor_ms``, ``tick_ms``; Lean Gossip's three regions,
        :func:`hedgerow.latency.regions.regions`) or ``"file:PATH"``.
    n_nodes : int or None
        Number of nodes.  Real data sets have a fixed size (246 cities,
        1000 Perigee nodes, the file's ``N``): ``None`` or that size takes
        every node, fewer draws a uniform subset with ``rng``.
    rng : numpy.random.Generator, optional
        Random positions / subset draws.
    **kw
        Model keywords (see ``name``).

    Examples
    --------
    >>> from hedgerow.model import RngStreams
    >>> latency_model("unit-square", 10, RngStreams(0).stream("latency")).n_nodes
    10
    >>> float(latency_model("constant", 4, ms=30).delay(0, 3))
    30.0
    >>> try:
    ...     latency_model("moon", 4)
    ... except ParameterError as err:
    ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
    unknown latency model 'moon'; allowed: unit-square, cities, cities-placed, perigee,
    constant, regions, file:PATH
    """
    if not isinstance(name, str):
        raise ParameterError(f"latency model name must be a string, got {name!r}")
    key = "file" if name.startswith("file:") else name
    if key not in _ALLOWED_KW:
        allowed = ", ".join((*LATENCY_MODELS, "file:PATH"))
        raise ParameterError(f"unknown latency model {name!r}; allowed: {allowed}")
    extra = set(kw) - _ALLOWED_KW[key]
    if extra:
        ok = ", ".join(sorted(_ALLOWED_KW[key])) or "none"
        raise ParameterError(
            f"latency model {name!r} does not take {', '.join(sorted(extra))}; it takes: {ok}"
        )
    if key == "unit-square":
        if n_nodes is None:
            raise ParameterError("latency model 'unit-square' needs n_nodes")
        return unit_square(int(n_nodes), rng, **kw)  # type: ignore[arg-type]
    if key == "constant":
        if n_nodes is None:
            raise ParameterError("latency model 'constant' needs n_nodes")
        if "ms" not in kw:
            raise ParameterError("latency model 'constant' needs ms (the delay in milliseconds)")
        return constant(int(n_nodes), kw["ms"])
    if key == "cities":
        return cities(n_nodes, rng, **kw)
    if key == "cities-placed":
        if n_nodes is None:
            raise ParameterError("latency model 'cities-placed' needs n_nodes")
        return cities_placed(int(n_nodes), rng, **kw)
    if key == "perigee":
        return perigee_matrix(n_nodes, rng)
    if key == "regions":
        if n_nodes is None:
            raise ParameterError("latency model 'regions' needs n_nodes")
        return regions(int(n_nodes), rng, **kw)
    path = name[len("file:") :]
    if not path:
        raise ParameterError("latency model 'file:PATH' needs a path after 'file:'")
    return _maybe_subset(from_matrix_file(path), n_nodes, rng)
