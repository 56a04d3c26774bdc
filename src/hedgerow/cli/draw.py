"""``hedgerow draw``: a picture of one overlay (and its GraphML)."""

from __future__ import annotations

from pathlib import Path

import click

from hedgerow.cli._common import parse_params, scenario_options

__all__ = ["draw_cmd"]


@click.command("draw")
@click.argument("protocol")
@scenario_options
@click.option("--topic", type=int, default=None, help="Highlight this topic's subgraph.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Image file (.png or .svg).")
@click.option("--graphml", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the overlay as GraphML (for Gephi or networkx).")
@click.option("-p", "--param", "params", multiple=True, help="Protocol parameter NAME=VALUE.")
def draw_cmd(protocol: str, scenario: str, seed: int, settings: dict, topic: int | None,
             out: Path | None, graphml: Path | None, params: tuple[str, ...]) -> None:
    """Draw PROTOCOL's overlay on SCENARIO: positions on the unit square, longitude/latitude
    for the cities, a circle by id for ring-based protocols; --topic colours the topic's
    components.  The scenario's world settings are options (generated from the declared
    settings, as for run and compare).
    """
    from hedgerow.errors import HedgerowError
    from hedgerow.figures.draw import (
        check_image_path,
        draw_overlay,
        make_overlay,
        write_graphml,
    )
    from hedgerow.userfiles import check_writable

    if out is None and graphml is None:
        raise HedgerowError("hedgerow draw: give --out FILE.png and/or --graphml FILE")
    if out is not None:
        check_writable(check_image_path(out))
    if graphml is not None:
        check_writable(graphml)
    settings = {k: v for k, v in settings.items() if v is not None}
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
