"""Kernels that link a parallel loop start numba's threading layer before they run.

numba records in a kernel's cache entry that loading it must start the threading layer when the
kernel has parallel loops, its own or those of the kernels it links; for a linked kernel the
record is copied only when that kernel was compiled in the same process. Linked from the on-disk
cache, it leaves the caller's new entry without the record, and a fresh process that runs that
entry first crashes. GossipSub's event loop links the parallel score pass, and one test run alone
after the whole suite had cached the kernels died of a segmentation fault. The rule
(:mod:`hedgerow.model.parallel`): every Python function that calls a compiled kernel linking a
parallel loop calls ``launch_threads()`` first.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import hedgerow

SRC = Path(hedgerow.__file__).resolve().parent


def _jit(func: ast.FunctionDef) -> dict[str, object] | None:
    """The options of a ``numba.njit`` / ``njit`` / ``numba.jit`` decorator; None if not jitted."""
    for dec in func.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit"):
            return {k.arg: getattr(k.value, "value", None) for k in getattr(dec, "keywords", [])
                    if k.arg is not None}
    return None


def _called(func: ast.FunctionDef, jitted_here: set[str], py_here: set[str],
            imported: dict[str, str]) -> set[str]:
    """The kernel names ``func`` calls: ``m.name(...)`` by its attribute; a bare ``name(...)``
    when the module defines that kernel or imports it (a Python function of the same name in
    the module is not a kernel)."""
    out = set()
    for c in ast.walk(func):
        if not isinstance(c, ast.Call):
            continue
        if isinstance(c.func, ast.Attribute):
            out.add(c.func.attr)
        elif isinstance(c.func, ast.Name):
            name = c.func.id
            if name in jitted_here and name not in py_here:
                out.add(name)
            elif name in imported:
                out.add(imported[name])
            elif name == "launch_threads":
                out.add(name)
    return out


def _functions():
    """Every function of the package: (where, name, jit options or None, kernels it calls)."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        jitted_here = {n.name for n in defs if _jit(n) is not None}
        py_here = {n.name for n in defs if _jit(n) is None}
        imported = {(a.asname or a.name): a.name for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("hedgerow")
                    for a in n.names}
        for node in defs:
            out.append((f"{path.relative_to(SRC).as_posix()}:{node.name}", node.name, _jit(node),
                        _called(node, jitted_here, py_here, imported)))
    return out


def test_python_callers_of_kernels_that_link_a_parallel_loop_start_the_threads_first():
    funcs = _functions()
    jitted = {name: calls for _, name, opts, calls in funcs if opts is not None}
    linking = {name for _, name, opts, _ in funcs if opts is not None and opts.get("parallel")}
    parallel = set(linking)
    grew = True
    while grew:  # every kernel that reaches a parallel one through kernels
        grew = False
        for name, calls in jitted.items():
            if name not in linking and calls & linking:
                linking.add(name)
                grew = True
    linking -= parallel  # a parallel kernel called from Python carries its own record
    # the scan must see GossipSub's event loop over the parallel score pass
    assert {"_advance", "_advance_churn", "heartbeat_scores"} <= linking, sorted(linking)
    missing = [where for where, _, opts, calls in funcs
               if opts is None and calls & linking and "launch_threads" not in calls]
    assert not missing, missing


PROBE = '''
import numba
import numpy as np

from hedgerow.model.parallel import launch_threads


@numba.njit(cache=True, parallel=True)
def _twice(x):
    out = np.zeros(len(x))
    for i in numba.prange(len(x)):
        out[i] = 2.0 * x[i]
    return out.sum()


@numba.njit(cache=True)
def _caller(x, k):
    return _twice(x) + k


def caller(x, k):
    {launch}
    return _caller(x, k)
'''

STEP = '''
import sys
import numpy as np
import probe
k = 1 if sys.argv[1] == "int" else 0.5
print(probe.caller(np.arange(100.0), k))
'''


def test_a_caller_cached_beside_its_cached_parallel_kernel_runs_in_a_fresh_process(tmp_path):
    # 1. the int kernel compiles both; 2. a new process compiles the float kernel with the
    # parallel one loaded from the cache (an entry without numba's record); 3. a fresh process
    # runs the float kernel first. Without launch_threads() in the Python caller, step 3 dies
    # of a segmentation fault under numba 0.68
    (tmp_path / "probe.py").write_text(textwrap.dedent(PROBE.format(launch="launch_threads()")))
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
