"""Latency models from real measurements: WonderNetwork cities, the Perigee matrix, files.

* :func:`cities` — the 246-server WonderNetwork capture of 2020-07-19/20 that
  Topiary (section V-A) and Goldfish use ("a dataset on global ping statistics
  over the Internet ... from WonderNetwork").  ``shared/data/MANIFEST.md``
  section 1.
* :func:`perigee_matrix` — the 1000-node iPlane-derived one-way matrix of
  Perigee (PODC 2020), ``MANIFEST.md`` section 6.
* :func:`from_matrix_file` — any square matrix file (whitespace or CSV,
  optionally gzipped, optionally preceded by a line holding ``N``).

The city matrix is built in three documented steps so that another
implementation (the Spark ingest) can be checked against it:
:func:`symmetrise_pings` (one-way = RTT/2, mean of both directions) and
:func:`fill_missing_one_hop` (the fill rule for the 28 unmeasured pairs).
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hedgerow.data import data_path
from hedgerow.errors import DataError, ParameterError
from hedgerow.latency.model import MAX_DENSE_BYTES, LatencyModel

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

WONDERNETWORK_DIR = "wondernetwork-pings-2020-07-19"
SERVERS_FILE = "servers-2020-07-19.csv"
PINGS_FILE = "pings-2020-07-19-2020-07-20-grouped.csv"
PERIGEE_DIR = "perigee-latency-weight1"
PERIGEE_FILE = "perigee_latencies_weight1_oneway.dat.gz"

#: Server ids that appear in the pings but have no server row (MANIFEST section 1).
UNKNOWN_SERVER_IDS = (292, 293, 294, 295)


# --------------------------------------------------------------------- the fill rule
def symmetrise_pings(
    src: np.ndarray, dst: np.ndarray, rtt_ms: np.ndarray, n: int, *, one_way: bool = True
) -> np.ndarray:
    """Symmetric ``(n, n)`` delay matrix from ordered ping aggregates; NaN where unmeasured.

    Each ordered pair ``(src, dst)`` (node indices ``0..n-1``) carries an RTT.
    The delay is ``rtt / 2`` (``one_way=True``) or the RTT itself.  The entry
    for ``{a, b}`` is the mean of both directions when both were measured, the
    one measured direction otherwise, and NaN when neither was.  Self pairs
    are dropped and the diagonal is 0.  Duplicate rows for one ordered pair
    are averaged first.

    Examples
    --------
    >>> import numpy as np
    >>> src, dst = np.array([0, 1, 0]), np.array([1, 0, 2])
    >>> m = symmetrise_pings(src, dst, np.array([10.0, 12.0, 8.0]), 3)
    >>> m.tolist()
    [[0.0, 5.5, 4.0], [5.5, 0.0, nan], [4.0, nan, 0.0]]
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    val = np.asarray(rtt_ms, dtype=np.float64) / (2.0 if one_way else 1.0)
    keep = src != dst
    src, dst, val = src[keep], dst[keep], val[keep]
    total = np.zeros((n, n))
    count = np.zeros((n, n))
    np.add.at(total, (src, dst), val)
    np.add.at(count, (src, dst), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        directed = total / count  # NaN where unmeasured
    fwd, back = directed, directed.T
    out = np.where(np.isnan(fwd), back, np.where(np.isnan(back), fwd, (fwd + back) / 2.0))
    np.fill_diagonal(out, 0.0)
    return out


def fill_missing_one_hop(delays: np.ndarray) -> tuple[np.ndarray, int]:
    """Fill unmeasured (NaN) pairs with the fastest relay through one measured third node.

    ``d(i, j) = min over k of d(i, k) + d(k, j)``, taken over the nodes ``k``
    for which both legs were measured.  The input must be symmetric with a
    zero diagonal; the result is symmetric.  Every filled value depends only
    on measured values (never on another filled one), so the rule is
    order-independent and can be reproduced by a single self-join in Spark.

    Why this rule: on the WonderNetwork capture, predicting every *measured*
    pair this way (excluding the direct measurement) has a median relative
    error of 6.7 % (mean absolute error 8.5 ms), against 22 % (16.9 ms) for a
    great-circle-distance regression fitted on all measured pairs.  Internet
    delays violate the triangle inequality often (78 % of measured pairs have
    a faster one-hop relay), so the rule slightly underestimates (by 7.6 ms on
    average), which we accept for 28 of 30,135 pairs.

    Returns
    -------
    filled : numpy.ndarray
        The completed matrix.
    n_filled : int
        Number of unordered pairs that were filled.

    Raises
    ------
    DataError
        When a pair has no third node with both legs measured.

    Examples
    --------
    >>> import numpy as np
    >>> nan = np.nan
    >>> d = np.array([[0, 1, nan, 4], [1, 0, 2, nan], [nan, 2, 0, 1], [4, nan, 1, 0]])
    >>> full, k = fill_missing_one_hop(d)
    >>> float(full[0, 2]), float(full[1, 3]), k
    (3.0, 3.0, 2)
    """
    d = np.array(delays, dtype=np.float64)
    n = d.shape[0]
    missing = np.argwhere(np.triu(np.isnan(d), k=1))
    measured = np.where(np.isnan(d), np.inf, d)
    for i, j in missing:
        legs = measured[i] + measured[:, j]
        legs[[i, j]] = np.inf
        best = legs.min() if n > 2 else np.inf
        if not np.isfinite(best):
            raise DataError(f"latency pair ({i}, {j}) is unmeasured and has no measured relay")
        d[i, j] = d[j, i] = best
    return d, len(missing)


# --------------------------------------------------------------------- WonderNetwork
def _read_csv(path: Path, **kw) -> pd.DataFrame:
    # pandas only reads the raw data files: importing it here keeps ``import hedgerow.latency``
    # (and every command that does not read a data set) about 60 MiB lighter
    import pandas as pd

    try:
        # round_trip: correctly rounded floats on every pandas version, as Spark's CSV reader
        return pd.read_csv(path, float_precision="round_trip", **kw)
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: cannot parse CSV ({exc})") from exc


def cities(
    n_nodes: int | None = None,
    rng: np.random.Generator | None = None,
    *,
    one_way: bool = True,
    complete_only: bool = False,
    servers_file: str | Path | None = None,
    pings_file: str | Path | None = None,
) -> LatencyModel:
    """The WonderNetwork 246-city network (Topiary section V-A, second network model).

    Steps: read the servers (id, name, latitude, longitude) and the grouped
    pings (``source,destination,min,avg,max,mdev``); keep rows whose two ids
    have a server row (this drops ids 292-295) and are distinct; use ``avg``
    RTT; one-way = RTT / 2 and symmetrise (:func:`symmetrise_pings`); fill the
    28 unmeasured pairs with :func:`fill_missing_one_hop`.  Nodes are the
    servers sorted by id; ``labels`` are the server names, ``coords`` their
    (latitude, longitude), ``info["server_ids"]`` the ids.

    Measured one-way delays run from 0.34 to 262.3 ms (median 69 ms); every
    filled value lies inside that range.

    Parameters
    ----------
    n_nodes : int, optional
        All 246 cities when ``None`` or 246; fewer draws that many cities
        uniformly without replacement with ``rng`` (kept in id order);
        more is a :class:`~hedgerow.errors.ParameterError`.
    rng : numpy.random.Generator, optional
        Needed only to draw a subset.
    one_way : bool, default True
        Halve RTTs (one-way delays).  ``False`` keeps RTTs, as the Goldfish
        code (``bx3/goldfish`` ``gen-real-topo.py``) does.
    complete_only : bool, default False
        Drop cities until every remaining pair is measured (no one-hop fill):
        repeatedly the city with the most unmeasured pairs (the highest id on
        ties), as the Goldfish authors keep only cities with complete data
        before drawing their 100.
    servers_file, pings_file : path, optional
        Other copies of the two files (default: the shipped data set).

    Examples
    --------
    >>> m = cities()
    >>> m.n_nodes, m.labels[1], m.info["n_filled_pairs"]
    (246, 'Melbourne', 28)
    """
    import pandas as pd  # only to read the raw files (see _read_csv)

    spath = Path(servers_file) if servers_file else data_path(WONDERNETWORK_DIR, SERVERS_FILE)
    ppath = Path(pings_file) if pings_file else data_path(WONDERNETWORK_DIR, PINGS_FILE)
    for p in (spath, ppath):
        if not p.exists():
            raise DataError(f"data file missing: {p}")
    servers = _read_csv(spath, usecols=lambda c: c in {"id", "name", "latitude", "longitude"})
    need = {"id", "name", "latitude", "longitude"}
    if not need <= set(servers.columns):
        raise DataError(f"{spath}: line 1: header lacks {sorted(need - set(servers.columns))}")
    if servers["id"].duplicated().any():
        dup = int(servers.loc[servers["id"].duplicated(), "id"].iloc[0])
        raise DataError(f"{spath}: server id {dup} appears twice")
    servers = servers.sort_values("id").reset_index(drop=True)
    pings = _read_csv(ppath)
    need_p = {"source", "destination", "avg"}
    if not need_p <= set(pings.columns):
        raise DataError(f"{ppath}: line 1: header lacks {sorted(need_p - set(pings.columns))}")
    bad = pings["avg"].isna() | ~np.isfinite(pd.to_numeric(pings["avg"], errors="coerce"))
    if bad.any():
        raise DataError(f"{ppath}: line {int(np.argmax(bad.to_numpy())) + 2}: avg is not a number")
    ids = servers["id"].to_numpy(dtype=np.int64)
    index_of = pd.Series(np.arange(len(ids)), index=ids)
    known = pings["source"].isin(ids) & pings["destination"].isin(ids)
    p = pings[known]
    src = index_of.loc[p["source"].to_numpy()].to_numpy()
    dst = index_of.loc[p["destination"].to_numpy()].to_numpy()
    sym = symmetrise_pings(src, dst, p["avg"].to_numpy(dtype=np.float64), len(ids), one_way=one_way)
    labels = servers["name"].astype(str).tolist()
    coords = servers[["latitude", "longitude"]].to_numpy(dtype=np.float64)
    n_dropped_cities = 0
    if complete_only:
        keep = complete_cities(sym)
        n_dropped_cities = len(ids) - len(keep)
        sym = sym[np.ix_(keep, keep)]
        ids, coords = ids[keep], coords[keep]
        labels = [labels[i] for i in keep]
    full, n_filled = fill_missing_one_hop(sym)
    info = {
        "source": "WonderNetwork pings 2020-07-19/20 (grouped), avg RTT",
        "one_way": bool(one_way),
        "server_ids": ids.tolist(),
        "n_dropped_rows": int((~known).sum()),
        "n_measured_pairs": int(np.count_nonzero(~np.isnan(sym[np.triu_indices(len(ids), 1)]))),
        "n_filled_pairs": int(n_filled),
        "fill_rule": "one-hop relay (fill_missing_one_hop)",
        "complete_only": bool(complete_only),
        "n_dropped_cities": int(n_dropped_cities),
    }
    model = LatencyModel(
        len(ids), name="cities", matrix=full, labels=labels, coords=coords, info=info
    )
    return _maybe_subset(model, n_nodes, rng)


def complete_cities(sym: np.ndarray) -> np.ndarray:
    """Indices of the cities kept so that every pair among them is measured.

    ``sym`` is a symmetric matrix with ``nan`` for unmeasured pairs (diagonal
    ignored).  Repeatedly drops the city with the most unmeasured pairs among
    the remaining ones (the highest index on ties).

    Examples
    --------
    >>> nan = float("nan")
    >>> m = np.array([[0, 1, nan, 2], [1, 0, 3, nan], [nan, 3, 0, 4], [2, nan, 4, 0.]])
    >>> complete_cities(m).tolist()
    [0, 1]
    """
    miss = np.isnan(np.asarray(sym, dtype=np.float64))
    np.fill_diagonal(miss, False)
    alive = np.ones(len(miss), dtype=bool)
    count = miss.sum(axis=1)
    while count[alive].max(initial=0) > 0:
        worst = np.flatnonzero(alive & (count == count[alive].max()))[-1]
        alive[worst] = False
        count -= miss[:, worst]
        count[worst] = 0
    return np.flatnonzero(alive)


def cities_placed(
    n_nodes: int, rng: np.random.Generator | None, *, local_ms: float = 1.0
) -> LatencyModel:
    """``n_nodes`` nodes placed on the 246 WonderNetwork cities (:func:`cities`, one-way).

    Each node's city is drawn uniformly with ``rng``; two nodes in different
    cities are the cities' one-way delay apart, two nodes in one city
    ``local_ms`` apart (default 1 ms, above the smallest measured one-way
    delay between two servers, 0.34 ms).  ``labels`` are the cities' names
    and ``info["city"]`` each node's city index.  Up to
    :data:`~hedgerow.latency.model.MAX_DENSE_BYTES` of pairs (16,384 nodes)
    the model is a dense matrix (8 bytes per pair of nodes); above, the same
    delays are kept as each node's city and the cities' matrix (kind
    ``groups``), so 100,000 nodes need 0.8 MB instead of 80 GB.

    Examples
    --------
    >>> import numpy as np
    >>> m = cities_placed(1000, np.random.default_rng(1))
    >>> m.n_nodes, len(set(m.labels)) > 200, float(m.matrix().min()), m.name
    (1000, True, 0.0, 'cities-placed')
    """
    n = int(n_nodes)
    if n < 1:
        raise ParameterError(f"cities-placed needs at least one node, got n_nodes={n_nodes}")
    if rng is None:
        raise ParameterError("cities-placed draws each node's city: it needs an rng")
    local = float(local_ms)
    if not (np.isfinite(local) and local >= 0):
        raise ParameterError(f"local_ms must be finite and non-negative, got {local_ms!r}")
    base = cities()
    city = rng.integers(0, base.n_nodes, size=n)
    assert base.labels is not None and base.coords is not None
    common: dict[str, Any] = {
        "name": "cities-placed",
        "labels": [base.labels[c] for c in city],
        "coords": base.coords[city],
        "info": {**base.info, "city": city.tolist(), "local_ms": local},
    }
    if float(n) * n * 8 > MAX_DENSE_BYTES:  # each node's city and the cities' delays
        between = base.matrix().copy()
        np.fill_diagonal(between, local)
        return LatencyModel(n, group=city, group_matrix=between, **common)
    m = base.matrix()[np.ix_(city, city)].copy()
    m[city[:, None] == city[None, :]] = local
    return LatencyModel(n, matrix=m, **common)


def _maybe_subset(
    model: LatencyModel, n_nodes: int | None, rng: np.random.Generator | None
) -> LatencyModel:
    if n_nodes is None or int(n_nodes) == model.n_nodes:
        return model
    n = int(n_nodes)
    if n < 1 or n > model.n_nodes:
        raise ParameterError(
            f"n_nodes={n_nodes}: the {model.name} latency model has {model.n_nodes} nodes"
        )
    if rng is None:
        raise ParameterError(f"drawing {n} of {model.n_nodes} {model.name} nodes needs an rng")
    pick = np.sort(rng.choice(model.n_nodes, size=n, replace=False))
    sub = model.subset(pick)
    sub.info["subset_nodes"] = pick.tolist()
    return sub


# --------------------------------------------------------------------- matrix files
def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise DataError(f"data file missing: {path}") from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc})") from exc
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(f"{path}: corrupt gzip data ({exc})") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc})") from exc


def read_matrix_file(path: str | Path) -> np.ndarray:
    """Parse a square matrix file into a float64 array (no validation of the values' meaning).

    Format: one row per line, values separated by whitespace or commas; blank
    lines and lines starting with ``#`` are skipped; an optional first line
    holding a single integer ``N`` announces the size (Perigee's format);
    gzip is detected from the content.  Any malformed line raises
    :class:`~hedgerow.errors.DataError` naming the file and the 1-based line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.txt"
    >>> _ = p.write_text("2\\n0 3\\n3 0\\n")
    >>> read_matrix_file(p).tolist()
    [[0.0, 3.0], [3.0, 0.0]]
    """
    path = Path(path)
    text = _open_text(path)
    rows: list[np.ndarray] = []
    lines: list[int] = []
    declared: int | None = None
    declared_line = 0
    for lineno, line in enumerate(io.StringIO(text), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if "," in s:
            tokens = [t.strip() for t in s.split(",")]
            if "" in tokens:
                col = tokens.index("") + 1
                raise DataError(f"{path}: line {lineno}: empty value in column {col}")
        else:
            tokens = s.split()
        if declared is None and not rows and len(tokens) == 1 and "." not in tokens[0]:
            # a lone integer on the first data line is the size header when more lines follow
            try:
                declared = int(tokens[0])
                declared_line = lineno
                continue
            except ValueError:
                pass
        try:
            row = np.array(tokens, dtype=np.float64)
        except ValueError:
            bad = next(t for t in tokens if not _is_float(t))
            raise DataError(f"{path}: line {lineno}: {bad!r} is not a number") from None
        rows.append(row)
        lines.append(lineno)
    if declared is not None and not rows:
        # the lone integer was the whole (1x1) matrix
        rows, lines, declared = [np.array([float(declared)])], [declared_line], None
    if not rows:
        raise DataError(f"{path}: no matrix rows found")
    n = len(rows[0]) if declared is None else declared
    if declared is not None and declared < 1:
        raise DataError(
            f"{path}: line {declared_line}: matrix size must be positive, got {declared}"
        )
    for row, lineno in zip(rows, lines, strict=True):
        if len(row) != n:
            raise DataError(f"{path}: line {lineno}: expected {n} values, found {len(row)}")
    if len(rows) != n:
        where = lines[n] if len(rows) > n else lines[-1]
        raise DataError(f"{path}: line {where}: a square matrix needs {n} rows, found {len(rows)}")
    return np.vstack(rows)


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def from_matrix_file(path: str | Path, *, name: str | None = None) -> LatencyModel:
    """A matrix latency model from a file of one-way delays in ms (see :func:`read_matrix_file`).

    Values must be finite and non-negative; the diagonal is taken as 0.  The
    matrix need not be symmetric (``delay(u, v)`` reads row ``u``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
    >>> _ = p.write_text("0,10,20\\n10,0,5\\n20,5,0\\n")
    >>> m = from_matrix_file(p)
    >>> m.n_nodes, float(m.delay(1, 2))
    (3, 5.0)
    """
    path = Path(path)
    m = read_matrix_file(path)
    bad = ~np.isfinite(m) | (m < 0)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(
            f"{path}: matrix row {r + 1}, column {c + 1}: delay {m[r, c]!r} is not a finite "
            "non-negative number"
        )
    return LatencyModel(
        m.shape[0], name=name or f"file:{path}", matrix=m, info={"source": str(path)}
    )


def perigee_matrix(
    n_nodes: int | None = None, rng: np.random.Generator | None = None
) -> LatencyModel:
    """The Perigee 1000-node one-way latency matrix (ms; symmetric, 5 ms steps, max 985 ms).

    ``n_nodes`` below 1000 draws a uniform subset with ``rng`` (kept in index
    order), as for :func:`cities`.

    Examples
    --------
    >>> m = perigee_matrix()
    >>> m.n_nodes, m.is_symmetric()
    (1000, True)
    """
    path = data_path(PERIGEE_DIR, PERIGEE_FILE)
    model = from_matrix_file(path, name="perigee")
    model.info["source"] = (
        "Perigee (PODC 2020) weight1 one-way matrix via evangelos-kolyvas/blocknet"
    )
    return _maybe_subset(model, n_nodes, rng)
