"""Finding the shipped data sets: environment, beside the checkout, beside its origin."""

from pathlib import Path

import pytest

import hedgerow.data as data
from hedgerow.errors import DataError


def _clone_of(tmp_path: Path, url: str) -> Path:
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True, exist_ok=True)
    (clone / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "origin"]\n'
        f"\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    )
    return clone


def test_a_clone_of_a_local_checkout_finds_its_origin(tmp_path):
    origin = tmp_path / "work" / "main"
    origin.mkdir(parents=True)
    assert data._local_origin(_clone_of(tmp_path, str(origin))) == origin
    assert data._local_origin(_clone_of(tmp_path, f"file://{origin}")) == origin


def test_remote_or_missing_origins_are_ignored(tmp_path):
    assert data._local_origin(_clone_of(tmp_path, "https://example.org/h.git")) is None
    assert data._local_origin(_clone_of(tmp_path, str(tmp_path / "gone"))) is None
    assert data._local_origin(tmp_path / "no-git") is None


def test_missing_data_folder_names_every_place_looked(monkeypatch, tmp_path):
    monkeypatch.setattr(data, "_candidates", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(DataError, match=r"set HEDGEROW_DATA.*a, .*b"):
        data.data_dir()
