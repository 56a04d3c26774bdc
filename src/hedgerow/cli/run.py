"""``hedgerow run``: run a protocol on a named epoch scenario (the Topiary evaluation)."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from hedgerow.cli._common import parse_params
from hedgerow.progress import progress_bar

#: row keys shown in the table, with their headers and formats
_COLUMNS = (
    ("epoch", "epoch", "{:d}"),
    ("receive_rate", "receive rate", "{:.4f}"),
    ("avg_delay_ms", "avg delay (ms)", "{:.1f}"),
    ("avg_score", "avg score", "{:.2f}"),
    ("relay_copies", "relay copies", "{:.1f}"),
    ("victim_receive_rate", "victim rate", "{:.4f}"),
    ("victim_avg_delay_ms", "victim delay (ms)", "{:.1f}"),
    ("attacker_slot_share", "attacker slots", "{:.3f}"),
    ("honest_with_honest_neighbour", "honest w/ honest out-nbr", "{:.4f}"),
    ("honest_with_honest_link", "honest w/ honest link", "{:.4f}"),
)


def _fmt(value, spec: str) -> str:
    if value is None:
        return "-"
    return spec.format(value)


@click.command("run")
@click.argument("protocol")
@click.option(
    "--scenario", "-s", required=True, help="unit-square, cities, topic-attack or eclipse"
)
@click.option("--topics", type=int, default=None, help="number of topics (default 100)")
@click.option("--interest", type=float, default=None, help="subscription probability per topic")
@click.option(
    "--epochs", type=int, default=None, help="epochs of an adaptive protocol (default 150)"
)
@click.option("--seed", type=int, default=0, show_default=True, help="the run's seed")
@click.option("--attackers", type=int, default=None, help="attackers (attack scenarios)")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="protocol parameter (repeatable), e.g. -p wd=2 -p eta=1.5",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON line per epoch on stdout")
def run_cmd(protocol, scenario, topics, interest, epochs, seed, attackers, params, as_json):
    """Run PROTOCOL (topiary, random, complete, gossipsub, scribe-random, scribe-topic)
    on a named scenario and print one row per epoch.

    Static baselines report a single epoch.  A progress bar runs on stderr.
    """
    from hedgerow.scenarios import simulate
    from hedgerow.scenarios.runner import check_run

    options = parse_params(params)
    sc = check_run(
        protocol,
        scenario,
        epochs=epochs,
        topics=topics,
        interest=interest,
        attackers=attackers,
        params=options,
    )
    total = sc.epochs if protocol == "topiary" else 1
    rows: list[dict] = []
    with progress_bar() as bar:
        task = bar.add_task(f"{protocol} on {scenario}", total=total)

        def on_epoch(row: dict) -> None:
            rows.append(row)
            if as_json:
                click.echo(json.dumps(row))
            bar.advance(task)

        simulate(
            protocol,
            scenario,
            seed=seed,
            epochs=epochs,
            topics=topics,
            interest=interest,
            attackers=attackers,
            params=options,
            on_epoch=on_epoch,
        )
    if as_json:
        return
    present = [c for c in _COLUMNS if any(c[0] in r for r in rows)]
    table = Table(title=f"{protocol} on {scenario} (seed {seed})")
    for _, header, _ in present:
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(*(_fmt(r.get(key), spec) for key, _, spec in present))
    Console().print(table)
