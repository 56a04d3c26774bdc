"""Shared fixtures: small instances, the one Spark session of the test run, and benchmark or
anchor harnesses loaded from their paths."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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


def _load_script(path: Path) -> ModuleType:
    """The script at ``path`` as a module named after its file, registered in ``sys.modules``
    (a dataclass of the script looks its module up there)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def load_script():
    """:func:`_load_script`, for the benchmark tests' own fixtures (one ``conftest.py`` only:
    the suite collects conftest files as doctest modules, and two of one name collide)."""
    return _load_script
