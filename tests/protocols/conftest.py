"""Small networks shared by the protocol tests (the Topiary ones run epochs on them).

Each fixture is ``(instance, latency, processing delays)``, the parts
:func:`hedgerow.scenarios.custom_world` takes.
"""

from __future__ import annotations

import numpy as np
import pytest

from hedgerow.latency import processing_delays, unit_square
from hedgerow.model import RngStreams
from hedgerow.workloads.interest import interest_instance


@pytest.fixture(scope="session")
def small_net():
    """250 nodes in the unit square, 30 topics at 20% interest, constant 20 ms processing."""
    streams = RngStreams(5)
    inst = interest_instance(250, 30, 0.2, streams.stream("workload"))
    lat = unit_square(250, streams.stream("latency"))
    proc = processing_delays(250)
    return inst, lat, proc


@pytest.fixture(scope="session")
def tiny_net():
    """60 nodes, 8 topics at 30% interest."""
    streams = RngStreams(9)
    inst = interest_instance(60, 8, 0.3, streams.stream("workload"))
    lat = unit_square(60, streams.stream("latency"))
    return inst, lat, np.full(60, 20.0)
