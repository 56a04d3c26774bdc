"""Where the real data sets live, and fetching them on demand.

A data set is read from the first of these that holds it:

1. ``$HEDGEROW_DATA``, when set: a folder laid out like the data folder (one sub-folder per
   data set, named as in :data:`~hedgerow.data.registry.DATASETS`).  When it is set it is the
   only place looked in, and it must exist;
2. the user's cache folder (``$HEDGEROW_CACHE``, else the platform's cache folder for
   ``hedgerow``), where ``hedgerow data fetch`` puts what it fetches;
3. ``shared/data`` beside a development checkout (the folder the project's tests use).

A missing file is a :class:`~hedgerow.errors.DataError` in one line that names the command
fetching it (``hedgerow data fetch cities``).  With ``HEDGEROW_FETCH=1`` it is fetched instead.

Fetching takes each file from ``$HEDGEROW_DATA_MIRROR`` when set (a folder laid out like the
data folder, or a URL under which ``FOLDER/FILE`` is served), else from its source repository
at the pinned commit.  A file is written under a temporary name, checked against its SHA-256
and only then renamed into place: a failed or corrupt download leaves nothing behind.

Examples
--------
>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     os.environ["HEDGEROW_DATA"] = tmp
...     try:
...         data_path("wondernetwork-pings-2020-07-19", "servers-2020-07-19.csv")
...     except Exception as e:
...         print(str(e).split(";")[-1].strip())
...     finally:
...         del os.environ["HEDGEROW_DATA"]
fetch it with: hedgerow data fetch cities
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hedgerow.data.registry import DATASETS, DataFile, Dataset, dataset, dataset_of_folder
from hedgerow.errors import DataError

__all__ = [
    "ENV_AUTO_FETCH",
    "ENV_CACHE",
    "ENV_DATA",
    "ENV_MIRROR",
    "FileStatus",
    "cache_dir",
    "data_dir",
    "data_path",
    "dataset_dir",
    "fetch",
    "file_ok",
    "search_dirs",
    "verify",
]

#: a folder laid out like the data folder; when set, the only place looked in
ENV_DATA = "HEDGEROW_DATA"
#: the cache folder (default: the platform's user cache folder for hedgerow, ``data/`` in it)
ENV_CACHE = "HEDGEROW_CACHE"
#: a folder or URL used instead of the sources when fetching
ENV_MIRROR = "HEDGEROW_DATA_MIRROR"
#: ``1``: fetch a missing data set when it is first needed
ENV_AUTO_FETCH = "HEDGEROW_FETCH"

_CHUNK = 1 << 20


def cache_dir() -> Path:
    """The folder ``hedgerow data fetch`` writes to when ``HEDGEROW_DATA`` is not set.

    Examples
    --------
    >>> cache_dir().name
    'data'
    """
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env) / "data"
    import platformdirs

    return Path(platformdirs.user_cache_dir("hedgerow")) / "data"


def _env_data() -> Path | None:
    env = os.environ.get(ENV_DATA)
    if not env:
        return None
    p = Path(env)
    if not p.is_dir():
        raise DataError(f"{ENV_DATA}={env} is not a folder; unset it or point it at a data folder")
    return p


def _checkout_data() -> Path:
    # src/hedgerow/data/store.py -> the checkout is three folders up from the package
    return Path(__file__).resolve().parents[3].parent / "shared" / "data"


def _in_checkout() -> bool:
    """Whether this package runs from a development checkout (not an installed copy)."""
    return (Path(__file__).resolve().parents[3] / "pyproject.toml").is_file()


def search_dirs() -> list[Path]:
    """The folders a data file is looked for in, in order (see the module docstring)."""
    env = _env_data()
    if env is not None:
        return [env]
    return [cache_dir(), _checkout_data()] if _in_checkout() else [cache_dir()]


def data_dir() -> Path:
    """The folder fetched data sets are written to: ``$HEDGEROW_DATA`` when set, else the cache."""
    env = _env_data()
    return env if env is not None else cache_dir()


def _auto_fetch() -> bool:
    return os.environ.get(ENV_AUTO_FETCH, "").strip().lower() in ("1", "true", "yes", "on")


def data_path(folder: str, *parts: str) -> Path:
    """Path of a data file, e.g. ``data_path("snap-ego-facebook", "facebook_combined.txt.gz")``.

    Raises
    ------
    DataError
        One line naming the file, the folders looked in and the command that fetches it
        (unless ``HEDGEROW_FETCH=1``, which fetches it first).
    """
    dirs = search_dirs()
    for d in dirs:
        p = d.joinpath(folder, *parts)
        if p.exists():
            return p
    ds = dataset_of_folder(folder)
    if ds is not None and _auto_fetch():
        fetch(ds.name)
        return data_path(folder, *parts)
    hint = f"hedgerow data fetch {ds.name}" if ds is not None else "hedgerow data list"
    looked = ", ".join(str(d) for d in dirs)
    raise DataError(
        f"data file missing: {'/'.join((folder, *parts))} (looked in {looked}); "
        f"fetch it with: {hint}"
    )


def dataset_dir(name: str) -> Path:
    """The folder holding every file of data set ``name`` (raises ``DataError`` if incomplete)."""
    ds = dataset(name)
    for d in search_dirs():
        if all((d / ds.folder / f.name).exists() for f in ds.files):
            return d / ds.folder
    raise DataError(f"data set {ds.name} is not here; fetch it with: hedgerow data fetch {ds.name}")


# ----------------------------------------------------------------------------- hashes
def _sha256(path: Path, *, gunzip: bool = False) -> str:
    h = hashlib.sha256()
    opener = gzip.open if gunzip else open
    with opener(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_ok(path: Path, f: DataFile) -> bool:
    """Whether ``path`` holds ``f``: its SHA-256 as stored, or (gzipped here) its content's."""
    if not path.is_file():
        return False
    if path.stat().st_size == f.size and _sha256(path) == f.sha256:
        return True
    if f.content_sha256:
        try:
            return _sha256(path, gunzip=True) == f.content_sha256
        except (OSError, EOFError, gzip.BadGzipFile):
            return False
    return False


@dataclass(frozen=True)
class FileStatus:
    """One file's state in the data folders: ``ok``, ``missing`` or ``corrupt``."""

    dataset: str
    file: str
    status: str
    path: Path | None


def verify(names: Iterable[str] | None = None) -> list[FileStatus]:
    """Check every file of the named data sets (default: all) against its hash.

    A file is looked for as :func:`data_path` looks for it; the first copy found is checked.
    """
    out = []
    for name in names or sorted(DATASETS):
        ds = dataset(name)
        for f in ds.files:
            copies = [d / ds.folder / f.name for d in search_dirs()]
            path = next((p for p in copies if p.exists()), None)
            if path is None:
                out.append(FileStatus(ds.name, f.name, "missing", None))
            else:
                state = "ok" if file_ok(path, f) else "corrupt"
                out.append(FileStatus(ds.name, f.name, state, path))
    return out


# ----------------------------------------------------------------------------- fetching
def _mirror() -> str | None:
    m = os.environ.get(ENV_MIRROR, "").strip()
    return m or None


def _download(url: str, out: Path) -> None:
    """``url`` into ``out`` (pooch's HTTP downloader; no hash check here, the caller checks)."""
    import pooch

    try:
        pooch.HTTPDownloader(timeout=60, progressbar=False)(url, str(out), None)
    except Exception as e:  # requests' and urllib3's errors: one line, the URL named
        reason = str(e).splitlines()[0][:160] if str(e) else ""
        raise DataError(
            f"could not download {url} ({type(e).__name__}: {reason}); set {ENV_MIRROR} to a "
            "folder or URL that holds the data sets to fetch from there"
        ) from None


def _fetch_file(ds: Dataset, f: DataFile, dest: Path, mirror: str | None) -> str:
    """Bring ``f`` to ``dest`` through a temporary file; returns where it came from."""
    part = dest.with_name(dest.name + ".part")
    raw = dest.with_name(dest.name + ".raw")
    try:
        if mirror is not None and "://" not in mirror:
            src = Path(mirror) / ds.folder / f.name
            if not src.is_file():
                raise DataError(f"mirror {mirror} has no {ds.folder}/{f.name}")
            shutil.copyfile(src, part)
            origin = str(src)
        elif mirror is not None:
            origin = f"{mirror.rstrip('/')}/{ds.folder}/{f.name}"
            _download(origin, part)
        else:
            origin = ds.url(f)
            if f.gzip_source:
                _download(origin, raw)
                if _sha256(raw) != f.content_sha256:
                    raise DataError(
                        f"{ds.name}: {f.name} from {origin} does not match its SHA-256; "
                        "nothing was saved"
                    )
                with open(raw, "rb") as src_fh, open(part, "wb") as out_fh, gzip.GzipFile(
                    filename="", mode="wb", fileobj=out_fh, compresslevel=9, mtime=0
                ) as gz:
                    shutil.copyfileobj(src_fh, gz, _CHUNK)
            else:
                _download(origin, part)
        if not file_ok(part, f):
            raise DataError(
                f"{ds.name}: {f.name} from {origin} does not match its SHA-256 "
                f"(expected {f.sha256[:12]}...); nothing was saved"
            )
        os.replace(part, dest)
        return origin
    finally:
        for p in (part, raw):
            if p.exists():
                p.unlink()


def fetch(name: str, *, force: bool = False) -> list[Path]:
    """Fetch data set ``name`` into :func:`data_dir` and verify it; returns its files' paths.

    Files already there and intact are kept (``force`` fetches them again).  Each file comes
    from ``$HEDGEROW_DATA_MIRROR`` when set, else from the source at the pinned commit.

    Raises
    ------
    DataError
        One line: the file that could not be had, or did not match its hash.  Nothing of a
        failed file is left behind.
    """
    ds = dataset(name)
    target = data_dir() / ds.folder
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    mirror = _mirror()
    out = []
    try:
        for f in ds.files:
            dest = target / f.name
            if not force and file_ok(dest, f):
                out.append(dest)
                continue
            _fetch_file(ds, f, dest, mirror)
            out.append(dest)
    except BaseException:
        if created and not any(target.iterdir()):
            target.rmdir()
        raise
    return out
