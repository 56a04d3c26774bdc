"""Head to head: every registered protocol on the same worlds (``docs/head-to-head.md``).
"""

from __future__ import annotations

from hedgerow.figures.papers._declare import (
    FigureSpec,
    Named,
    Paper,
    Quick,
)

__all__ = ["HEAD_TO_HEAD"]

_H2H_METRICS = (("receive_rate", "receive rate"), ("delay_mean_ms", "average delay (ms)"),
                ("avg_degree", "average degree"), ("partitioned_topics", "partitioned topics"))

HEAD_TO_HEAD = Paper(
    name="head-to-head",
    title="Head to head: every registered protocol on the same worlds (unit square, "
    "246 cities, RSS on the unit square)",
    doc="docs/head-to-head.md",
    experiments=(
        Named("head-to-head.yaml", "head-to-head",
              Quick(seeds=[1], scenario={"run.epochs": 30}), 4.5, 0.6),
    ),
    figures=(
        FigureSpec("h2h", "Every protocol on the same worlds, each forwarding by its own rule "
                   "(last epoch of each run)", "head-to-head", "bars", panels=_H2H_METRICS,
                   group="scenario", last=True, logy=("delay_mean_ms", "avg_degree"),
                   readings=(("How to read the table", "docs/head-to-head.md"),)),
    ),
)

# ---------------------------------------------------------------------------------------------
