"""Shared fixtures: small instances and the one Spark session of the test run."""

from __future__ import annotations

import pytest

from hedgerow.workloads import make_instance


@pytest.fixture(scope="session")
def small_instance():
    """200 nodes, 20 topics, 4 subscriptions each, RSS popularity."""
    return make_instance(nodes=200, topics=20, subs=4, popularity="rss", seed=11)


@pytest.fixture(scope="session")
def spark():
    """One embedded Spark session shared by every Spark test."""
    from hedgerow.pipeline.session import get_spark

    session = get_spark("local[2]", app_name="hedgerow-tests", parallelism=2)
    yield session
    session.stop()
