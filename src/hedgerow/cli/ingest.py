"""``hedgerow ingest``: the Spark jobs that turn real data sets into Parquet tables.

Each subcommand runs one job of :mod:`hedgerow.pipeline.ingest` on an embedded
``local[*]`` session, or on a cluster with ``--master URL`` (or under
``spark-submit``), and writes its tables under ``--out DIR`` atomically.  Bad
input prints one ``error: FILE, line N: ...`` line and exits with status 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hedgerow.cli._common import HedgerowGroup

_master = click.option(
    "--master",
    default=None,
    metavar="URL",
    help="Spark master (local[*], spark://host:7077, yarn ...); default: embedded local[*].",
)
_out = click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Output folder (created)."
)
_verbose = click.option(
    "--verbose",
    is_flag=True,
    expose_value=False,
    callback=lambda ctx, _param, value: ctx.meta.__setitem__("hedgerow.verbose", value),
    help="Show Spark's and the JVM's output (default: a log beside --out, in _logs/).",
)
_force = click.option("--force", is_flag=True, help="Replace a non-empty --out folder.")
_seed = click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0))
_infile: dict[str, Any] = {"type": click.Path(dir_okay=False), "default": None}


def _report(meta: dict, out: str) -> None:
    click.echo(f"wrote {out}")
    click.echo(json.dumps(meta.get("counts", {}), sort_keys=True))


def _run(job: str, fn: Callable[..., dict], out: str, master: str | None,
         formats: dict[str, Any] | None = None, **kwargs) -> None:
    """Run ingest function ``fn(spark, out, **kwargs)`` in a session for ``job``; report.

    The output folder, the input files (their first lines against the job's declared
    format, ``formats``: option -> ``LineFormat`` or a checking function), Java and the
    master are checked first: a typo or a file in the wrong format costs a second, not a
    JVM start.
    """
    from hedgerow.pipeline.ingest._common import LineFormat, check_head, check_out, require_input
    from hedgerow.pipeline.session import check_master, job_session

    check_out(out, bool(kwargs.get("force")))
    for key in ("servers", "pings", "matrix", "edges", "trace"):
        if kwargs.get(key) is not None:  # an empty path is an error, not the default
            require_input(kwargs[key], f"--{key}")
            fmt = (formats or {}).get(key)
            if isinstance(fmt, LineFormat):
                check_head(kwargs[key], fmt)
            elif fmt is not None:
                fmt(kwargs[key])
    check_master(master)
    log_file = None
    if not click.get_current_context().meta.get("hedgerow.verbose"):
        from hedgerow.cli._common import log_path

        log_file = log_path(Path(out).resolve().parent, f"ingest-{job}")
    with job_session(master, app_name=f"hedgerow-ingest-{job}", log_file=log_file) as spark:
        meta = fn(spark, out, **kwargs)
    _report(meta, out)
    if log_file is not None and log_file.exists():
        click.echo(f"Spark log: {log_file}", err=True)


@click.group("ingest", cls=HedgerowGroup)
def ingest() -> None:
    """Ingest real data sets (latency, social graphs, churn) into Parquet with Spark."""


@ingest.command("cities")
@click.option("--servers", help="WonderNetwork servers CSV (default: shipped).", **_infile)
@click.option("--pings", help="Grouped pings CSV (default: shipped).", **_infile)
@_out
@_force
@_master
@_verbose
def cities_cmd(servers, pings, out, force, master) -> None:
    """Complete symmetric 246-city one-way latency table (WonderNetwork 2020-07-19)."""
    from hedgerow.pipeline.ingest.cities import PING_LINES, SERVER_LINES, ingest_cities

    _run("cities", ingest_cities, out, master, {"servers": SERVER_LINES, "pings": PING_LINES},
         servers=servers, pings=pings, force=force)


@ingest.command("perigee")
@click.option("--matrix", help="Perigee matrix file (default: shipped weight1).", **_infile)
@_out
@_force
@_master
@_verbose
def perigee_cmd(matrix, out, force, master) -> None:
    """The Perigee 1000x1000 one-way latency matrix as a long table."""
    from hedgerow.pipeline.ingest.perigee import check_matrix_head, ingest_perigee

    _run("perigee", ingest_perigee, out, master, {"matrix": check_matrix_head}, matrix=matrix,
         force=force)


@ingest.command("social")
@click.option("--edges", help="Edge list 'u v' (default: SNAP ego-Facebook).", **_infile)
@click.option(
    "--size", required=True, help="Users to sample (1000 for FB 1K) or 'all' (largest sample)."
)
@click.option("--seeds", default=3, show_default=True, type=click.IntRange(min=1))
@_seed
@click.option("--directed", is_flag=True, help="'u v' means u follows v (default: friendship).")
@_out
@_force
@_master
@_verbose
def social_cmd(edges, size, seeds, seed, directed, out, force, master) -> None:
    """BFS (snowball) sample of a social graph as a subscription instance."""
    from hedgerow.pipeline.ingest.social import EDGE_LINES, _parse_size, ingest_social

    _parse_size(size)  # a bad --size: one line, before the JVM

    _run(
        "social", ingest_social, out, master, {"edges": EDGE_LINES}, size=size, edges=edges,
        seeds=seeds, seed=seed,
        directed=directed, force=force,
    )  # fmt: skip


@ingest.command("follower-graph")
@click.option("--users", required=True, type=click.IntRange(min=2), help="Number of users.")
@_seed
@click.option("--exponent", default=1.65, show_default=True, type=float)
@click.option("--mean", default=88.0, show_default=True, type=float)
@click.option("--max-frac", default=0.15, show_default=True, type=float)
@_out
@_force
@_master
@_verbose
def follower_graph_cmd(users, seed, exponent, mean, max_frac, out, force, master) -> None:
    """Synthetic power-law follower graph (Vitis Twitter statistics), generated in Spark."""
    from hedgerow.pipeline.ingest.follower_graph import degree_bounds, ingest_follower_graph
    from hedgerow.workloads.memory import check_sizes

    degree_bounds(users, exponent, mean, max_frac)  # bad values: one line, before the JVM
    check_sizes(f"a follower graph of {users:,} users with {mean:g} followees on average",
                users=users, mean_degree=mean)
    _run(
        "follower-graph", ingest_follower_graph, out, master, users=users, seed=seed,
        exponent=exponent, mean=mean, max_frac=max_frac, force=force,
    )  # fmt: skip


@ingest.command("churn")
@click.option(
    "--source", type=click.Choice(["google", "smartphone"]), default="google", show_default=True
)
@click.option("--trace", help="Trace file (default: the shipped trace of --source).", **_infile)
@click.option(
    "--nodes",
    default="1000",
    show_default=True,
    help="Machines (google) or trace lines (smartphone) to sample, or 'all'.",
)
@_seed
@click.option(
    "--population", type=click.Choice(["start", "all"]), default="start", show_default=True,
    help="google: sample among machines present at trace start, or among all.",
)  # fmt: skip
@_out
@_force
@_master
@_verbose
def churn_cmd(source, trace, nodes, seed, population, out, force, master) -> None:
    """Join/leave event sequence from the Google 2011 or the smartphone churn trace."""
    from hedgerow.errors import ParameterError
    from hedgerow.pipeline.ingest.churn import TRACE_LINES, ingest_churn

    if nodes.strip().lower() == "all":
        k = None
    elif nodes.strip().isdigit():
        k = int(nodes)
    else:
        raise ParameterError(f"--nodes must be a positive integer or 'all', got {nodes!r}")
    if k is not None:
        from hedgerow.workloads.memory import check_sizes

        check_sizes(f"a churn sample of {k:,} nodes", nodes=k, churn=True)
    _run(
        "churn", ingest_churn, out, master, {"trace": TRACE_LINES[source]}, source=source,
        trace=trace, nodes=k, seed=seed,
        population=population, force=force,
    )  # fmt: skip


@ingest.command("ccdf")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True))
@click.option("--label", "labels", multiple=True, help="One label per folder (default: names).")
@_out
def ccdf_cmd(folders, labels, out) -> None:
    """Follower/followee CCDFs (CSV + PNG) of social / follower-graph outputs (no Spark)."""
    import pandas as pd

    from hedgerow.errors import ParameterError
    from hedgerow.userfiles import check_writable
    from hedgerow.workloads.social import degree_ccdf, load_instance, plot_ccdfs

    if labels and len(labels) != len(folders):
        raise ParameterError(f"give one --label per folder ({len(folders)}), got {len(labels)}")
    check_writable(out, folder=True)
    names = list(labels) if labels else [Path(f).name for f in folders]
    curves = {name: degree_ccdf(load_instance(f)) for name, f in zip(names, folders, strict=True)}
    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    table = pd.concat([df.assign(instance=name) for name, df in curves.items()], ignore_index=True)
    table = table[["instance", "kind", "degree", "users", "ccdf"]]
    table.to_csv(dest / "ccdf.csv", index=False)
    plot_ccdfs(curves, dest / "ccdf.png")
    click.echo(f"wrote {dest / 'ccdf.csv'} and {dest / 'ccdf.png'}")
