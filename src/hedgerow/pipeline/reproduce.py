"""``hedgerow reproduce``: a paper's named experiments as sweeps, then its figures and report.

:func:`reproduce` runs every experiment of a :class:`~hedgerow.figures.papers.Paper`
with :func:`hedgerow.pipeline.sweep.run_sweep` (finished runs are skipped, so a
second call only draws), the in-process runs some figures need (Topiary's
per-node scores), and writes ``OUT/report/<paper>[-quick].html`` plus
``OUT/report/index.html`` over every report in that folder.  ``quick``
runs the reduced specs (:func:`quick_spec`), named ``<experiment>-quick``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from hedgerow.errors import HedgerowError
from hedgerow.experiment import ExperimentSpec, parse_spec
from hedgerow.figures.papers import PAPERS, Named, Paper, Results, get_paper

__all__ = ["experiments_dir", "quick_spec", "reproduce", "spec_for", "write_report"]


def experiments_dir() -> Path:
    """The folder of the experiment specs.

    ``$HEDGEROW_EXPERIMENTS``, else the source tree's ``experiments/``, else ./experiments.
    """
    env = os.environ.get("HEDGEROW_EXPERIMENTS")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[3] / "experiments", Path("experiments")]
    for c in candidates:
        if c.is_dir():
            return c
    raise HedgerowError(
        "no experiments folder: set HEDGEROW_EXPERIMENTS to the folder of the spec files"
    )


def _set_dotted(target: dict[str, Any], key: str, value: Any) -> None:
    *path, last = key.split(".")
    for p in path:
        target = target.setdefault(p, {})
    target[last] = value


def quick_spec(data: dict[str, Any], named: Named) -> dict[str, Any]:
    """The reduced form of a spec mapping (a copy): ``-quick`` name, fewer points.

    Examples
    --------
    >>> from hedgerow.figures.papers import Quick
    >>> d = {"experiment": "e", "scenario": {"run": {"name": "x"}},
    ...      "sweep": {"grid": {"a": [1, 2]}, "seeds": [1, 2],
    ...                "variants": [{"label": "p"}, {"label": "q"}]}}
    >>> q = quick_spec(d, Named("e.yaml", "e", Quick(grid={"a": [1]}, seeds=[1],
    ...                labels=["q"], scenario={"run.epochs": 5}), 1, 1))
    >>> q["experiment"], q["sweep"]["grid"], q["sweep"]["seeds"], q["scenario"]["run"]["epochs"]
    ('e-quick', {'a': [1]}, [1], 5)
    >>> [v["label"] for v in q["sweep"]["variants"]]
    ['q']
    >>> q = quick_spec(d, Named("e.yaml", "e", Quick(overrides={"q": {"scenario.run.epochs": 4}}),
    ...                1, 1))
    >>> q["sweep"]["variants"][1]
    {'label': 'q', 'overrides': {'scenario.run.epochs': 4}}
    """
    data = json.loads(json.dumps(data))
    q = named.quick
    data["experiment"] = f"{data['experiment']}-quick"
    sweep = data.setdefault("sweep", {})
    for k, v in q.grid.items():
        sweep.setdefault("grid", {})[k] = list(v)
    if q.seeds is not None:
        sweep["seeds"] = list(q.seeds)
    if q.labels is not None:
        keep = [v for v in sweep.get("variants", []) if v["label"] in q.labels]
        if not keep:
            raise HedgerowError(f"{named.spec}: quick labels {list(q.labels)} match no variant")
        sweep["variants"] = keep
    for k, v in q.scenario.items():
        _set_dotted(data.setdefault("scenario", {}), k, v)
    for label, keys in q.overrides.items():
        hit = [v for v in sweep.get("variants", []) if v["label"] == label]
        if not hit:
            raise HedgerowError(f"{named.spec}: quick overrides name no variant {label!r}")
        for v in hit:
            v.setdefault("overrides", {}).update(keys)
    return data


def spec_for(named: Named, quick: bool, folder: Path | None = None) -> ExperimentSpec:
    """The validated spec of ``named`` (reduced when ``quick``)."""
    path = (folder or experiments_dir()) / named.spec
    if not path.is_file():
        raise HedgerowError(f"{path}: no such spec file")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if data.get("experiment") != named.experiment:
        raise HedgerowError(f"{path}: experiment is {data.get('experiment')!r}, "
                            f"expected {named.experiment!r}")
    if quick:
        data = quick_spec(data, named)
    return parse_spec(data, source=str(path) + (" (quick)" if quick else ""))


def _score_runs(paper: Paper, results: Results, log: Callable[[str], None]) -> dict[str, float]:
    from hedgerow.scenarios import simulate

    times = {}
    for fig in paper.figures:
        run = fig.score_run
        if run is None:
            continue
        path = results.scores_path(run)
        if path.is_file():
            continue
        epochs = run.quick_epochs if results.quick else run.epochs
        t0 = time.perf_counter()
        res = simulate(run.protocol, run.scenario, seed=run.seed, epochs=epochs, **run.settings)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, np.asarray(res.scores, dtype=np.float32))
        tmp.replace(path)
        times[run.name] = time.perf_counter() - t0
        log(f"{run.name}: {epochs} epochs of {run.protocol} on {run.scenario} "
            f"in {times[run.name]:.1f}s -> {path}")
    return times


def missing_runs(paper: Paper, out: str | Path, *, quick: bool = False) -> tuple[int, int]:
    """``(missing, expected)``: the runs of ``paper``'s experiments that ``out`` does not hold."""
    from hedgerow.pipeline.store import finished_run_ids

    out = Path(out)
    expected = {r.run_id for n in paper.experiments for r in spec_for(n, quick).expand()}
    done = finished_run_ids(out) if out.is_dir() else set()
    return len(expected - done), len(expected)


def write_report(paper: Paper, out: str | Path, *, quick: bool = False,
                 timings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Draw the figures and write the HTML report (and the index) from what ``out`` holds."""
    from hedgerow.figures.html import index_page, paper_report

    out = Path(out)
    missing, expected = missing_runs(paper, out, quick=quick)
    results = Results(out, quick=quick)
    stem = paper.name + ("-quick" if quick else "")
    tfile = out / "_reproduce" / f"{stem}.json"
    if timings is None and tfile.is_file():
        timings = json.loads(tfile.read_text()).get("experiments", {})
    summary = paper_report(paper, results, out / "report", timings=timings or {},
                           runs=(missing, expected))
    summary["runs"] = (missing, expected)
    summary["title"] = paper.title + (" (quick)" if quick else "")
    index = []
    for p in PAPERS.values():
        for q in (False, True):
            s = p.name + ("-quick" if q else "")
            j = out / "_reproduce" / f"{s}.json"
            if (out / "report" / f"{s}.html").is_file() and j.is_file():
                index.append(json.loads(j.read_text())["summary"])
    rec = {
        "path": str(summary["path"]),
        "title": summary["title"],
        "figures": {k: str(v) if v else None for k, v in summary["figures"].items()},
        "checks": list(summary["checks"]),
        "as_settled": summary["as_settled"],
        "settled": summary["settled"],
        "values": list(summary["values"]),
    }
    index = [r for r in index if r["path"] != rec["path"]] + [rec]
    tfile.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(tfile.read_text()) if tfile.is_file() else {}
    old.update(summary=rec, experiments=timings or old.get("experiments", {}))
    tfile.write_text(json.dumps(old, indent=1))
    summary["index"] = index_page(index, out / "report")
    return summary


def reproduce(
    name: str,
    out: str | Path,
    *,
    quick: bool = False,
    master: str | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    spark: Any = None,
    log_file: str | Path | None = None,
) -> dict[str, Any]:
    """Run the paper's experiments (missing runs only), its in-process runs, then its report.

    ``log_file`` (quiet mode) takes the JVM's and Spark's output when a session is started.

    Returns the report summary (:func:`hedgerow.figures.html.paper_report`)
    plus ``seconds`` (the whole call) and ``failed`` (failed runs).
    """
    from hedgerow.pipeline.sweep import run_sweep

    paper = get_paper(name)
    out = Path(out)
    t0 = time.perf_counter()
    specs = [(n, spec_for(n, quick)) for n in paper.experiments]  # validate all first
    timings: dict[str, Any] = {}
    failed = 0
    for _named, spec in specs:
        if spark is None:
            done = {r.run_id for r in spec.expand()}
            from hedgerow.pipeline.store import finished_run_ids

            if not done <= finished_run_ids(out):
                from hedgerow.pipeline.session import get_spark

                spark = get_spark(master, app_name=f"hedgerow-reproduce:{name}",
                                  log_file=log_file)
        res = run_sweep(spec, out, spark=spark, master=master, progress=progress)
        log(res.summary())
        failed += res.failed
        timings[spec.experiment] = {"seconds": res.seconds, "ran": res.executed,
                                    "skipped": res.skipped, "failed": res.failed}
    results = Results(out, quick=quick)
    for k, v in _score_runs(paper, results, log).items():
        timings[k] = {"seconds": v, "ran": 1, "skipped": 0, "failed": 0}
    summary = write_report(paper, out, quick=quick, timings=timings)
    summary["seconds"] = time.perf_counter() - t0
    summary["failed"] = failed
    return summary
