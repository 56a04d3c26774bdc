"""Numba's threading layer started at import (hedgerow.model.parallel).

A serial kernel compiled while its parallel callee came from numba's on-disk cache gets a
cache entry that does not start the threading layer; a fresh process that runs it first
crashed (GossipSub's event kernel and its parallel score pass). The guard is that every module
defining ``parallel=True`` kernels starts the layer when imported.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import hedgerow
from hedgerow.model.parallel import launch_threads

SRC = Path(hedgerow.__file__).resolve().parent


def _launches_at_import(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
               and getattr(node.value.func, "id", None) == "launch_threads"
               for node in tree.body)


def _parallel_kernels(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and any(
                        k.arg == "parallel" and getattr(k.value, "value", False) is True
                        for k in dec.keywords):
                    names.append(node.name)
    return names


def test_every_module_with_parallel_kernels_starts_the_threads_when_imported():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        kernels = _parallel_kernels(tree)
        if kernels:
            found[path.relative_to(SRC).as_posix()] = _launches_at_import(tree)
    assert found, "no parallel=True kernel found: the scan is broken"
    assert all(found.values()), {k: v for k, v in found.items() if not v}


def test_launch_threads_reports_the_thread_count():
    assert launch_threads() >= 1
    assert launch_threads() == launch_threads()


PROBE = '''
import numba
import numpy as np

from hedgerow.model.parallel import launch_threads

launch_threads()


@numba.njit(cache=True, parallel=True)
def _twice(x):
    out = np.zeros(len(x))
    for i in numba.prange(len(x)):
        out[i] = 2.0 * x[i]
    return out.sum()


@numba.njit(cache=True)
def caller(x, k):
    return _twice(x) + k
'''

STEP = '''
import sys
import numpy as np
import probe
k = 1 if sys.argv[1] == "int" else 0.5
print(probe.caller(np.arange(100.0), k))
'''


def test_a_caller_compiled_beside_a_cached_parallel_callee_runs_in_a_fresh_process(tmp_path):
    # 1. the int caller compiles both (the callee's entry starts the layer); 2. a new process
    # compiles the float caller with the callee loaded from the cache (an entry that does not
    # start the layer); 3. a fresh process runs the float caller first: numba alone crashes
    # here, the probe's import-time guard keeps it running
    (tmp_path / "probe.py").write_text(textwrap.dedent(PROBE))
    (tmp_path / "step.py").write_text(textwrap.dedent(STEP))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(
        [str(tmp_path), str(SRC.parent), os.environ.get("PYTHONPATH", "")]))
    outs = []
    for arg in ("int", "float", "float"):
        done = subprocess.run([sys.executable, "step.py", arg], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (arg, done.returncode, done.stderr[-2000:])
        outs.append(float(done.stdout.strip()))
    assert outs == [9901.0, 9900.5, 9900.5]
