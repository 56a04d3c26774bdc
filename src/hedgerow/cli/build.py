"""``hedgerow build``: build one overlay and print its metrics."""

from __future__ import annotations

import json
import time

import click

from hedgerow.cli._common import parse_params, stderr_console, workload_options


def build_record(
    protocol: str,
    *,
    nodes: int,
    topics: int,
    subs: str,
    popularity: str,
    seed: int,
    membership: float | None = None,
    params: dict | None = None,
    progress: bool = False,
    diameter: bool = True,
) -> dict:
    """Build ``protocol`` on a synthetic workload and return the flat result record.

    This is what ``hedgerow build --json`` prints.

    Examples
    --------
    >>> r = build_record("ringpt", nodes=100, topics=10, subs="3", popularity="rss", seed=1)
    >>> r["protocol"], r["partitioned_topics"], r["control_messages"]
    ('ringpt', 0, 0)
    """
    from hedgerow.metrics import overlay_summary
    from hedgerow.protocols import get_protocol
    from hedgerow.workloads import make_instance

    params = dict(params or {})
    if membership is not None:
        params["membership"] = membership
    proto = get_protocol(protocol, **params)
    proto.check_params()
    inst = make_instance(nodes=nodes, topics=topics, subs=subs, popularity=popularity, seed=seed)
    t0 = time.perf_counter()
    overlay = proto.build(inst, seed=seed, progress=progress)
    seconds = time.perf_counter() - t0
    metrics = overlay_summary(overlay, inst, diameter=diameter)
    stats = proto.stats_
    return {
        "protocol": protocol,
        "params": proto.get_params(),
        "nodes": inst.n_nodes,
        "topics": inst.n_topics,
        "subs": inst.meta["subs"],
        "popularity": popularity,
        "seed": seed,
        **metrics,
        "control_messages": int(stats.get("control_messages", 0)),
        "messages": stats.get("messages", {}),
        "quiescent": bool(stats.get("quiescent", True)),
        "build_seconds": round(seconds, 4),
    }


@click.command("build")
@click.argument("protocol")
@workload_options()
@click.option(
    "--membership", type=float, default=None, help="Interest-view fraction (partial membership)."
)
@click.option(
    "-p", "params", multiple=True, metavar="NAME=VALUE", help="Protocol parameter (repeatable)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--no-diameter", is_flag=True, help="Skip the topic-diameter computation.")
def build_cmd(
    protocol, nodes, topics, subs, popularity, seed, membership, params, as_json, no_diameter
):
    """Build PROTOCOL's overlay on a synthetic workload and print its metrics.

    PROTOCOL is one of spidercast (params kg, kr, margin, adaptive, heartbeat),
    similarity (similar, random), random (links) and ringpt.

    \b
    Example:
      hedgerow build spidercast --nodes 1000 --topics 100 --subs 10 --popularity rss --seed 1
    """
    from hedgerow.errors import ParameterError

    if seed < 0:
        raise ParameterError(f"--seed must be >= 0, got {seed}")
    record = build_record(
        protocol,
        nodes=nodes,
        topics=topics,
        subs=subs,
        popularity=popularity,
        seed=seed,
        membership=membership,
        params=parse_params(params),
        progress=not as_json or stderr_console.is_terminal,
        diameter=not no_diameter,
    )
    if as_json:
        click.echo(json.dumps(record, sort_keys=False))
        return
    _print_table(record)


def _print_table(record: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"{record['protocol']} on {record['nodes']} nodes, {record['topics']} topics"
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in record.items():
        if key in ("messages",):
            continue
        if isinstance(value, float):
            value = f"{value:.4g}"
        elif isinstance(value, list):
            value = "[" + ", ".join(f"{v:.4g}" for v in value) + "]"
        table.add_row(key, str(value))
    Console().print(table)
