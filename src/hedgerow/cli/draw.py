"""``hedgerow draw``: build a gossip overlay and write its pictures and GraphML."""

from __future__ import annotations

from pathlib import Path

import click

from hedgerow.cli._common import parse_params, workload_options

#: protocols whose builds can be drawn (they keep their gossip state in ``run_``)
DRAWABLE = ("vitis",)


@click.command("draw")
@click.argument("protocol", type=click.Choice(DRAWABLE))
@workload_options()
@click.option("-p", "params", multiple=True, metavar="NAME=VALUE",
              help="Protocol parameter (repeatable).")
@click.option("--topic", type=int, default=None,
              help="Topic to draw (default: the one with the most clusters).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Folder for overlay.png, topic-T.png, convergence.png, "
              "overlay.graphml.")
def draw_cmd(protocol, nodes, topics, subs, popularity, seed, params, topic, out_dir):
    """Build PROTOCOL on a synthetic workload; draw the overlay on its id ring, one topic's
    clusters, gateways and relay paths, the convergence curves; export GraphML.

    \b
    Example:
      hedgerow draw vitis --nodes 300 --topics 40 --subs 3:6 -p rt=8 -p cycles=40 --out pics
    """
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from hedgerow.metrics.connectivity import topic_components
    from hedgerow.protocols import get_protocol
    from hedgerow.protocols.vitis.pictures import (
        draw_convergence,
        draw_overlay,
        draw_topic,
        write_graphml,
    )
    from hedgerow.workloads import make_instance

    inst = make_instance(nodes=nodes, topics=topics, subs=subs, popularity=popularity,
                         seed=seed)
    proto = get_protocol(protocol, **parse_params(params))
    ov = proto.build(inst, seed=seed)
    if topic is None:
        topic = int(np.argmax(topic_components(ov, inst)))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in (("overlay.png", lambda: draw_overlay(proto)),
                       (f"topic-{topic}.png", lambda: draw_topic(proto, topic)),
                       ("convergence.png", lambda: draw_convergence(proto))):
        ax = draw()
        ax.figure.savefig(out / name, dpi=110, bbox_inches="tight")
        matplotlib.pyplot.close(ax.figure)
        written.append(out / name)
    write_graphml(proto, str(out / "overlay.graphml"))
    written.append(out / "overlay.graphml")
    for w in written:
        click.echo(str(w))
