"""Plots stay out of the hot path: the simulation and sweep code never imports matplotlib."""

from __future__ import annotations

import subprocess
import sys


def test_core_packages_do_not_import_matplotlib():
    code = (
        "import sys\n"
        "import hedgerow.scenarios, hedgerow.protocols, hedgerow.experiment\n"
        "import hedgerow.figures, hedgerow.figures.papers, hedgerow.figures.tidy\n"
        "from hedgerow.experiment import parse_spec, run_one\n"
        "spec = parse_spec({'experiment': 'x', 'scenario': {'protocol': 'ringpt',"
        " 'diameter': False, 'workload': {'nodes': 40, 'topics': 5, 'subs': 2}}})\n"
        "run_one(spec.expand()[0])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib')\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
