"""Shared machinery of the ingest jobs: numbered lines, first-error reports, atomic outputs.

Every job reads its text inputs through :func:`read_lines`, which tags each
line with ``monotonically_increasing_id`` at the scan (increasing in file
order).  Parsing adds an ``_err`` column (``NULL`` on good lines);
:func:`raise_first_error` finds the first bad line in one pass, turns its id
into a 1-based line number by counting the lines before it, and raises one
:class:`~hedgerow.errors.DataError` naming file and line.  Outputs are written
into a temporary sibling folder and renamed into place only when every part is
written (:func:`atomic_output`).

Before a JVM starts, :func:`check_head` reads the first lines of a user's text
input in Python with the job's declared :class:`LineFormat` (the same field
specs the Spark parse uses), so a file in the wrong format is one
``FILE, line N: ...`` error in a second, not a Spark job.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import shutil
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hedgerow.errors import DataError, ParameterError
from hedgerow.model import RngStreams

#: Regular expression of an integer field (Spark ``rlike`` syntax).
INT_RE = r"^[+-]?[0-9]+$"
#: Regular expression of a finite decimal number (no ``NaN``/``Infinity``).
FLOAT_RE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


#: the field specs of a line: ``(name, kind, allow_empty)``, kind ``"int"``, ``"float"``, ``"str"``
FieldSpecs = tuple[tuple[str, str, bool], ...]

#: lines of a user's input :func:`check_head` reads before a JVM starts
HEAD_LINES = 1000


@dataclass(frozen=True)
class LineFormat:
    """The declared format of a text input's lines, read by Spark and by :func:`check_head`.

    Attributes
    ----------
    what : str
        What the file is, for the messages (``"edge list"``).
    shape : str
        One line as a user writes it (``"u v"``), named in the pre-check's message.
    sep : str
        ``","`` (split the line as it is) or ``"space"`` (split the trimmed line on white
        space).
    specs : tuple
        ``(name, kind, allow_empty)`` per checked field (:func:`field_checks`).
    expected : int or None
        The exact number of fields; ``None``: at least ``len(specs)``; ``0``: as many as the
        header has.
    header : tuple of str
        The names a CSV header on line 1 starts with (empty: no header).
    comments : bool
        Whether blank lines and lines starting with ``#`` or ``%`` are skipped (otherwise
        only blank lines).
    extra : callable or None
        ``fields -> message or None``: the job's own rule on a line whose fields are well
        formed (a Spark job states the same rule as a column expression).
    """

    what: str
    shape: str
    sep: str
    specs: FieldSpecs
    expected: int | None
    header: tuple[str, ...] = ()
    comments: bool = False
    extra: Callable[[list[str]], str | None] | None = None

    def split(self, line: str) -> list[str]:
        """The fields of one line, split as the Spark job splits it.

        Examples
        --------
        >>> LineFormat("x", "a b", "space", (), None).split("  1\\t2 ")
        ['1', '2']
        >>> LineFormat("x", "a,b", ",", (), 2).split("1,2,")
        ['1', '2', '']
        """
        if self.sep == ",":
            return line.split(",")
        return re.split(r"\s+", line.strip(" "))


def _trim(v: str) -> str:
    return v.strip(" ")  # Spark's trim: spaces only


def field_error(fields: list[str], specs: FieldSpecs, expected: int | None) -> str | None:
    """The first problem of a split line, as :func:`field_checks` states it in Spark, or ``None``.

    Examples
    --------
    >>> specs = (("u", "int", False), ("v", "int", False))
    >>> field_error(["1", "2"], specs, 2) is None
    True
    >>> field_error(["1", "2", "3"], specs, 2)
    'expected 2 columns, found 3'
    >>> field_error(["1", "x"], specs, 2)
    "column 2 (v) is not an integer: 'x'"
    >>> field_error(["1", "99999999999999999999"], specs, 2)
    'column 2 (v) is out of range'
    """
    n = len(fields)
    if expected is not None and n != expected:
        return f"expected {expected} columns, found {n}"
    if expected is None and n < len(specs):
        return f"expected at least {len(specs)} columns, found {n}"
    for i, (name, kind, allow_empty) in enumerate(specs):
        if kind == "str":
            continue
        v = _trim(fields[i])
        pattern = INT_RE if kind == "int" else FLOAT_RE
        if not re.fullmatch(pattern[1:-1], v):
            if allow_empty and v == "":
                continue
            word = "an integer" if kind == "int" else "a number"
            return f"column {i + 1} ({name}) is not {word}: '{v}'"
        if kind == "int" and not -(2**63) <= int(v) < 2**63:
            return f"column {i + 1} ({name}) is out of range"
    return None


def head_lines(p: Path, limit: int) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the first ``limit`` lines of a plain or gzip text file."""
    with open(p, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    stream: Any = gzip.open(p, "rb") if gz else open(p, "rb")
    with stream, io.TextIOWrapper(stream, encoding="utf-8", errors="replace",
                                  newline=None) as text:
        n = 0
        while n < limit:
            try:
                line = text.readline()
            except (EOFError, OSError, zlib.error):
                raise DataError(f"{p}, line {n + 1}: gzip stream is truncated or corrupt "
                                f"(the file breaks off after {n} complete lines)") from None
            if not line:
                return
            n += 1
            yield n, line.rstrip("\n")


def check_head(path: str | os.PathLike, fmt: LineFormat, limit: int = HEAD_LINES) -> None:
    """Check the first ``limit`` lines of a local text input against its declared format.

    Runs in Python before a JVM starts; the Spark job checks every line again.
    A remote URL is left to the job.

    Raises
    ------
    DataError
        ``FILE, line N: PROBLEM in the WHAT file: 'LINE'; each line is 'SHAPE'``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "edges.txt"
    >>> _ = f.write_text("# a comment\\n0 1\\n1 2 3\\n")
    >>> fmt = LineFormat("edge list", "u v", "space", (("u", "int", False),
    ...                  ("v", "int", False)), 2, comments=True)
    >>> check_head(f, fmt)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hedgerow.errors.DataError: ...edges.txt, line 3: expected 2 columns, found 3 in the edge ...
    """
    p = local_path(path)
    if p is None:
        return
    from hedgerow.userfiles import reading

    expected = fmt.expected
    with reading(p, f"{fmt.what} file"):
        for no, line in head_lines(p, limit):
            if no == 1 and fmt.header:
                header = line.strip().split(",")
                if header[: len(fmt.header)] != list(fmt.header):
                    raise DataError(f"{p}, line 1: the {fmt.what} header must start with "
                                    f"{','.join(fmt.header)}, found {','.join(header)!r}")
                if expected == 0:
                    expected = len(header)
                continue
            text = _trim(line)
            if text == "" or (fmt.comments and text.startswith(("#", "%"))):
                continue
            fields = fmt.split(line)
            err = field_error(fields, fmt.specs, expected)
            if err is None and fmt.extra is not None:
                err = fmt.extra(fields)
            if err is not None:
                shown = line if len(line) <= 80 else line[:77] + "..."
                raise DataError(f"{p}, line {no}: {err} in the {fmt.what} file: {shown!r}; "
                                f"each line is '{fmt.shape}'")


def spark_seed(seed: int, name: str) -> int:
    """A non-negative 31-bit integer seed for a Spark function, derived from ``seed``.

    Parameters
    ----------
    seed : int
        The run's seed.
    name : str
        The consumer's stream name; distinct names give independent seeds.

    Returns
    -------
    int
        ``RngStreams(seed).stream(name)`` drawn once in ``[0, 2**31 - 1)``.

    Examples
    --------
    >>> spark_seed(7, "social.seeds") == spark_seed(7, "social.seeds")
    True
    >>> spark_seed(7, "social.seeds") != spark_seed(7, "social.levels")
    True
    """
    return int(RngStreams(seed).stream(name).integers(0, 2**31 - 1))


def hash_uniform(*cols: Any, seed: int):
    """A uniform ``[0, 1)`` double computed from ``cols`` and ``seed`` by ``xxhash64``.

    Unlike ``rand(seed)`` it does not depend on partitioning, so a job gives the
    same numbers on ``local[2]`` and on a cluster.

    Parameters
    ----------
    *cols : Column or str
        The values the number is a function of (e.g. a node id).
    seed : int
        An integer seed from :func:`spark_seed`.

    Returns
    -------
    pyspark.sql.Column
        A double column in ``[0, 1)`` (53 random bits).
    """
    from pyspark.sql import functions as F

    h = F.xxhash64(*cols, F.lit(int(seed)))
    return F.shiftrightunsigned(h, 11).cast("double") / float(2**53)


def hash_sample(df, col: str, k: int, seed: int, name: str):
    """``k`` rows of ``df`` drawn uniformly: the first ``k`` in a seeded hash order of ``col``.

    The order is :func:`hash_uniform` of ``col`` under ``spark_seed(seed,
    name)``, ties broken by ``col`` itself, so the sample is the same on any
    master and partitioning.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The rows to sample from.
    col : str
        A column identifying the rows (a node or user id, a line tag).
    k : int
        How many rows to keep.
    seed : int
        The run's seed.
    name : str
        The consumer's stream name (distinct draws, distinct names).

    Returns
    -------
    pyspark.sql.DataFrame
        At most ``k`` rows of ``df``.
    """
    from pyspark.sql import functions as F

    return df.orderBy(hash_uniform(F.col(col), seed=spark_seed(seed, name)), col).limit(k)


def local_path(path: str | os.PathLike) -> Path | None:
    """The local filesystem path of ``path``, or ``None`` for a remote URL (``hdfs://`` ...)."""
    s = str(path)
    if s.startswith("file://"):
        return Path(s[len("file://") :])
    if "://" in s:
        return None
    return Path(s)


def require_input(path: str | os.PathLike, what: str) -> str:
    """Check that a local input exists; returns the path as a string for Spark.

    Raises
    ------
    DataError
        When a local path does not exist (remote URLs are checked by Spark).
    """
    if not str(path).strip():
        raise DataError(f"{what}: empty path")
    p = local_path(path)
    if p is not None:
        if not p.is_file():
            raise DataError(f"{what} file missing: {p}")
        _check_text(p, what)
        return str(p.resolve())
    return str(path)


def _check_text(p: Path, what: str) -> None:
    """An input the jobs read as text: readable, not empty, and text (gzip or plain UTF-8)
    in its first bytes; checked before a JVM starts."""
    from hedgerow.userfiles import reading

    with reading(p, f"{what} file"), open(p, "rb") as fh:
        head = fh.read(65536)
    if not head:
        raise DataError(f"{what} {p}: the file is empty")
    if head[:2] == b"\x1f\x8b":  # gzip: the jobs check its lines
        return
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not only a character cut at the 64 KiB boundary
            raise DataError(f"{what} {p}: not a text table (byte {e.start} is not UTF-8)"
                            ) from None


def _gzip_break_line(path: Path) -> int | None:
    """Number of complete lines readable before a gzip stream breaks (``None`` if it does not)."""
    n = 0
    try:
        with gzip.open(path, "rb") as fh:
            for _ in fh:
                n += 1
    except (EOFError, OSError, zlib.error):
        return n
    return None


def read_failure(path: str, err: Exception) -> DataError:
    """Translate a Spark read failure into one :class:`DataError` naming file and line."""
    p = local_path(path)
    if p is not None and p.suffix == ".gz":
        good = _gzip_break_line(p)
        if good is not None:
            return DataError(
                f"{p}, line {good + 1}: gzip stream is truncated or corrupt "
                f"(the file breaks off after {good} complete lines)"
            )
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return DataError(f"{path}: cannot be read ({text})")


@contextlib.contextmanager
def quiet_spark(spark) -> Iterator[None]:
    """Silence Spark's log4j output (task failure traces) for the duration of the block."""
    sc = spark.sparkContext
    sc.setLogLevel("OFF")
    try:
        yield
    finally:
        sc.setLogLevel("ERROR")


def read_lines(spark, path: str | os.PathLike, what: str):
    """The lines of a text file (plain or ``.gz``) as ``(_mid, value)``, read lazily by Spark.

    ``_mid`` is ``monotonically_increasing_id()`` taken right at the scan, so it
    increases in file order (partition index in the upper bits, row index in the
    lower 33); :func:`raise_first_error` turns it into a 1-based line number only
    when a line is bad.  No Spark action runs here.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session.
    path : str or path-like
        The input file.
    what : str
        What the file is, for the messages (``"pings"``, ``"edge list"`` ...).

    Returns
    -------
    pyspark.sql.DataFrame
        Columns ``_mid`` (long, increasing in file order) and ``value`` (string).

    Raises
    ------
    DataError
        When a local file is missing.
    """
    from pyspark.sql import functions as F

    src = require_input(path, what)
    return spark.read.text(src).select(F.monotonically_increasing_id().alias("_mid"), "value")


def first_line(lines, path: str | os.PathLike) -> str:
    """Line 1 of a file read by :func:`read_lines`, stripped (``""`` for an empty file).

    This is a Spark action on the first partition only; a file Spark cannot
    read (a broken gzip stream ...) becomes one :class:`DataError` naming it.
    """
    with quiet_spark(lines.sparkSession):
        try:
            head = lines.take(1)
        except Exception as e:  # a Py4J/Spark exception from the reader
            raise read_failure(str(path), e) from None
    return head[0]["value"].strip() if head else ""


def raise_first_error(df, lines, path: str | os.PathLike, what: str) -> None:
    """Raise one :class:`DataError` for the first line whose ``_err`` is not null.

    This is the action that reads the whole file, so a truncated or corrupt
    gzip stream is reported here too (as the first line that cannot be read).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Parsed lines with ``_mid``, ``value`` and ``_err`` columns.
    lines : pyspark.sql.DataFrame
        The raw lines of :func:`read_lines` (to number the bad line).
    path : str or path-like
        The file, for the message.
    what : str
        What the file is, for the message.

    Raises
    ------
    DataError
        Naming the file, the line and the problem.
    """
    from pyspark.sql import functions as F

    bad = df.filter(F.col("_err").isNotNull()).select("_mid", "value", "_err")
    with quiet_spark(df.sparkSession):
        try:
            first = bad.orderBy("_mid").take(1)
        except Exception as e:  # a Py4J/Spark exception from the reader
            raise read_failure(str(path), e) from None
        if not first:
            return
        row = first[0]
        line_no = lines.filter(F.col("_mid") < row["_mid"]).count() + 1
    shown = row["value"] if len(row["value"]) <= 80 else row["value"][:77] + "..."
    raise DataError(f"{path}, line {line_no}: {row['_err']} in the {what} file: {shown!r}")


def item(col: str, i: int):
    """Field ``i`` (0-based) of an array column, ``NULL`` when the line is too short."""
    from pyspark.sql import functions as F

    return F.try_element_at(F.col(col), F.lit(i + 1))


def field_checks(fields, specs: list[tuple[str, str, bool]], expected: int | None):
    """A Spark expression naming the first problem of a split line, or ``NULL``.

    Parameters
    ----------
    fields : pyspark.sql.Column
        ``array<string>`` of the line's fields.
    specs : list of (name, kind, allow_empty)
        One entry per checked field, in order: ``kind`` is ``"int"``, ``"float"``
        or ``"str"``.
    expected : int or None
        The exact number of fields, or ``None`` for "at least ``len(specs)``".

    Returns
    -------
    pyspark.sql.Column
        A string column (``NULL`` when the line is good).
    """
    from pyspark.sql import functions as F

    n = F.size(fields)
    if expected is not None:
        cond = F.when(
            n != expected,
            F.concat(F.lit(f"expected {expected} columns, found "), n.cast("string")),
        )
    else:
        cond = F.when(
            n < len(specs),
            F.concat(F.lit(f"expected at least {len(specs)} columns, found "), n.cast("string")),
        )
    for i, (name, kind, allow_empty) in enumerate(specs):
        if kind == "str":
            continue
        v = F.trim(F.try_element_at(fields, F.lit(i + 1)))
        regex = INT_RE if kind == "int" else FLOAT_RE
        word = "an integer" if kind == "int" else "a number"
        bad = ~v.rlike(regex)
        if allow_empty:
            bad = bad & (v != F.lit(""))
        cast_t = "bigint" if kind == "int" else "double"
        overflow = v.rlike(regex) & v.try_cast(cast_t).isNull()
        cond = cond.when(
            bad,
            F.concat(F.lit(f"column {i + 1} ({name}) is not {word}: "), F.lit("'"), v, F.lit("'")),
        ).when(overflow, F.lit(f"column {i + 1} ({name}) is out of range"))
    return cond


def check_out(out: str | os.PathLike, force: bool) -> Path:
    """Validate an output folder: it must be local and new (or ``force``)."""
    p = local_path(out)
    if p is None:
        raise ParameterError(
            f"--out {out}: outputs are written with an atomic local rename; "
            "use a path on a (shared) filesystem, not a URL"
        )
    p = p.absolute()
    if p.exists() and not p.is_dir():
        raise ParameterError(f"--out {p} exists and is not a folder")
    if p.exists() and any(p.iterdir()) and not force:
        raise ParameterError(f"--out {p} exists and is not empty (pass --force to replace it)")
    from hedgerow.userfiles import check_writable

    return check_writable(p, folder=True)


@contextlib.contextmanager
def atomic_output(out: str | os.PathLike, force: bool = False) -> Iterator[Path]:
    """Yield a temporary folder that becomes ``out`` only if the block succeeds.

    The temporary folder is a hidden sibling of ``out`` (same filesystem, so the
    final rename is atomic).  On any exception it is deleted and ``out`` is left
    as it was: a failed job writes no partial output.

    Parameters
    ----------
    out : str or path-like
        The final output folder.
    force : bool
        Replace an existing non-empty ``out``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "res"
    >>> with atomic_output(d) as tmp:
    ...     _ = (tmp / "x.txt").write_text("ok")
    >>> (d / "x.txt").read_text()
    'ok'
    """
    final = check_out(out, force)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if final.exists():
        old = final.parent / f".{final.name}.old-{uuid.uuid4().hex[:12]}"
        final.rename(old)
    tmp.rename(final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_parquet(df, folder: Path, name: str) -> None:
    """Write ``df`` as Parquet under ``folder/name`` (Spark part files)."""
    df.write.mode("error").parquet(str(folder / name))


def write_meta(folder: Path, meta: dict[str, Any]) -> None:
    """Write ``meta.json`` (sorted keys, indented) into ``folder``."""
    (folder / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def write_outputs(
    out: str | os.PathLike,
    force: bool,
    t0: float,
    meta: dict[str, Any],
    tables: dict[str, Any],
    csvs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write a job's tables and ``meta.json`` into ``out`` atomically; return the metadata.

    Inside one :func:`atomic_output` block: each Spark DataFrame of ``tables``
    becomes ``out/<name>/`` (:func:`write_parquet`, in the given order), each
    pandas DataFrame of ``csvs`` becomes ``out/<name>`` (no index), and then
    ``meta`` plus ``"seconds"`` (wall time since ``t0``, rounded to 0.01 s) is
    written by :func:`write_meta`.

    Parameters
    ----------
    out : str or path-like
        The final output folder.
    force : bool
        Replace an existing non-empty ``out``.
    t0 : float
        ``time.perf_counter()`` at the start of the job.
    meta : dict
        The job's metadata without ``"seconds"``.
    tables : dict of str to pyspark.sql.DataFrame
        Parquet tables by folder name.
    csvs : dict of str to pandas.DataFrame, optional
        CSV files by file name, written after the tables.

    Returns
    -------
    dict
        ``meta`` with ``"seconds"`` added (the contents of ``meta.json``).

    Examples
    --------
    >>> import tempfile, pathlib, time
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "res"
    >>> meta = write_outputs(d, False, time.perf_counter(), {"job": "demo"}, {})
    >>> sorted(meta), sorted(p.name for p in d.iterdir())
    (['job', 'seconds'], ['meta.json'])
    """
    with atomic_output(out, force) as tmp:
        for name, df in tables.items():
            write_parquet(df, tmp, name)
        for name, frame in (csvs or {}).items():
            frame.to_csv(tmp / name, index=False)
        meta = {**meta, "seconds": round(time.perf_counter() - t0, 2)}
        write_meta(tmp, meta)
    return meta


def file_info(path: str | os.PathLike) -> dict[str, Any]:
    """Path and size of an input, recorded in ``meta.json``."""
    p = local_path(path)
    info: dict[str, Any] = {"path": str(path)}
    if p is not None and p.exists():
        info["bytes"] = p.stat().st_size
    return info
