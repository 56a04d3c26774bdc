"""Goldfish Fig. 3 curves from a ``goldfish-fig3`` sweep: the i-th node's wasted latency.

The paper (section V-C) sorts the 32 adaptive nodes' wasted latencies of each run and draws, for
every rank i, the 25th / median / 75th percentile over the 10 runs, at several epochs, with
Perigee's epoch 99 dashed.  The sweep's rows carry each epoch's sorted per-node values
(``wasted_latency_sorted_ms``); this script turns them into those curves, prints them at a few
ranks and, with ``--png``, draws them (matplotlib).

    hedgerow sweep experiments/goldfish-fig3.yaml --out results/goldfish-fig3
    python benchmarks/goldfish_fig3.py results/goldfish-fig3 [--png fig3.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

EPOCHS = (0, 4, 16, 32, 64, 99)


def load(out: Path) -> pd.DataFrame:
    """The sweep's ``ok`` rows that carry sorted per-node values."""
    files = sorted((out / "rows").glob("*.parquet"))
    if not files:
        raise SystemExit(f"{out}/rows: no parquet rows (run the sweep first)")
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    df = df[(df["status"] == "ok") & df["wasted_latency_sorted_ms"].notna()]
    # a resumed run may leave several attempts: keep the last per run and epoch
    return df.sort_values("finished_at").drop_duplicates(["run_id", "epoch"], keep="last")


def curves(df: pd.DataFrame, label: str, epoch: int) -> np.ndarray:
    """``(3, n)``: 25th / 50th / 75th percentile over runs of the i-th sorted node."""
    sel = df[(df["label"] == label) & (df["epoch"] == epoch)]
    runs = [np.array(s.split(), dtype=float) for s in sel["wasted_latency_sorted_ms"]]
    if not runs:
        return np.empty((3, 0))
    width = min(len(r) for r in runs)
    mat = np.stack([r[:width] for r in runs])
    return np.percentile(mat, [25, 50, 75], axis=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the sweep's output directory")
    ap.add_argument("--png", type=Path, help="draw the curves into this file")
    a = ap.parse_args()
    df = load(a.out)
    labels = list(dict.fromkeys(df["label"]))
    ranks = (1, 8, 16, 24, 32)
    print(f"runs per label: {df.groupby('label')['seed'].nunique().to_dict()}")
    print("median over runs of the i-th node's wasted latency (ms), [25th-75th]")
    print("label     epoch " + " ".join(f"{'i=' + str(r):>16}" for r in ranks))
    for lab in labels:
        for e in EPOCHS:
            c = curves(df, lab, e)
            if not c.shape[1]:
                continue
            cells = [f"{c[1, r - 1]:5.0f} [{c[0, r - 1]:3.0f}-{c[2, r - 1]:3.0f}]"
                     if r <= c.shape[1] else " " * 16 for r in ranks]
            print(f"{lab:9} {e:5d} " + " ".join(f"{s:>16}" for s in cells))
    if a.png:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for e in EPOCHS:
            c = curves(df, "goldfish", e)
            if c.shape[1]:
                x = np.arange(1, c.shape[1] + 1)
                ax.plot(x, c[1], label=f"goldfish epoch {e}")
                ax.fill_between(x, c[0], c[2], alpha=0.15)
        c = curves(df, "perigee", EPOCHS[-1])
        if c.shape[1]:
            ax.plot(np.arange(1, c.shape[1] + 1), c[1], "k--", label=f"perigee epoch {EPOCHS[-1]}")
        ax.set_xlabel("adaptive node (sorted)")
        ax.set_ylabel("wasted latency at 90% (ms)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.png, dpi=120)
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
