"""A fuzzer over the whole command line: every command and option, invalid values only.

The commands and options are read from the click definitions, the ranges and
forms from the declared world settings (:data:`hedgerow.world_settings.WORLD_SETTINGS`)
and the protocols' declared parameters (``-p NAME=VALUE``).  Each drawn case
replaces one option or argument of a cheap, valid command line (:data:`BASE`)
with an invalid value (wrong type, out of range, NaN, inf, huge, empty, a
missing, corrupt or unwritable path, a text input in another job's format) and expects
one ``error:`` line, exit 2,
no traceback and no file left behind.

Spark sessions, sweeps and downloads are replaced by a tripwire: a case that
reaches them has accepted its invalid value.  Used by ``test_fuzz_cli.py``
(the CI profile) and ``benchmarks/fuzz_cli.py`` (the long run).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np
import pandas as pd

from hedgerow.cli import cli, main

#: a cheap, valid command line per command; ``{tmp}`` is the case's folder, ``{fx}`` the
#: fixtures' folder (read-only inputs)
BASE: dict[str, list[str]] = {
    "build": ["build", "ringpt", "--nodes", "30", "--topics", "5", "--subs", "2"],
    "churn": ["churn", "spidercast", "--nodes", "30", "--topics", "5", "--subs", "2",
              "--lifetime", "10", "--duration", "5", "--json"],
    "compare": ["compare", "--protocols", "ringpt", "-s", "cities", "--no-diameter", "--json"],
    "run": ["run", "ringpt", "-s", "cities", "--epochs", "1", "--json"],
    "draw": ["draw", "ringpt", "-s", "cities", "--out", "{tmp}/x.png"],
    "pictures": ["pictures", "vitis", "--nodes", "40", "--topics", "5", "--subs", "2",
                 "--out", "{tmp}/pics"],
    "protocols": ["protocols", "ringpt"],
    "report": ["report", "{fx}/rows", "-e", "quickstart", "--engine", "local"],
    "reproduce": ["reproduce", "spidercast", "--quick", "--out", "{tmp}/rep"],
    "sweep": ["sweep", "{fx}/spec.yaml", "--out", "{tmp}/sweep"],
    "replay": ["replay", "{fx}/corrupt.parquet", "--out", "{tmp}/replay.html"],
    "data path": ["data", "path", "nosuch"],
    "data verify": ["data", "verify", "nosuch"],
    "data fetch": ["data", "fetch", "nosuch"],
    "data list": ["data", "list", "--json"],
    "ingest churn": ["ingest", "churn", "--out", "{tmp}/ing"],
    "ingest cities": ["ingest", "cities", "--out", "{tmp}/ing"],
    "ingest perigee": ["ingest", "perigee", "--out", "{tmp}/ing"],
    "ingest follower-graph": ["ingest", "follower-graph", "--users", "1000", "--out",
                              "{tmp}/ing"],
    "ingest social": ["ingest", "social", "--size", "100", "--out", "{tmp}/ing"],
    "ingest ccdf": ["ingest", "ccdf", "{fx}/social", "--out", "{tmp}/ccdf"],
}

#: text options that name a file to write (``run --trace FILE``)
OUTPUT_TEXT = {("run", "--trace"), ("compare", "--trace")}

#: options whose every value is valid (free text), never fuzzed
FREE = {"--label", "--help"}

#: size options: a huge value must be refused (the one memory estimate)
SIZES = {"--nodes", "--topics", "--messages", "--users", "--events"}

INT_BAD = ["abc", "1.5", "", "nan", "inf", "1e3", "0x10"]
FLOAT_BAD = ["abc", "", "nan", "inf", "-inf", "1e999", "1,5", "NaN"]
TEXT_BAD = ["", "nosuch", "nosuch:1:2", ":", "unif:0", "unif:-3", "zipf:nan", "a,a"]
HUGE = ["10000000000000", "999999999999999999999"]


@dataclass
class Space:
    """What the fuzzer draws from: per command, per option or argument, invalid values."""

    cases: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def count(self) -> tuple[int, int, int]:
        """``(commands, options and arguments, distinct invalid values)``."""
        opts = sum(len(v) for v in self.cases.values())
        vals = sum(len(x) for v in self.cases.values() for x in v.values())
        return len(self.cases), opts, vals


def _commands(group: click.Group = cli, path: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))
        else:
            yield " ".join((*path, name)), cmd


def _setting_bad(flag: str) -> list[str]:
    """Out-of-range values of a declared world setting's option (``--epochs`` -> ``0``)."""
    from hedgerow.world_settings import WORLD_SETTINGS

    for s in WORLD_SETTINGS.values():
        if s.flag != flag:
            continue
        p = s.param
        out = []
        if p.kind in ("int", "float"):
            if p.low is not None:
                out.append(str(p.low - 1))
            if p.high is not None:
                out.append(str(p.high + 1))
        return out
    return []


def _accepts_inf(flag: str) -> bool:
    """A declared float without an upper bound takes +inf by design (``--lifetime inf``:
    nodes never leave); a duration must be finite."""
    from hedgerow.world_settings import WORLD_SETTINGS

    return flag != "--duration" and any(
        s.flag == flag and s.param.kind == "float" and s.param.high is None
        for s in WORLD_SETTINGS.values())


def _param_bad(protocol: str) -> list[str]:
    """``-p NAME=VALUE`` values the protocol's declarations refuse."""
    from hedgerow.protocols import REGISTRY

    out = ["noequals", "=3", "nosuch=1"]
    for name, p in REGISTRY[protocol].params.items():
        kind = getattr(p, "kind", "")
        if kind == "int":
            out += [f"{name}=abc", f"{name}=1.5"]
            if p.low is not None:
                out.append(f"{name}={p.low - 1}")
        elif kind == "float":
            out += [f"{name}=nan", f"{name}=abc"]
            if p.low is not None:
                out.append(f"{name}={p.low - 1}")
        elif kind == "choice":
            out.append(f"{name}=nosuch")
        elif kind == "bool":
            out.append(f"{name}=maybe")
    return out


def build_space() -> Space:
    """Every command of :data:`BASE` and its options, with their invalid values."""
    space = Space()
    for path, cmd in _commands():
        if path not in BASE:
            continue
        opts: dict[str, list[str]] = {}
        for p in cmd.params:
            if getattr(p, "is_flag", False) or (isinstance(p, click.Option) and p.count):
                continue
            key = p.opts[0] if isinstance(p, click.Option) else p.name.upper()
            long = next((o for o in p.opts if o.startswith("--")), key)
            if long in FREE:
                continue
            t = p.type
            vals: list[str]
            if (path, long) in OUTPUT_TEXT:
                vals = ["{fx}/afile/sub.parquet", "{fx}/empty", ""]
            elif isinstance(t, click.Choice):
                vals = ["nosuch", ""]
            elif isinstance(t, (click.types.IntParamType, click.IntRange)):
                vals = list(INT_BAD)
                if isinstance(t, click.IntRange) and t.min is not None:
                    vals.append(str(t.min - 1))
                if isinstance(t, click.IntRange) and t.max is not None:
                    vals.append(str(t.max + 1))
            elif isinstance(t, click.types.FloatParamType):
                vals = [v for v in FLOAT_BAD
                        if not (_accepts_inf(long) and v in ("inf", "1e999"))]
            elif isinstance(t, click.Path):
                vals = _path_bad(t, long, path)
            elif long in ("-p", "--param"):
                proto = BASE[path][1] if path != "compare" else "ringpt"
                vals = _param_bad(proto)
            else:
                vals = list(TEXT_BAD)
            if path in ("run", "compare", "draw"):  # the options of the declared settings
                vals += _setting_bad(long)
            if long in SIZES and not isinstance(t, click.Path):
                vals += HUGE
            if vals:
                opts[long] = vals
        space.cases[path] = opts
    return space


def _path_bad(t: click.Path, flag: str, command: str) -> list[str]:
    outputs = {"--out", "--graphml", "--html"}
    if flag in outputs or (flag == "OUT" and command != "report"):
        # (an empty path is click's current folder: a valid place to write)
        return ["{fx}/afile/sub", "{fx}/afile/sub/x.png"]
    if command.startswith("ingest ") and command != "ingest ccdf":
        # the Spark jobs' text inputs: missing, empty, binary or a folder, and a text file in
        # every other job's format (or a spec), all refused before the JVM
        own = TEXT_INPUTS.get((command, flag))
        return ["{tmp}/missing", "{fx}/binary", "{fx}/empty", "{fx}/emptyfile", "",
                "{fx}/spec.yaml",
                *(f"{{fx}}/format_{k}.txt" for k in sorted(TEXT_FORMATS) if k != own)]
    if t.dir_okay and not t.file_okay:
        return ["{tmp}/missing", "{fx}/afile", "{fx}/trace_bad", "{fx}/social_bad",
                "{fx}/empty", ""]
    specs = ["{fx}/spec_metric.yaml"] if (command, flag) == ("sweep", "SPEC") else []
    return ["{tmp}/missing", "{fx}/corrupt.parquet", "{fx}/corrupt.json", "{fx}/corrupt.yaml",
            "{fx}/binary", "{fx}/empty", "", *specs]


#: one good file of each text input kind the ingest jobs read, by format
TEXT_FORMATS = {
    "edges": "# an edge list\n0 1\n1 2\n",
    "google": "0,5,0,p,0.5,0.5\n10,5,1,,,\n",
    "smartphone": "u 1 1402358400000 2 5000 6000\n",
    "servers": "id,name,title,location,state,country,state_abbv,continent,latitude,longitude\n"
               "1,a,A,x,s,c,st,1,0.5,0.5\n",
    "pings": "source,destination,min,avg,max,mdev\n1,2,3,4,5,6\n",
    "matrix": "2\n0 1.5\n1.5 0\n",
}
#: the format each ingest option takes (the fuzzer gives it every other one)
TEXT_INPUTS = {
    ("ingest churn", "--trace"): "google", ("ingest social", "--edges"): "edges",
    ("ingest cities", "--servers"): "servers", ("ingest cities", "--pings"): "pings",
    ("ingest perigee", "--matrix"): "matrix",
}


def make_fixtures(fx: Path) -> None:
    """The inputs the cases read: corrupt files of each kind, a broken social sample and
    trace, a file where a folder is expected, rows of one experiment, a valid spec."""
    fx.mkdir(parents=True, exist_ok=True)
    (fx / "afile").write_text("x")
    (fx / "corrupt.parquet").write_bytes(b"PAR1 not really parquet")
    (fx / "corrupt.json").write_text('{"nodes": [')
    (fx / "corrupt.yaml").write_text("experiment: [unclosed\n  - : :\n\t")
    (fx / "binary").write_bytes(bytes(range(256)))
    (fx / "empty").mkdir(exist_ok=True)
    (fx / "emptyfile").write_bytes(b"")
    for kind, text in TEXT_FORMATS.items():
        (fx / f"format_{kind}.txt").write_text(text)
    for name, broken in (("social", None), ("social_bad", "subscriptions")):
        d = fx / name
        (d / "users").mkdir(parents=True, exist_ok=True)
        (d / "subscriptions").mkdir(exist_ok=True)
        pd.DataFrame({"node": np.arange(4)}).to_parquet(d / "users" / "p.parquet")
        pd.DataFrame({"node": [0, 1, 2, 3], "topic": [1, 0, 3, 2]}).to_parquet(
            d / "subscriptions" / "p.parquet")
        if broken:
            (d / broken / "p.parquet").write_bytes(b"junk")
    (fx / "trace_bad" / "events").mkdir(parents=True, exist_ok=True)
    (fx / "trace_bad" / "events" / "p.parquet").write_bytes(b"junk")
    (fx / "spec.yaml").write_text("experiment: fz\nscenario:\n  protocol: ringpt\n"
                                  "  workload: {nodes: 30, topics: 5, subs: 2}\n")
    # a well-formed spec whose report names a metric no row has: refused at load
    (fx / "spec_metric.yaml").write_text((fx / "spec.yaml").read_text()
                                         + "report: {metrics: [avg_degree, recieve_rate]}\n")
    from hedgerow.pipeline.store import write_rows

    write_rows(fx / "rows", "r1", [{
        "run_id": "r1", "attempt_id": "a1", "experiment": "quickstart", "label": "L",
        "kind": "build", "protocol": "ringpt", "seed": 0, "nodes": 30, "topics": 5,
        "subs": "2", "popularity": "rss", "status": "ok", "finished_at": 0.0, "code": "c",
        "spec_json": "{}", "point_json": "{}", "avg_degree": 4.0,
    }])


class WorkStarted(AssertionError):
    """A case reached Spark, a sweep or a download: its invalid value was accepted."""


def _tripwire(*a, **k):
    raise WorkStarted("work started (Spark, a sweep or a download) with an invalid value")


@contextlib.contextmanager
def tripwires():
    """Spark sessions, sweeps and downloads replaced by :func:`_tripwire`."""
    import hedgerow.data as data
    import hedgerow.pipeline.session as session
    import hedgerow.pipeline.sweep as sweep

    saved = [(session, "get_spark"), (session, "job_session"), (session, "preflight"),
             (sweep, "run_sweep"), (data, "fetch")]
    old = [getattr(m, n) for m, n in saved]
    for m, n in saved:
        setattr(m, n, _tripwire)
    try:
        yield
    finally:
        for (m, n), f in zip(saved, old, strict=True):
            setattr(m, n, f)


@dataclass
class Outcome:
    """One case's result; ``problem`` is ``None`` when it answered as it should."""

    argv: list[str]
    rc: int | None
    err: str
    problem: str | None


def argv_for(command: str, option: str, value: str, tmp: Path, fx: Path) -> list[str]:
    """The base command line of ``command`` with ``option`` (or argument) set to ``value``."""
    return mutate([a.format(tmp=tmp, fx=fx) for a in BASE[command]], command, option,
                  value.format(tmp=tmp, fx=fx))


def argv_with(command: str, changes: list[tuple[str, str]], tmp: Path, fx: Path) -> list[str]:
    """The base command line of ``command`` with several options set (the long run's cases)."""
    argv = [a.format(tmp=tmp, fx=fx) for a in BASE[command]]
    for option, value in changes:
        argv = mutate(argv, command, option, value.format(tmp=tmp, fx=fx))
    return argv


def mutate(base: list[str], command: str, option: str, value: str) -> list[str]:
    """``base`` with ``option`` (or the command's first argument) set to ``value``."""
    words = command.split()
    if not option.startswith("-"):  # an argument: the first one after the command's words
        argv = list(base)
        pos = len(words)
        if pos < len(argv) and not argv[pos].startswith("-"):
            argv[pos] = value
        else:
            argv.insert(pos, value)
        return argv
    argv = list(base)
    for alias in (option, *_aliases(command, option)):
        if alias in argv:
            i = argv.index(alias)
            del argv[i:i + 2]
        argv = [a for a in argv if not a.startswith(f"{alias}=")]
    if option.startswith("--"):
        return [*argv, f"{option}={value}"]
    return [*argv, option, value]


def _aliases(command: str, option: str) -> list[str]:
    cmd = dict(_commands())[command]
    for p in cmd.params:
        if isinstance(p, click.Option) and option in p.opts:
            return [o for o in (*p.opts, *p.secondary_opts) if o != option]
    return []


def run_case(argv: list[str], tmp: Path) -> Outcome:
    """Run ``hedgerow ARGV`` in this process and judge its answer."""
    tmp.mkdir(parents=True, exist_ok=True)
    before = set(tmp.rglob("*"))
    out, err = io.StringIO(), io.StringIO()
    rc: int | None = None
    problem = None
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), tripwires():
            rc = main(argv)
    except WorkStarted as e:
        problem = str(e)
    except Exception:
        problem = "traceback: " + traceback.format_exc(limit=4).strip().splitlines()[-1]
    finally:
        os.chdir(cwd)
    text = err.getvalue()
    if problem is None:
        errors = [x for x in text.splitlines() if x.startswith("error:")]
        if "Traceback" in text:
            problem = "traceback on stderr"
        elif rc != 2:
            problem = f"exit {rc} (expected 2)"
        elif len(errors) != 1:
            problem = f"{len(errors)} error: lines"
    left = set(tmp.rglob("*")) - before
    if problem is None and left:
        problem = f"left behind: {sorted(str(p.relative_to(tmp)) for p in left)[:3]}"
    for p in sorted(left, key=lambda q: len(q.parts), reverse=True):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return Outcome(argv, rc, text.strip()[-300:], problem)
