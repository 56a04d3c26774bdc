"""Reading experiment specs: YAML -> :class:`~hedgerow.experiment.spec.ExperimentSpec`.

:func:`load_spec` validates a file with pydantic (unknown keys are errors) and
expands it once, so that every grid point and variant is checked; any problem
raises :class:`~hedgerow.errors.SpecError` whose message names the file, the
line and the key path (``FILE:LINE: key.path: message``) and, where the values
are a closed set, the allowed values.  :func:`parse_spec` does the same for an
already parsed mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from hedgerow.errors import SpecError
from hedgerow.experiment.errors import _fmt_path, _format_errors
from hedgerow.experiment.expand import expand
from hedgerow.experiment.spec import ExperimentSpec

__all__ = ["load_spec", "parse_spec"]


def _key_lines(text: str) -> dict[tuple, int]:
    """Line number (1-based) of every key path in a YAML document; raises on duplicate keys."""
    lines: dict[tuple, int] = {}
    root = yaml.compose(text, Loader=yaml.SafeLoader)

    def walk(node: yaml.Node, path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for k, v in node.value:
                key = k.value
                if key in seen:
                    raise SpecError(
                        f"line {k.start_mark.line + 1}: {_fmt_path((*path, key))}: duplicate key"
                    )
                seen.add(key)
                lines[(*path, key)] = k.start_mark.line + 1
                walk(v, (*path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                lines[(*path, i)] = v.start_mark.line + 1
                walk(v, (*path, i))

    if root is not None:
        walk(root, ())
    return lines


def _line_for(message: str, lines: Mapping[tuple, int]) -> int | None:
    """The line of the longest key path that prefixes ``message``'s path."""
    path_text = message.split(": ", 1)[0].split(" (", 1)[0]
    best = None
    for path, line in lines.items():
        if path and (
            path_text == _fmt_path(path)
            or path_text.startswith(_fmt_path(path) + ".")
            or path_text.startswith(_fmt_path(path) + "[")
        ):
            if best is None or len(path) > best[0]:
                best = (len(path), line)
    return best[1] if best else None


def parse_spec(
    data: Any, *, source: str = "spec", lines: Mapping[tuple, int] | None = None
) -> ExperimentSpec:
    """Validate a spec given as a mapping; errors raise :class:`SpecError`.

    Parameters
    ----------
    data : mapping
        The parsed YAML.
    source : str
        File name used in error messages.
    lines : mapping, optional
        Key path -> line number, to point errors at a line.

    Examples
    --------
    >>> try:
    ...     parse_spec({"experiment": "e", "scenario": {"protocol": "ringpt",
    ...                 "workload": {"popularity": "zipf3"}}})
    ... except SpecError as e:
    ...     head, tail = str(e).split(" of ", 1)
    ...     print(head)
    ...     print("of", tail)
    spec: scenario.workload.popularity: 'zipf3' is not one
    of rss, zipf1, zipf2, nyse, uniform, zipf:ALPHA
    """
    lines = lines or {}

    def where(msg: str) -> str:
        line = _line_for(msg, lines)
        return f"{source}:{line}: {msg}" if line else f"{source}: {msg}"

    if not isinstance(data, Mapping):
        raise SpecError(
            f"{source}: a spec is a mapping with keys experiment, scenario, sweep, report"
        )
    try:
        spec = ExperimentSpec.model_validate(dict(data))
    except ValidationError as e:
        msgs = _format_errors(e)
        extra = (
            f" (and {len(msgs) - 1} more error{'s' if len(msgs) > 2 else ''})"
            if len(msgs) > 1
            else ""
        )
        raise SpecError(where(msgs[0]) + extra) from None
    try:
        expand(spec)
    except SpecError as e:
        raise SpecError(where(str(e))) from None
    return spec


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a YAML spec file.

    Raises
    ------
    SpecError
        For a missing file, bad YAML or an invalid spec; the message names
        the file, the line and the key path.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{p}: cannot read spec ({e.strerror})") from None
    try:
        data = yaml.safe_load(text)
        lines = _key_lines(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        raise SpecError(f"{p}{at}: not valid YAML ({getattr(e, 'problem', e)})") from None
    except SpecError as e:
        raise SpecError(f"{p}: {e}") from None
    return parse_spec(data, source=str(p), lines=lines)
