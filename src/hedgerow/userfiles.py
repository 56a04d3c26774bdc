"""The one boundary for a user's files and folders.

Reading a user's file (social samples, churn traces, topologies, specs, row
files) or writing to a user's path goes through these helpers: the library's
errors (:class:`OSError`, pyarrow's, JSON's, a malformed UTF-8 text) become one
:class:`~hedgerow.errors.DataError` naming the file and what is wrong, and an
output path is checked for writability before any expensive work starts.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "m.json").write_text("{not json")
>>> read_json(d / "m.json", what="meta.json")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.DataError: .../m.json: meta.json is not valid JSON (line 1 column 2: ...)
>>> check_writable(d / "new" / "out.png") == d / "new" / "out.png"
True
>>> _ = (d / "afile").write_text("x")
>>> check_writable(d / "afile" / "out.png")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hedgerow.errors.DataError: .../afile/out.png: cannot write here: .../afile is a file, not a folder
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hedgerow.errors import DataError

__all__ = ["check_writable", "read_json", "read_parquet", "reading", "user_error"]


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def user_error(path: str | os.PathLike, what: str, e: BaseException) -> DataError | None:
    """The one-line :class:`DataError` for a library error ``e`` met on ``path``.

    ``None`` when ``e`` is not an error about the file (a bug stays a bug).

    Examples
    --------
    >>> str(user_error("x.json", "meta.json", json.JSONDecodeError("Expecting value", "", 0)))
    'x.json: meta.json is not valid JSON (line 1 column 1: Expecting value)'
    >>> str(user_error("d", "folder", PermissionError(13, "Permission denied", "d/p")))
    'd/p: cannot read the folder: Permission denied'
    >>> user_error("d", "folder", KeyError("x")) is None
    True
    """
    if isinstance(e, DataError):
        return e
    if isinstance(e, json.JSONDecodeError):
        return DataError(f"{path}: {what} is not valid JSON (line {e.lineno} column {e.colno}: "
                         f"{e.msg})")
    if isinstance(e, UnicodeDecodeError):
        return DataError(f"{path}: {what} is not UTF-8 text ({_first_line(e)})")
    if isinstance(e, OSError) and type(e).__module__ in ("builtins", "io"):
        where = e.filename if e.filename is not None else path
        return DataError(f"{where}: cannot read the {what}: {e.strerror or _first_line(e)}")
    if type(e).__module__.startswith("pyarrow"):
        return DataError(f"{path}: {what} is not a readable Parquet table ({_first_line(e)})")
    return None


@contextlib.contextmanager
def reading(path: str | os.PathLike, what: str) -> Iterator[None]:
    """Inside, a library error about ``path`` becomes one :class:`DataError` naming it.

    Examples
    --------
    >>> with reading("missing.txt", "topology file"):  # doctest: +ELLIPSIS
    ...     open("missing.txt").read()
    Traceback (most recent call last):
    ...
    hedgerow.errors.DataError: missing.txt: cannot read the topology file: No such file or directory
    """
    try:
        yield
    except Exception as e:
        err = user_error(path, what, e)
        if err is None or err is e:
            raise
        raise err from None


def read_json(path: str | os.PathLike, *, what: str = "JSON file") -> Any:
    """The JSON document at ``path``; a missing, unreadable or malformed file is one error."""
    p = Path(path)
    with reading(p, what):
        return json.loads(p.read_text(encoding="utf-8"))


def read_parquet(path: str | os.PathLike, *, what: str = "Parquet table", **kw: Any) -> Any:
    """``pandas.read_parquet(path, **kw)`` with a corrupt or unreadable table as one error.

    A missing column named in ``columns`` is an error naming the column.
    """
    import pandas as pd

    p = Path(path)
    try:
        with reading(p, what):
            return pd.read_parquet(p, **kw)
    except (KeyError, ValueError) as e:
        if isinstance(e, DataError):
            raise
        raise DataError(f"{p}: {what} lacks the expected columns ({_first_line(e)})") from None


def check_writable(path: str | os.PathLike, *, folder: bool = False) -> Path:
    """Check, before any work, that ``path`` (a file, or a folder with ``folder=True``) can be
    written; nothing is left behind.

    The nearest existing ancestor must be a folder in which a file can be created;
    an existing ``path`` must be of the right kind.  Returns ``Path(path)``.

    Raises
    ------
    DataError
        One line naming the path and why it cannot be written.
    """
    p = Path(path)
    if p.exists():
        if folder and not p.is_dir():
            raise DataError(f"{p}: cannot write here: it is a file, not a folder")
        if not folder and p.is_dir():
            raise DataError(f"{p}: cannot write here: it is a folder, not a file")
    base = p if folder else p.parent
    base = base if str(base) else Path(".")
    probe = base
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise DataError(f"{p}: cannot write here: {probe} is a file, not a folder")
    try:
        fd, name = tempfile.mkstemp(prefix=".hedgerow-probe-", dir=probe)
    except OSError as e:
        raise DataError(f"{p}: cannot write here: {probe}: {e.strerror or _first_line(e)}"
                        ) from None
    os.close(fd)
    os.unlink(name)
    return p
