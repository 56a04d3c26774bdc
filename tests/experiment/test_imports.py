"""Package boundaries: the experiment layer runs without Spark, the pipeline without the CLI."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hedgerow

SRC = Path(hedgerow.__file__).resolve().parents[1]
PACKAGE = SRC / "hedgerow"


def _modules_after(code: str) -> set[str]:
    """``sys.modules`` of a fresh interpreter (this checkout first on the path) after ``code``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _is_under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_runner_imports_neither_spark_nor_the_pipeline():
    loaded = _modules_after("import hedgerow.experiment.run")
    assert "hedgerow.experiment.run" in loaded
    for forbidden in ("pyspark", "hedgerow.pipeline", "hedgerow.cli"):
        assert not any(_is_under(m, forbidden) for m in loaded), forbidden


def test_the_package_import_is_light():
    loaded = _modules_after("import hedgerow.experiment")
    for heavy in ("numba", "pyspark", "hedgerow.protocols", "hedgerow.scenarios"):
        assert not any(_is_under(m, heavy) for m in loaded), heavy


def _imported_names(path: Path) -> set[str]:
    """Every module a file imports, at top level or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("experiment", ("pyspark", "hedgerow.pipeline", "hedgerow.cli")),
        ("pipeline", ("hedgerow.cli",)),
    ],
)
def test_no_module_imports_across_the_boundary(package, forbidden):
    files = sorted((PACKAGE / package).rglob("*.py"))
    assert files
    for f in files:
        for name in _imported_names(f):
            bad = [p for p in forbidden if _is_under(name, p)]
            assert not bad, f"{f.relative_to(SRC)} imports {name}"
