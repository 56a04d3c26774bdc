"""``hedgerow draw``: a picture of one overlay (and its GraphML)."""

from __future__ import annotations

from pathlib import Path

import click

from hedgerow.cli._common import parse_params

__all__ = ["draw_cmd"]


@click.command("draw")
@click.argument("protocol")
@click.option("--scenario", required=True, help="Scenario name (hedgerow run --help lists them).")
@click.option("--topic", type=int, default=None, help="Highlight this topic's subgraph.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file (.png or .svg).")
@click.option("--graphml", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the overlay as GraphML (for Gephi or networkx).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--epochs", type=click.IntRange(min=1), default=None,
              help="Epochs of an adaptive protocol (default: the scenario's).")
@click.option("--nodes", type=click.IntRange(min=2), default=None, help="Nodes (sized scenarios).")
@click.option("--messages", type=click.IntRange(min=1), default=None, help="Messages per epoch.")
@click.option("-p", "--param", "params", multiple=True, help="Protocol parameter NAME=VALUE.")
def draw_cmd(protocol: str, scenario: str, topic: int | None, out: Path | None,
             graphml: Path | None, seed: int, epochs: int | None, nodes: int | None,
             messages: int | None, params: tuple[str, ...]) -> None:
    """Draw PROTOCOL's overlay on SCENARIO: positions on the unit square, longitude/latitude
    for the cities, a circle by id for ring-based protocols; --topic colours the topic's
    components.
    """
    from hedgerow.errors import HedgerowError
    from hedgerow.figures.draw import draw_overlay, make_overlay, write_graphml

    if out is None and graphml is None:
        raise HedgerowError("hedgerow draw: give --out FILE.png and/or --graphml FILE")
    settings = {k: v for k, v in (("epochs", epochs), ("nodes", nodes),
                                  ("messages", messages)) if v is not None}
    overlay, world = make_overlay(protocol, scenario, seed=seed,
                                  params=parse_params(params) or None, **settings)
    if out is not None:
        fig = draw_overlay(overlay, world, protocol=protocol, topic=topic)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=120)
        click.echo(f"wrote {out}", err=True)
    if graphml is not None:
        write_graphml(overlay, world, graphml, protocol=protocol, topic=topic)
        click.echo(f"wrote {graphml}", err=True)
