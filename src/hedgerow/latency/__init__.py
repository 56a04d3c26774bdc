"""Latency models (one-way link delays in ms) and per-node processing delays.

See ``docs/latency.md`` for every model, its units and the choices made.
"""

from hedgerow.latency.model import (
    UNIT_SQUARE_SCALE_MS,
    LatencyModel,
    constant,
    from_matrix,
    unit_square,
)
from hedgerow.latency.processing import DEFAULT_PROC_MS, processing_delays
from hedgerow.latency.real import (
    cities,
    cities_placed,
    fill_missing_one_hop,
    from_matrix_file,
    perigee_matrix,
    read_matrix_file,
    symmetrise_pings,
)
from hedgerow.latency.registry import LATENCY_MODELS, latency_model

__all__ = [
    "DEFAULT_PROC_MS",
    "LATENCY_MODELS",
    "UNIT_SQUARE_SCALE_MS",
    "LatencyModel",
    "cities",
    "cities_placed",
    "constant",
    "fill_missing_one_hop",
    "from_matrix",
    "from_matrix_file",
    "latency_model",
    "perigee_matrix",
    "processing_delays",
    "read_matrix_file",
    "symmetrise_pings",
    "unit_square",
]
