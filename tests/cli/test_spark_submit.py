"""The ``spark-submit`` entry file runs ``hedgerow sweep`` when executed as a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

import hedgerow
import hedgerow.cli.spark_submit as spark_submit
from hedgerow.experiment import parse_spec

SPEC = {
    "experiment": "submit-tiny",
    "scenario": {
        "protocol": "ringpt",
        "workload": {"nodes": 60, "topics": 10, "subs": 3, "popularity": "rss"},
        "diameter": False,
    },
    "sweep": {"grid": {"scenario.workload.nodes": [60, 80]}, "seeds": [0, 1]},
}


def _env() -> dict[str, str]:
    """The environment of a child Python that imports this checkout's hedgerow."""
    src = str(Path(hedgerow.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def test_entry_file_is_the_cli_module():
    path = Path(spark_submit.__file__)
    assert path.name == "spark_submit.py" and path.parent.name == "cli"
    out = subprocess.run(
        [sys.executable, "-c", "import hedgerow.cli.spark_submit as m; print(m.__file__)"],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(out.stdout.strip()).resolve() == path.resolve()


def test_entry_file_runs_hedgerow_sweep(tmp_path):
    # spark-submit runs the file with the submit's arguments; --dry-run needs no Spark
    spec_file = tmp_path / "tiny.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    res = subprocess.run(
        [
            sys.executable,
            spark_submit.__file__,
            str(spec_file),
            "--out",
            str(tmp_path / "out"),
            "--dry-run",
        ],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    listed = [line.split()[0] for line in res.stdout.splitlines()]
    assert listed == [r.run_id for r in parse_spec(SPEC).expand()]
    assert "4 runs, 0 done" in res.stderr
