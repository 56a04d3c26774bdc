"""The standalone cluster of the ``cluster`` tests (see :mod:`spark_cluster`)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory):
    """A Spark standalone master and two one-core workers on 127.0.0.1, stopped at the end."""
    from spark_cluster import StandaloneCluster

    cluster = StandaloneCluster(tmp_path_factory.mktemp("standalone"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def pytest_collection_modifyitems(config, items):
    """Cluster tests run when asked for (``-m cluster``), not in the default suite.

    They start five JVMs (master, two workers, their executors) besides the
    drivers: on the 2-core CI machine that is minutes, more than the default
    suite's budget (see docs/pipeline.md, "Tested on a real cluster").
    """
    if "cluster" in (config.getoption("markexpr") or ""):
        return
    keep, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker("cluster") else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
