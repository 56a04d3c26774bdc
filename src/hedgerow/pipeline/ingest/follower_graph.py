"""A synthetic directed follower graph with power-law in/out degrees, generated in Spark.

No Twitter follower graph ships with the project (``MANIFEST.md``, "Not
available here").  Vitis §IV-E reports, for its 2.4M-user Twitter sample, in-
and out-degrees "modeled by a power-law distribution with an estimated
parameter of 1.65" and 87.88 followers / followees per user on average
(Vitis Fig. 9).  This job generates a graph with those statistics.

Model (the reading chosen: 1.65 is the exponent ``alpha`` of the degree
density ``p(k) ~ k^-alpha``):

* Degrees follow a continuous power law with exponent ``alpha`` truncated to
  ``[kmin, kmax]``.  ``kmax = max_frac * (n - 1)`` (default 0.15: Twitter's
  largest in-degree, 349,573, is 0.146 of 2.4M users).  An untruncated law
  with ``alpha < 2`` has no mean, so ``kmin`` is solved so the mean is
  ``mean`` (88); when that would need ``kmin < 1`` (large ``n``), ``kmin = 1``
  and ``kmax`` is lowered instead.
* Out-degree of user ``u``: ``floor(k(U1) + U2)`` with ``k`` the quantile
  function and ``U1, U2`` seeded hash uniforms of ``u`` (stochastic rounding
  keeps the mean).
* In-weights: users are ranked by a seeded random permutation and the user of
  rank ``r`` gets the weight ``k(r / n)``; each of ``u``'s out-links picks a
  rank with probability proportional to that weight, by inverting the
  closed-form cumulative weight ``W(p) = integral_0^p k(q) dq`` (no join,
  no search).  Expected in-degrees therefore follow the same truncated law.
* Self-links and repeated links are dropped and re-drawn (up to
  ``max_rounds`` rounds) so out-degrees are met exactly in practice.

Every random number is ``xxhash64`` of (user, slot, round) with seeds derived
from :class:`~hedgerow.model.RngStreams`, so the same seed gives the same graph
on any master and partitioning.  Output: as :mod:`hedgerow.pipeline.ingest.social` (``users/``,
``subscriptions/``, ``ccdf.csv``, ``meta.json``); the measured exponents (a
truncated power-law maximum-likelihood fit) and means are in ``meta.json``.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.pipeline.ingest._common import (
    check_out,
    hash_uniform,
    spark_seed,
    write_outputs,
)
from hedgerow.pipeline.ingest.social import degree_ccdf_frame

VITIS_EXPONENT = 1.65
VITIS_MEAN = 88.0


def truncated_mean(alpha: float, a: float, b: float) -> float:
    """Mean of the continuous power law ``k^-alpha`` on ``[a, b]`` (``1 < alpha < 2``).

    Examples
    --------
    >>> round(truncated_mean(1.65, 1.0, 10_000.0), 1)
    44.9
    """
    s = 1.0 - alpha
    return (s / (1.0 + s)) * (b ** (1.0 + s) - a ** (1.0 + s)) / (b**s - a**s)


def _solve(f, lo: float, hi: float, target: float) -> float:
    """Bisection for an increasing ``f`` with ``f(lo) <= target <= f(hi)``."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def degree_bounds(n: int, alpha: float, mean: float, max_frac: float) -> tuple[float, float]:
    """``(kmin, kmax)`` of the truncated law with the requested mean.

    Examples
    --------
    >>> a, b = degree_bounds(10_000, 1.65, 88.0, 0.15)
    >>> round(truncated_mean(1.65, a, b), 6), round(b)
    (88.0, 1500)
    """
    for name, value in (("exponent", alpha), ("mean", mean), ("max_frac", max_frac)):
        if not math.isfinite(value):
            raise ParameterError(f"{name} must be a finite number, got {value}", key=name)
    if not 1.0 < alpha < 2.0:
        raise ParameterError(f"exponent must be in (1, 2) for this generator, got {alpha}")
    if n < 2:
        raise ParameterError(f"users must be >= 2, got {n}")
    if not 0.0 < max_frac <= 1.0:
        raise ParameterError(f"max_frac must be in (0, 1], got {max_frac}")
    b = max_frac * (n - 1)
    if mean < 1.0 or mean >= b:
        raise ParameterError(
            f"mean {mean} is not reachable with {n} users: it must lie in [1, {b:.1f}) "
            "(max_frac * (users - 1))"
        )
    if truncated_mean(alpha, 1.0, b) >= mean:
        b = _solve(lambda x: truncated_mean(alpha, 1.0, x), 1.0 + 1e-9, b, mean)
        return 1.0, b
    a = _solve(lambda x: truncated_mean(alpha, x, b), 1.0, b * (1 - 1e-12), mean)
    return a, b


def fit_truncated_exponent(
    degrees: np.ndarray, counts: np.ndarray, kmin: float, kmax: float
) -> float:
    """Maximum-likelihood exponent of a continuous power law truncated to ``[kmin, kmax]``.

    Degrees are integers, so the lower bound is ``kmin - 0.5`` (the usual
    continuity correction); only degrees in ``[kmin, kmax]`` are used.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> u = rng.random(200_000)
    >>> a, b, s = 9.5, 1000.0, 1 - 1.65
    >>> k = np.rint((b**s + u * (a**s - b**s)) ** (1 / s))  # integer degrees >= 10
    >>> round(fit_truncated_exponent(k, np.ones_like(k), 10, k.max()), 2)
    1.65
    """
    from scipy.optimize import minimize_scalar

    d = np.asarray(degrees, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    keep = (d >= kmin) & (d <= kmax)
    d, c = d[keep], c[keep]
    lo, hi = max(kmin - 0.5, 1e-9), float(kmax)
    n = c.sum()
    slog = float((c * np.log(d)).sum())

    def nll(alpha: float) -> float:
        s = 1.0 - alpha
        z = (hi**s - lo**s) / s
        return alpha * slog + n * math.log(z)

    return float(minimize_scalar(nll, bounds=(1.01, 4.0), method="bounded").x)


def generate_follower_graph(
    spark,
    *,
    users: int,
    seed: int = 0,
    exponent: float = VITIS_EXPONENT,
    mean: float = VITIS_MEAN,
    max_frac: float = 0.15,
    max_rounds: int = 6,
):
    """Generate the follower graph as a DataFrame of ``(node, topic)`` = (follower, followee).

    Returns
    -------
    subs : pyspark.sql.DataFrame
        Distinct ``node -> topic`` links, no self-links.
    info : dict
        Model parameters (``kmin``, ``kmax``), target and rounds used.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    n = int(users)
    a, b = degree_bounds(n, float(exponent), float(mean), float(max_frac))
    s = 1.0 - float(exponent)
    e = (1.0 + s) / s
    c = a**s - b**s
    mu = truncated_mean(float(exponent), a, b)

    def quantile(p):  # degree of upper-tail fraction p
        return F.pow(F.lit(b**s) + F.lit(c) * p, F.lit(1.0 / s))

    def rank_of(x):  # rank whose cumulative in-weight covers fraction x of the total
        w = x * F.lit(mu)
        p = (F.pow(w * F.lit(c * e) + F.lit(b ** (1.0 + s)), F.lit(1.0 / e)) - F.lit(b**s)) / F.lit(
            c
        )
        return F.least(F.floor(p * F.lit(n)), F.lit(n - 1)).cast("long")

    s_deg = spark_seed(seed, "follower.outdeg")
    s_rnd = spark_seed(seed, "follower.round")
    s_perm = spark_seed(seed, "follower.perm")
    nodes = spark.range(n).withColumnRenamed("id", "node")
    want = nodes.select(
        "node",
        F.floor(
            quantile(hash_uniform(F.col("node"), F.lit(0), seed=s_deg))
            + hash_uniform(F.col("node"), F.lit(1), seed=s_deg)
        )
        .cast("long")
        .alias("want"),
    ).localCheckpoint()
    perm = nodes.select(
        (F.row_number().over(Window.orderBy(hash_uniform(F.col("node"), seed=s_perm), "node")) - 1)
        .cast("long")
        .alias("rank"),
        F.col("node").alias("topic"),
    ).localCheckpoint()
    links = None
    deficit = want.select("node", F.col("want").alias("need"), F.lit(0).cast("long").alias("have"))
    rounds = 0
    for rnd in range(int(max_rounds)):
        rounds = rnd + 1
        slots = deficit.filter(F.col("need") > 0).select(
            "node",
            F.explode(F.sequence(F.col("have"), F.col("have") + F.col("need") - 1)).alias("j"),
        )
        x = hash_uniform(F.col("node"), F.col("j"), F.lit(rnd), seed=s_rnd)
        drawn = slots.select("node", rank_of(x).alias("rank")).join(F.broadcast(perm), "rank")
        drawn = drawn.select("node", "topic").filter(F.col("node") != F.col("topic"))
        links = drawn.distinct() if links is None else links.union(drawn).distinct()
        links = links.localCheckpoint()
        have = links.groupBy("node").agg(F.count("*").alias("have"))
        deficit = (
            want.join(have, "node", "left")
            .select(
                "node",
                (F.col("want") - F.coalesce(F.col("have"), F.lit(0))).alias("need"),
                F.coalesce(F.col("have"), F.lit(0)).cast("long").alias("have"),
            )
            .filter(F.col("need") > 0)
            .localCheckpoint()
        )
        if deficit.count() == 0:
            break
    missing = deficit.agg(F.sum("need")).first()[0] or 0
    target_links = want.agg(F.sum("want")).first()[0] or 0
    info = {
        "model": "truncated power law, rank-inverted in-weights",
        "exponent": float(exponent),
        "mean_target": float(mean),
        "max_frac": float(max_frac),
        "kmin": a,
        "kmax": b,
        "model_mean": mu,
        "out_links_drawn": int(target_links),
        "out_links_unfilled": int(missing),
        "rounds": rounds,
    }
    return links, info


def degree_stats(subs, n: int, kmin: float) -> dict[str, Any]:
    """Means, maxima and fitted exponents of the in- and out-degrees.

    The fit (:func:`fit_truncated_exponent`) uses degrees from
    ``max(2 * ceil(kmin), 10)`` (below that, the Poisson noise of realised
    in-degrees around their expected values flattens the law) up to the largest
    degree observed.
    """
    from pyspark.sql import functions as F

    out: dict[str, Any] = {}
    for kind, col in (("followers", "topic"), ("followees", "node")):
        h = subs.groupBy(col).count().groupBy(F.col("count").alias("k")).count().toPandas()
        deg = h["k"].to_numpy(dtype=np.float64)
        cnt = h["count"].to_numpy(dtype=np.float64)
        lo = max(2 * math.ceil(kmin), 10)
        hi = float(deg.max()) if len(deg) else 1.0
        out[kind] = {
            "mean": float((deg * cnt).sum() / n),
            "max": int(deg.max()) if len(deg) else 0,
            "zero": int(n - cnt.sum()),
            "fit_kmin": lo,
            "fit_kmax": hi,
            "fitted_exponent": fit_truncated_exponent(deg, cnt, lo, hi),
        }
    return out


def ingest_follower_graph(
    spark,
    out: str | os.PathLike,
    *,
    users: int,
    seed: int = 0,
    exponent: float = VITIS_EXPONENT,
    mean: float = VITIS_MEAN,
    max_frac: float = 0.15,
    force: bool = False,
) -> dict[str, Any]:
    """Generate a follower graph and write it as a subscription instance.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    out : str or path-like
        Output folder, written atomically.
    users : int
        Number of users (10K-1M in the papers' range).
    seed : int
        The run's seed; same seed, same graph.
    exponent, mean, max_frac : float
        Degree exponent (1.65), target mean degree (88), largest degree as a
        fraction of ``users - 1`` (0.15).
    force : bool
        Replace an existing non-empty ``out``.

    Returns
    -------
    dict
        The contents of ``meta.json``.

    Examples
    --------
    ``hedgerow ingest follower-graph --users 10000 --seed 1 --out results/tw10k``.
    """
    from pyspark.sql import functions as F

    check_out(out, force)
    t0 = time.perf_counter()
    subs, info = generate_follower_graph(
        spark, users=users, seed=seed, exponent=exponent, mean=mean, max_frac=max_frac
    )
    n = int(users)
    n_links = subs.count()
    stats = degree_stats(subs, n, info["kmin"])
    ccdf = degree_ccdf_frame(subs, n)
    nodes = spark.range(n).select(F.col("id").cast("int").alias("node"))
    tables = {
        "users": nodes.coalesce(1),
        "subscriptions": subs.select(F.col("node").cast("int"), F.col("topic").cast("int"))
        .repartition(1)
        .sortWithinPartitions("node", "topic"),
    }
    meta = {
        "job": "follower-graph",
        "inputs": {},
        "params": {"users": n, "seed": int(seed), **info},
        "counts": {
            "users": n,
            "topics": n,
            "subscriptions": int(n_links),
            "mean_subscriptions": n_links / n,
            **stats,
        },
    }
    return write_outputs(out, force, t0, meta, tables, {"ccdf.csv": ccdf})
