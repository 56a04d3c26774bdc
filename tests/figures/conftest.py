"""A tiny results folder for the figure and report tests.

Every run of every quick spec of every declared reproduction gets rows with
the real descriptive columns (:func:`hedgerow.experiment.base_row` of the
expanded run, so labels, swept values, seeds and run ids are those a sweep
writes) and metric values drawn from a seeded generator around plausible
levels: the tests check the drawing and the report, not the protocols.
Topiary's score figure gets a small ``(epochs, nodes)`` score array.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from hedgerow.experiment import base_row
from hedgerow.figures.papers import PAPERS, Results
from hedgerow.pipeline.reproduce import spec_for
from hedgerow.pipeline.store import write_manifest, write_rows

LEVELS = {
    "avg_degree": 10.0, "topic_components": 100.0, "partitioned_topics": 0.0,
    "messages_per_op": 45.0, "receive_rate": 0.99, "delay_mean_ms": 400.0,
    "victim_receive_rate": 0.98, "victim_delay_mean_ms": 420.0, "attacker_slot_share": 0.6,
    "honest_with_honest_neighbour": 0.95, "eclipse_streak_max": 3.0,
    "stat_kr_final_mean": 0.05, "max_degree": 30.0, "relay_share": 0.2,
    # Vitis
    "hit_ratio": 1.0, "overhead": 0.6, "overhead_copies": 0.6, "delay_hops": 7.0,
    "share_overhead_above_20": 0.7, "overhead_node_p50": 0.6, "overhead_node_p90": 0.8,
    # OMen
    "view_mean": 14.0, "view_below_5pct": 0.99, "omen_repair_seconds": 0.001,
    "repair_seconds": 0.1, "edges_added": 2.0, "messages": 40.0, "violations": 0.0,
    "repair_cpu_seconds": 0.07, "start_max_degree": 80.0, "start_avg_degree": 4.1,
    # Goldfish
    "fig2a_success": 0.8, "fig2b_success": 0.3, "publisher_full": 0.15,
    "fig2a_success_found": 0.95, "fig2b_success_close": 0.35,
    "wasted_latency_p25_ms": 190.0, "wasted_latency_p50_ms": 220.0,
    "wasted_latency_p75_ms": 260.0, "wasted_latency_mean_ms": 230.0, "t90_ms": 590.0,
    "honest_exploit_peer_share": 1.0, "attacker_tenure_mean_epochs": 3.0,
    # bytes on the wire
    "delay_p90_ms": 700.0, "sent_payload_mean": 1e7, "message_bytes_mean": 16384.0,
}
EPOCHS = 4


def _rows(run, rng: np.random.Generator) -> list[dict]:
    base = base_row(run)
    kind = base["kind"]
    n_rows = EPOCHS if kind in ("run", "churn") else 1
    if kind == "run" and run.scenario["protocol"] not in ("topiary",):
        n_rows = 1  # static protocols report one epoch
    out = []
    for e in range(n_rows):
        row = dict(base, status="ok", attempt_id=f"a-{base['run_id']}", finished_at=time.time(),
                   wall_seconds=float(rng.uniform(0.5, 2.0)), code="tinyfixture0",
                   host="test", world=f"w{base['seed']}")
        if kind != "build":
            row["epoch"] = e
        for m, v in LEVELS.items():
            row[m] = float(v * (1 + 0.02 * rng.standard_normal()))
        row["topic_components"] = 100.0
        row["partitioned_topics"] = 0.0
        row["eclipse_streak_max"] = 3.0
        row["violations"] = 0.0
        if kind == "churn":
            row["type"] = ("join", "leave")[e % 2]  # churn rows are joins and leaves
        if run.scenario["protocol"] in ("vitis", "rvr"):
            row["rt"] = float(base.get("run_rt") or 15)  # Vitis rows report their table size
            if kind == "churn":
                row["cycle"] = 5 * (e + 1)  # cycle-driven churn rows are samples every 5 cycles
                row["hit_ratio_min"] = row["hit_ratio"] * 0.97  # and carry the run's worst
        out.append(row)
    return out


@pytest.fixture(scope="session")
def tiny_results(tmp_path_factory):
    """A results folder with quick-spec rows of every paper (no Spark, no simulation)."""
    out = tmp_path_factory.mktemp("tiny-results")
    rng = np.random.default_rng(7)
    for paper in PAPERS.values():
        for named in paper.experiments:
            spec = spec_for(named, quick=True)
            runs = spec.expand()
            write_manifest(out, spec, runs)
            for run in runs:
                write_rows(out, run.run_id, _rows(run, rng))
        results = Results(out, quick=True)
        for fig in paper.figures:
            if fig.score_run is not None:
                path = results.scores_path(fig.score_run)
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, rng.uniform(0, 1, size=(EPOCHS, 30)))
    return out
