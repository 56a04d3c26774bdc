"""Locating the real data sets shipped beside the project (``shared/data``).

The folder is found, in order, from the ``HEDGEROW_DATA`` environment
variable, then ``shared/data`` beside the checkout (``<checkout>/../shared/data``),
then beside the current directory, then beside the checkout this one was
cloned from (a local ``origin`` remote: a throw-away clone of a working
checkout finds the data set next to that checkout).  A missing file raises
:class:`~hedgerow.errors.DataError` naming what was looked for; nothing falls
back silently to synthetic data.
"""

from __future__ import annotations

import os
from pathlib import Path

from hedgerow.errors import DataError


def _candidates() -> list[Path]:
    out: list[Path] = []
    env = os.environ.get("HEDGEROW_DATA")
    if env:
        out.append(Path(env))
    checkout = Path(__file__).resolve().parents[2]
    out.append(checkout.parent / "shared" / "data")
    cwd = Path.cwd()
    out += [cwd / "shared" / "data", cwd.parent / "shared" / "data"]
    origin = _local_origin(checkout)
    if origin is not None:
        out.append(origin.parent / "shared" / "data")
    return out


def _local_origin(checkout: Path) -> Path | None:
    """The checkout that ``checkout`` was cloned from, if its ``origin`` is a local folder.

    Reads ``.git/config`` (no git process); ``None`` for remote URLs or no git.
    """
    config = checkout / ".git" / "config"
    if not config.is_file():
        return None
    section = None
    for line in config.read_text(errors="replace").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == '[remote "origin"]' and line.startswith("url"):
            url = line.split("=", 1)[1].strip()
            url = url.removeprefix("file://")
            path = Path(url)
            return path if path.is_absolute() and path.is_dir() else None
    return None


def data_dir() -> Path:
    """The data folder; raises :class:`DataError` when none is found."""
    cands = _candidates()
    for c in cands:
        if c.is_dir():
            return c
    looked = ", ".join(str(c) for c in cands)
    raise DataError(f"data folder not found (set HEDGEROW_DATA); looked in: {looked}")


def data_path(*parts: str) -> Path:
    """Path of a shipped data file.

    For example ``data_path("snap-ego-facebook", "facebook_combined.txt.gz")``.

    Raises :class:`DataError` naming the file when it is missing.
    """
    p = data_dir().joinpath(*parts)
    if not p.exists():
        raise DataError(f"data file missing: {p} (see shared/data/MANIFEST.md)")
    return p
