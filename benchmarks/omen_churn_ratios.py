"""OMen's repair cost against OMen-G and LowODA-Re, from the rows of ``hedgerow churn ... --json``.

Each file holds the JSON lines of one run (``hedgerow churn omen --scenario tw10k-google
--events 50 --seed 1 --json > omen.json``, and likewise ``omen-g`` and ``lowoda-re``).
OMen and OMen-G are timed by ``omen_repair_seconds`` (the coordinator's CPU time for the
shadow set and Algorithm 1), the rebuilding LowODA-Re by ``repair_cpu_seconds``.  The
first OMen/OMen-G repair of a process carries numba compilation when the cache is cold,
so statistics are given with and without it.  Ratios use the events all runs share.

Usage: ``python benchmarks/omen_churn_ratios.py --omen omen.json --omen-g omen-g.json
--lowoda-re lowoda-re.json``
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def _rows(path: str) -> tuple[list[dict], dict]:
    rows, summary = [], {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                if r.get("kind") == "summary":
                    summary = r
                else:
                    rows.append(r)
    return rows, summary


def _stats(ms: np.ndarray) -> str:
    if not len(ms):
        return "-"
    return (f"mean {ms.mean():.2f} / median {np.median(ms):.2f} / p90 "
            f"{np.percentile(ms, 90):.2f} / max {ms.max():.2f} ms ({len(ms)} events)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--omen", required=True)
    ap.add_argument("--omen-g")
    ap.add_argument("--lowoda-re")
    a = ap.parse_args()
    runs = {"omen": (a.omen, "omen_repair_seconds"), "omen-g": (a.omen_g, "omen_repair_seconds"),
            "lowoda-re": (a.lowoda_re, "repair_cpu_seconds")}
    ms: dict[str, np.ndarray] = {}
    for name, (path, key) in runs.items():
        if not path:
            continue
        rows, summary = _rows(path)
        ms[name] = np.array([r[key] for r in rows], dtype=np.float64) * 1e3
        print(f"{name}: start {summary.get('start_seconds', float('nan')):.1f} s wall, "
              f"violations {summary.get('violations')}, events {len(rows)}")
        print(f"  {key}: {_stats(ms[name])}")
        if name != "lowoda-re":
            print(f"  without the first event: {_stats(ms[name][1:])}")
    for other in ("lowoda-re", "omen-g"):
        if other not in ms:
            continue
        k = min(len(ms["omen"]), len(ms[other]))
        o, b = ms["omen"][1:k], ms[other][1:k]  # both without the first event
        if not len(o):
            continue
        print(f"omen / {other} over events 2-{k}: mean {o.mean() / b.mean():.3%}, "
              f"median {np.median(o) / np.median(b):.3%}")


if __name__ == "__main__":
    main()
