"""``hedgerow data``: the real data sets, listed, fetched, located and verified."""

from __future__ import annotations

import json
from typing import Any

import click

from hedgerow.cli._common import HedgerowGroup


@click.group("data", cls=HedgerowGroup)
def data_group() -> None:
    """The real data sets (latencies, social graphs, churn traces): list, fetch, path, verify.

    Files are fetched into the user's cache (or $HEDGEROW_DATA when set), from
    $HEDGEROW_DATA_MIRROR (a folder or URL laid out FOLDER/FILE) when set, else from each data
    set's source repository at its pinned commit, and checked against their SHA-256.
    """


@data_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per data set.")
def list_cmd(as_json: bool) -> None:
    """Every data set: files, size, where it is (or that it is not fetched), licence."""
    from rich.console import Console
    from rich.table import Table

    from hedgerow.data import DATASETS, verify

    status: dict[str, list[Any]] = {}
    for s in verify():
        status.setdefault(s.dataset, []).append(s)
    rows: list[dict[str, Any]] = []
    for name, ds in sorted(DATASETS.items()):
        st = status[name]
        states = {s.status for s in st}
        where = (
            str(st[0].path.parent) if states == {"ok"}
            else "not fetched" if states == {"missing"}
            else ", ".join(f"{s.file}: {s.status}" for s in st if s.status != "ok")
        )
        rows.append({
            "name": name, "folder": ds.folder, "title": ds.title, "used_for": ds.used_for,
            "files": len(ds.files), "bytes": ds.size, "where": where,
            "source": f"{ds.repository}@{ds.commit[:12]}", "licence": ds.licence,
            "citation": ds.citation,
        })
    if as_json:
        for r in rows:
            click.echo(json.dumps(r))
        return
    console = Console(width=None if Console().is_terminal else 160)
    table = Table(title="Data sets")
    for col in ("name", "what", "files", "MB", "where", "licence"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["title"], str(r["files"]), f"{r['bytes'] / 1e6:.2f}",
                      r["where"], r["licence"])
    console.print(table)


@data_group.command("fetch")
@click.argument("names", nargs=-1)
@click.option("--all", "fetch_all", is_flag=True, help="Every data set.")
@click.option("--force", is_flag=True, help="Fetch again even the files that are intact.")
def fetch_cmd(names: tuple[str, ...], fetch_all: bool, force: bool) -> None:
    """Fetch NAMES (or --all) and verify every file; prints one line per data set."""
    from hedgerow.data import DATASETS, dataset, fetch
    from hedgerow.errors import ParameterError

    if fetch_all == bool(names):
        raise ParameterError("give data set names or --all (hedgerow data list shows them)")
    todo = sorted(DATASETS) if fetch_all else [dataset(n).name for n in names]
    for name in todo:
        paths = fetch(name, force=force)
        size = sum(p.stat().st_size for p in paths)
        click.echo(f"{name}: {len(paths)} files, {size / 1e6:.2f} MB verified in {paths[0].parent}")


@data_group.command("path")
@click.argument("name")
def path_cmd(name: str) -> None:
    """The folder holding data set NAME (an error naming the fetch command if it is missing)."""
    from hedgerow.data import dataset_dir

    click.echo(str(dataset_dir(name)))


@data_group.command("verify")
@click.argument("names", nargs=-1)
def verify_cmd(names: tuple[str, ...]) -> None:
    """Check every file found against its SHA-256; a corrupt file is an error (exit 2)."""
    from hedgerow.data import dataset, verify
    from hedgerow.errors import DataError

    found = verify([dataset(n).name for n in names] or None)
    for s in found:
        click.echo(f"{s.dataset}/{s.file}: {s.status}" + (f" ({s.path})" if s.path else ""))
    bad = [s for s in found if s.status == "corrupt"]
    if bad:
        raise DataError(
            f"{len(bad)} corrupt file(s): "
            + ", ".join(f"{s.path}" for s in bad)
            + "; fetch again with: hedgerow data fetch --force "
            + " ".join(sorted({s.dataset for s in bad}))
        )
