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
