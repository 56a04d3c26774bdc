"""The command-line fuzzer's long run: many drawn cases, each one to three invalid values.

Every command and option of the click definitions (``tests/cli/_fuzz.py``, whose
CI profile runs in the test suite) with invalid values drawn from a seeded
``numpy.random.Generator``; a case sets one to three options of one command at
once.  Each case must answer with one ``error:`` line, exit 2, no traceback and
no file left behind.  Prints the space, the cases run, their rate and every
problem found; exits 1 when there is one.

    python benchmarks/fuzz_cli.py --cases 20000 --seed 0

Measured on this tree: 21 commands, 194 options and arguments, 1,470 invalid values (a text
input of every ingest job in each other job's format, and a spec naming an unknown metric,
among them); 20,000 cases (seed 0) in 44 s and 40,000 cases (seed 1) in 66 s with a load of 13
to 16 on two cores beside them, 0 problems in either (before those cases: 1,439 values, 20,000
cases in 9 to 33 s and 100,000 cases (seed 1) in 56 to 65 s, 0 problems).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _load_fuzz():
    path = HERE.parent / "tests" / "cli" / "_fuzz.py"
    spec = importlib.util.spec_from_file_location("hedgerow_fuzz", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hedgerow_fuzz"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-changes", type=int, default=3)
    args = ap.parse_args()
    os.environ.setdefault("MPLBACKEND", "Agg")
    fz = _load_fuzz()
    space = fz.build_space()
    commands, options, values = space.count()
    print(f"space: {commands} commands, {options} options and arguments, {values} invalid "
          "values")
    rng = np.random.default_rng(args.seed)
    keys = sorted(c for c, opts in space.cases.items() if opts)
    problems: list[str] = []
    per_command = collections.Counter()
    with tempfile.TemporaryDirectory() as d:
        fx, tmp = Path(d) / "fx", Path(d) / "case"
        fz.make_fixtures(fx)
        t0 = time.perf_counter()
        for i in range(args.cases):
            command = keys[rng.integers(len(keys))]
            opts = sorted(space.cases[command])
            k = int(rng.integers(1, min(args.max_changes, len(opts)) + 1))
            chosen = rng.choice(len(opts), size=k, replace=False)
            changes = []
            for j in chosen:
                vals = space.cases[command][opts[j]]
                changes.append((opts[j], vals[rng.integers(len(vals))]))
            argv = fz.argv_with(command, changes, tmp, fx)
            out = fz.run_case(argv, tmp)
            per_command[command] += 1
            if out.problem is not None:
                problems.append(f"hedgerow {' '.join(argv)}: {out.problem}")
            if (i + 1) % 5000 == 0:
                print(f"  {i + 1} cases, {len(problems)} problems, "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
        took = time.perf_counter() - t0
    print(f"cases: {sum(per_command.values())} over {len(per_command)} commands in {took:.0f} s "
          f"({sum(per_command.values()) / took:.0f} per s); problems: {len(problems)}")
    for p in problems[:50]:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
