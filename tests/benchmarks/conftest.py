"""Fixtures of the benchmark tests: a benchmark or anchor harness loaded from its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


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
    """:func:`_load_script`, for the test modules' own fixtures."""
    return _load_script
