"""``hedgerow churn``: run a protocol under churn with the driver of its capability."""

from __future__ import annotations

import json
import math

import click

from hedgerow.cli._common import (
    WORKLOAD_DEFAULTS,
    ProtocolCommand,
    parse_params,
    setting_options,
    stderr_console,
    workload_options,
)


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@click.command("churn", cls=ProtocolCommand, capability=("maintained", "cycle"))
@click.argument("protocol")
@workload_options(topics_required=False, nodes_required=False)
@click.option(
    "--scenario",
    default=None,
    metavar="NAME",
    help="Named churn scenario; it brings its own workload and churn. Maintained protocols replay "
    "it event by event (fb1k-google, tw1k-google, ...), cycle protocols run it cycle by cycle "
    "(vitis-flash-crowd, vitis-trace).",
)
@setting_options("churn")
@click.option(
    "--trace",
    type=click.Path(file_okay=False),
    default=None,
    help="Replay a join/leave trace (an output folder of `hedgerow ingest churn`).",
)
@click.option(
    "--speedup", type=float, default=None, help="Trace seconds per second (default: 1)."
)
@click.option(
    "-p", "params", multiple=True, metavar="NAME=VALUE", help="Protocol parameter (repeatable)."
)
@click.option(
    "--json", "as_json", is_flag=True,
    help="One JSON line per row (snapshot, event or sample), then a summary line."
)
@click.option("--no-timings", is_flag=True,
              help="Leave the wall-clock fields (wall_seconds, repair_seconds...) out of the "
                   "output, so that two runs of a seed print the same bytes.")
def churn_cmd(
    protocol,
    nodes,
    topics,
    subs,
    popularity,
    seed,
    scenario,
    settings,
    trace,
    speedup,
    params,
    as_json,
    no_timings,
):
    """Run PROTOCOL under churn (SpiderCast section 3.8, OMen section 6, Vitis section IV-F).

    PROTOCOL is any maintained or cycle-driven protocol (listed below); the
    driver is the one of its capability.  A maintained overlay: with
    --scenario NAME the named workload x churn pair is replayed event by
    event (OMen's churn rounds) with the invariants checked after each event;
    --json then prints one line per event.  Otherwise each node is online
    for Exp(λ) seconds and offline for Exp(off_ratio x λ), and rejoins with a
    new interest; or the join/leave events of --trace are replayed.
    Every --snapshot-every seconds the overlay of the nodes online for over
    2 s is measured: degree, partitioned topics, under-covered nodes, and the
    control messages per join/leave so far.  A cycle-driven gossip protocol
    (vitis, rvr) runs a named cycle scenario (vitis-flash-crowd, vitis-trace;
    --nodes reduces it), one row every few cycles: ring correctness, hit
    ratio, overhead, delay.  With any network option (--bandwidth, --size,
    --publication, ...) every row's messages (one per topic with an online
    subscriber) also cross the contended network, and the row gains delivery
    under load and bytes per node (docs/network.md).  The churn settings'
    options and defaults come from the declared world settings; an option the
    chosen churn does not use is an error.

    \b
    Example:
      hedgerow churn spidercast --nodes 1250 --lifetime 100 --duration 1000 --seed 1
      hedgerow churn lowoda-inc --scenario fb1k-google --events 200 --json
      hedgerow churn vitis --scenario vitis-flash-crowd --seed 1
      hedgerow churn spidercast --nodes 1000 --lifetime 100 --bandwidth 25:50 --size 128k
    """
    from hedgerow.pipeline.inputs import ensure_inputs, inputs_of
    from hedgerow.progress import progress_bar
    from hedgerow.scenarios.churn_drivers import ChurnRequest, run_churn_request

    workload = {"nodes": nodes, "topics": topics, "subs": subs, "popularity": popularity}
    given = {k for k, v in {**workload, **settings, "trace": trace, "speedup": speedup,
                            "scenario": scenario}.items() if v is not None}
    request = ChurnRequest.from_settings(
        {**settings, "scenario": scenario, "trace": trace, "speedup": speedup},
        workload={**workload, **{k: v if workload[k] is None else workload[k]
                                 for k, v in WORKLOAD_DEFAULTS.items()}},
        given=given,
    )
    ensure_inputs(inputs_of({"churn": {"scenario": scenario}}),
                  log=lambda m: click.echo(m, err=True))
    show = not as_json or stderr_console.is_terminal
    with progress_bar(f"churn {protocol}", enabled=show, status=True) as bar:
        task = bar.add_task(protocol, total=None, status="start")
        outcome = run_churn_request(
            protocol, request, seed=seed, params=parse_params(params),
            nodes=nodes if scenario is not None else None,
            progress=lambda done, total: bar.update(task, completed=done, total=total,
                                                    status="running"),
        )
    for w in outcome.summary["warnings"]:
        click.echo(f"warning: {w}", err=True)
    if as_json:
        ran = {"params": outcome.summary["params"]}
        for row in outcome.rows:
            click.echo(json.dumps({"kind": outcome.row_kind,
                                   **{k: _clean(v) for k, v in row.items()
                                      if not (no_timings and _wall_clock(k))}, **ran},
                                  default=str))
        summary = {k: _clean(v) for k, v in outcome.summary.items()
                   if not (no_timings and _wall_clock(k))}
        click.echo(json.dumps({"kind": "summary", **summary}, default=str))
        return
    _print(outcome)


def _wall_clock(key: str) -> bool:
    """A field measured by the clock on the wall (left out by ``--no-timings``)."""
    return key in ("wall_seconds", "start_seconds", "seconds") or key.startswith(
        ("repair_seconds", "repair_cpu_seconds", "omen_repair_seconds"))


def _print(outcome) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if outcome.columns:
        table = Table(title=outcome.title)
        for _, title in outcome.columns:
            table.add_column(title, justify="right")
        for row in outcome.rows:
            table.add_row(*("-" if row.get(k) is None else
                            f"{row[k]:.4g}" if isinstance(row[k], float) else str(row[k])
                            for k, _ in outcome.columns))
        console.print(table)
    for line in outcome.lines:
        console.print(line)
