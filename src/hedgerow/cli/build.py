"""``hedgerow build``: build one overlay on a synthetic workload and print its metrics."""

from __future__ import annotations

import click

from hedgerow.cli._common import (
    WORKLOAD_DEFAULTS,
    ProtocolCommand,
    parse_params,
    print_json,
    stderr_console,
    workload_options,
)


@click.command("build", cls=ProtocolCommand)
@click.argument("protocol")
@workload_options(topics_required=False, nodes_required=False)
@click.option(
    "--social",
    default=None,
    metavar="NAME",
    help="Workload: an ingested social sample, by name (fb1k, fb4k, tw1k, tw10k; ingested once)"
    " or an output folder of `hedgerow ingest social` / `follower-graph`.",
)
@click.option(
    "--membership", type=float, default=None, help="Interest-view fraction (partial membership)."
)
@click.option(
    "-p", "params", multiple=True, metavar="NAME=VALUE", help="Protocol parameter (repeatable)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--no-diameter", is_flag=True, help="Skip the topic-diameter computation.")
@click.option("--no-timings", is_flag=True, help="Leave the 'timings' field out of the output.")
def build_cmd(
    protocol, nodes, topics, subs, popularity, seed, social, membership, params, as_json,
    no_diameter, no_timings,
):
    """Build PROTOCOL's overlay on a synthetic workload and print its metrics.

    A broken promise (a build stopped before quiescence, a topic-connected
    protocol leaving topics partitioned) is a one-line warning on stderr and
    is listed under "warnings" in the JSON.

    \b
    Example:
      hedgerow build spidercast --nodes 1000 --topics 100 --subs 10 --popularity rss --seed 1
      hedgerow build lowoda --social fb1k -p rho=2
    """
    from hedgerow.errors import ParameterError
    from hedgerow.progress import build_progress
    from hedgerow.scenarios.static import build_record

    instance = None
    if social is not None:
        synthetic = {"--nodes": nodes, "--topics": topics, "--subs": subs,
                     "--popularity": popularity}
        given = [k for k, v in synthetic.items() if v is not None]
        if given:
            raise ParameterError(f"{given[0]} cannot be used with --social {social}, whose "
                                 "users and topics are the workload; give one")
        instance = _social_instance(social)
        nodes, topics = instance.n_nodes, instance.n_topics
    elif nodes is None:
        raise ParameterError("give --nodes and --topics (synthetic workload) or --social NAME")
    topics = WORKLOAD_DEFAULTS["topics"] if topics is None else topics
    subs = WORKLOAD_DEFAULTS["subs"] if subs is None else subs
    popularity = WORKLOAD_DEFAULTS["popularity"] if popularity is None else popularity
    options = parse_params(params)
    if membership is not None:
        if "membership" in options:
            raise ParameterError(
                f"membership is given twice, as --membership {membership:g} and as -p "
                f"membership={options['membership']}; give one",
                key="membership",
            )
        options["membership"] = membership
    show = not as_json or stderr_console.is_terminal
    with build_progress(protocol, nodes, enabled=show) as update:
        record = build_record(
            protocol,
            nodes=nodes,
            topics=topics,
            subs=subs,
            popularity=popularity,
            seed=seed,
            params=options,
            diameter=not no_diameter,
            progress=update,
            instance=instance,
        )
    for w in record["warnings"]:
        click.echo(f"warning: {w}", err=True)
    if no_timings:
        record.pop("timings")
    if as_json:
        print_json(record)
        return
    _print_table(record)


def _social_instance(social: str):
    """A named social sample (ingested once, then cached) or an ingest output folder."""
    from pathlib import Path

    from hedgerow.scenarios.inputs import INPUTS, is_social_input
    from hedgerow.workloads.social import load_instance

    if is_social_input(social):
        from hedgerow.pipeline.inputs import ensure_inputs

        folder = ensure_inputs([social], log=lambda m: click.echo(m, err=True))[social]
        return load_instance(folder)
    if Path(social).is_dir():
        return load_instance(social)
    from hedgerow.errors import ParameterError

    names = ", ".join(k for k in INPUTS if is_social_input(k))
    raise ParameterError(f"--social must be one of {names} or an ingest output folder,"
                         f" got {social!r}")


def _print_table(record: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"{record['protocol']} on {record['nodes']} nodes, {record['topics']} topics"
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    flat = {**record, **record.get("timings", {})}
    for key, value in flat.items():
        if key in ("messages", "warnings", "timings", "params"):
            continue
        if isinstance(value, float):
            value = f"{value:.4g}"
        elif isinstance(value, list):
            value = "[" + ", ".join(f"{v:.4g}" for v in value) + "]"
        table.add_row(key, str(value))
    Console().print(table)
