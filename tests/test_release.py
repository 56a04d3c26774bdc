"""One version source, named first by the changelog."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import hedgerow

ROOT = Path(__file__).resolve().parents[1]


def test_the_changelog_names_the_version_first():
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", text, flags=re.M)
    assert versions, "no '## [X.Y.Z] - YYYY-MM-DD' entry in CHANGELOG.md"
    assert versions[0][0] == hedgerow.__version__
    # newest first, each version once
    keys = [tuple(map(int, v.split("."))) for v, _ in versions]
    assert keys == sorted(set(keys), reverse=True)


def test_pyproject_reads_the_version_from_the_package():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hedgerow.__version__"}


def test_the_package_is_typed():
    assert (Path(hedgerow.__file__).parent / "py.typed").is_file()
