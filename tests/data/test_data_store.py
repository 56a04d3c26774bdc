"""Finding and fetching the real data sets: the registry against the files, mirrors, hashes."""

from __future__ import annotations

import functools
import gzip
import http.server
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from hedgerow.cli import cli
from hedgerow.data import DATASETS, data_path, dataset, fetch, store, verify
from hedgerow.errors import DataError

SHARED = store._checkout_data()
# like every test marked ``data``, these read the project's data folder beside the checkout
pytestmark = pytest.mark.data


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache, no HEDGEROW_DATA, no mirror, no automatic fetch."""
    for var in (store.ENV_DATA, store.ENV_MIRROR, store.ENV_AUTO_FETCH):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(store.ENV_CACHE, str(tmp_path / "cache"))
    # a development checkout's shared/data would otherwise be found after the cache
    monkeypatch.setattr(store, "_checkout_data", lambda: tmp_path / "no-checkout-data")
    return tmp_path / "cache" / "data"


@pytest.fixture
def mirror(tmp_path) -> Path:
    """A writable copy of the shared data folder."""
    out = tmp_path / "mirror"
    shutil.copytree(SHARED, out)
    return out


@pytest.fixture
def serve():
    """Serve a folder over HTTP on 127.0.0.1; yields a function folder -> base URL."""
    servers = []

    def start(folder: Path) -> str:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
        handler.log_message = lambda *a, **k: None
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_the_registry_describes_every_shared_file(monkeypatch):
    monkeypatch.setenv(store.ENV_DATA, str(SHARED))
    found = verify()
    assert [s.status for s in found] == ["ok"] * sum(len(d.files) for d in DATASETS.values())
    listed = {f"{d.folder}/{f.name}" for d in DATASETS.values() for f in d.files}
    on_disk = {str(p.relative_to(SHARED)) for p in SHARED.glob("*/*") if p.is_file()}
    assert listed == on_disk


def test_fetch_all_from_a_folder_mirror_then_read_from_the_cache(cache, monkeypatch):
    monkeypatch.setenv(store.ENV_MIRROR, str(SHARED))
    res = CliRunner().invoke(cli, ["data", "fetch", "--all"])
    assert res.exit_code == 0, res.output
    assert res.output.count("verified") == len(DATASETS)
    assert {s.status for s in verify()} == {"ok"}
    p = data_path("wondernetwork-pings-2020-07-19", "servers-2020-07-19.csv")
    assert p.parent.parent == cache
    assert CliRunner().invoke(cli, ["data", "path", "cities"]).output.strip() == str(p.parent)


def test_a_corrupt_mirror_file_is_one_line_and_nothing_is_cached(cache, mirror, monkeypatch):
    edges = mirror / "facebook100-reed98" / "socfb-Reed98.edges"
    edges.write_bytes(edges.read_bytes().replace(b"1", b"2", 1))
    monkeypatch.setenv(store.ENV_MIRROR, str(mirror))
    res = CliRunner().invoke(cli, ["data", "fetch", "reed98"])
    assert res.exit_code == 2
    line = res.output.strip()
    assert line.count("\n") == 0 and line.startswith("error: reed98: socfb-Reed98.edges")
    assert "does not match its SHA-256" in line and "Traceback" not in res.output
    assert not (cache / "facebook100-reed98").exists()


def test_a_file_missing_from_the_mirror_is_one_line_and_nothing_is_cached(
    cache, mirror, monkeypatch
):
    (mirror / "snap-ego-facebook" / "facebook_combined.txt.gz").unlink()
    monkeypatch.setenv(store.ENV_MIRROR, str(mirror))
    with pytest.raises(DataError, match=r"has no snap-ego-facebook/facebook_combined"):
        fetch("facebook")
    assert not (cache / "snap-ego-facebook").exists()


def test_a_url_mirror(cache, serve, monkeypatch):
    monkeypatch.setenv(store.ENV_MIRROR, serve(SHARED))
    paths = fetch("google-churn")
    assert paths[0].read_bytes() == (SHARED / paths[0].parent.name / paths[0].name).read_bytes()


def test_plain_sources_are_compressed_here_and_verified_by_content(cache, tmp_path, serve,
                                                                   monkeypatch):
    ds = dataset("perigee")
    f = ds.files[0]
    plain = tmp_path / "source" / f.source_path
    plain.parent.mkdir(parents=True)
    with gzip.open(SHARED / ds.folder / f.name, "rb") as fh:
        plain.write_bytes(fh.read())
    base = serve(tmp_path / "source")
    monkeypatch.setattr(type(ds), "url", lambda self, g: f"{base}/{g.source_path}")
    (path,) = fetch("perigee")
    assert store.file_ok(path, f)
    with gzip.open(path, "rb") as a, gzip.open(SHARED / ds.folder / f.name, "rb") as b:
        assert a.read() == b.read()
    assert not list(path.parent.glob("*.part")) and not list(path.parent.glob("*.raw"))


def test_an_unreachable_source_is_one_line(cache, monkeypatch):
    monkeypatch.setattr(type(dataset("reed98")), "url", lambda self, g: "http://127.0.0.1:9/x")
    with pytest.raises(DataError, match=r"could not download http://127\.0\.0\.1:9/x"):
        fetch("reed98")
    assert not (cache / "facebook100-reed98").exists()


def test_a_missing_data_set_names_the_fetch_command(cache):
    with pytest.raises(DataError, match=r"fetch it with: hedgerow data fetch cities$"):
        data_path("wondernetwork-pings-2020-07-19", "pings-2020-07-19-2020-07-20-grouped.csv")


def test_a_scenario_without_its_data_fails_in_one_line_naming_the_fetch(cache):
    res = CliRunner().invoke(
        cli, ["compare", "--scenario", "cities", "--protocols", "spidercast,topiary",
              "--seed", "1"]
    )
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: data file missing")
    assert lines[0].endswith("fetch it with: hedgerow data fetch cities")


def test_automatic_fetch_when_allowed(cache, monkeypatch):
    monkeypatch.setenv(store.ENV_MIRROR, str(SHARED))
    monkeypatch.setenv(store.ENV_AUTO_FETCH, "1")
    p = data_path("snap-ego-facebook", "facebook_combined.txt.gz")
    assert p == cache / "snap-ego-facebook" / "facebook_combined.txt.gz"


def test_hedgerow_data_is_the_only_place_and_must_exist(tmp_path, monkeypatch):
    monkeypatch.setenv(store.ENV_DATA, str(tmp_path / "gone"))
    with pytest.raises(DataError, match=r"HEDGEROW_DATA=.*gone is not a folder"):
        data_path("snap-ego-facebook", "facebook_combined.txt.gz")
    monkeypatch.setenv(store.ENV_DATA, str(tmp_path))
    assert store.search_dirs() == [tmp_path]


def test_verify_reports_a_corrupt_file_as_an_error(tmp_path, monkeypatch):
    shutil.copytree(SHARED / "facebook100-reed98", tmp_path / "facebook100-reed98")
    (tmp_path / "facebook100-reed98" / "readme.html").write_text("changed")
    monkeypatch.setenv(store.ENV_DATA, str(tmp_path))
    res = CliRunner().invoke(cli, ["data", "verify", "reed98"])
    assert res.exit_code == 2
    assert "reed98/readme.html: corrupt" in res.output
    assert "hedgerow data fetch --force reed98" in res.output


def test_fetch_needs_names_or_all():
    res = CliRunner().invoke(cli, ["data", "fetch"])
    assert res.exit_code == 2 and "give data set names or --all" in res.output
    res = CliRunner().invoke(cli, ["data", "fetch", "nosuch"])
    assert res.exit_code == 2 and "unknown data set 'nosuch'" in res.output
