"""Sweeps on Spark: expand a spec, run each missing run as a Spark task, commit rows as they end.

The output directory ``DIR`` (rows, manifests) is described in
:mod:`hedgerow.pipeline.store`.

How a sweep runs (:func:`run_sweep`):

1. the spec expands into runs with stable ids (:func:`hedgerow.experiment.expand.expand`);
2. run ids that already have a row with ``status = "ok"`` are skipped (a
   failed run is tried again);
3. the missing runs become one RDD with **one partition per run**; the driver
   submits one Spark job per partition from a small thread pool (Spark runs
   concurrent jobs' tasks side by side), most expensive runs first;
4. as each task finishes, the driver writes its rows to
   ``DIR/rows/.tmp-...`` and renames the file to ``DIR/rows/<run_id>.parquet``
   (atomic, :func:`hedgerow.pipeline.store.write_rows`), then advances the
   progress bar.  A sweep killed half-way has therefore committed exactly the
   runs that finished; restarting it runs only the rest, and never writes a
   second file for a run.

A run that raises becomes a ``failed`` row (:func:`hedgerow.experiment.run.run_one`);
a task whose Python worker dies becomes a ``failed`` row written by the
driver, saying so in words (``WorkerCrashed: ...``).  Either way the other runs
go on.  A lost executor (a worker machine gone) is not a failure of the run:
Spark runs its tasks again on another executor.  When Spark itself goes (the
JVM or the connection to the cluster dies), the sweep stops with one line and
writes nothing for the runs that did not finish: they are simply missing, and
the same command runs them.

One writer per folder: the sweep holds ``DIR/_lock`` (see
:func:`hedgerow.pipeline.store.sweep_lock`); a second sweep into the same
folder stops at once with an error naming the holder.

Workers get ``NUMBA_CACHE_DIR`` (shared, so compiled kernels are reused across
workers and sweeps) and one numba thread per task.

From the command line this is ``hedgerow sweep SPEC --out DIR``; under
``spark-submit`` pass the entry file :mod:`hedgerow.cli.spark_submit`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hedgerow.admission import LEDGER_ENV, release, room_bytes
from hedgerow.errors import HedgerowError
from hedgerow.experiment import ExperimentSpec, ResolvedRun, load_spec
from hedgerow.fingerprint import code_fingerprint
from hedgerow.pipeline.store import (
    _stale,
    check_writable,
    finished_runs,
    rows_dir,
    sweep_lock,
    write_manifest,
    write_rows,
)
from hedgerow.progress import progress_bar

__all__ = ["SweepResult", "run_sweep", "worker_env"]


# --------------------------------------------------------------------------- workers
def worker_env(numba_cache_dir: str | None = None, task_threads: int = 1,
               ledger: str | None = None) -> dict[str, str]:
    """Environment the Spark workers set before importing numba.

    ``NUMBA_CACHE_DIR`` defaults to ``$HEDGEROW_NUMBA_CACHE_DIR``, then
    ``$NUMBA_CACHE_DIR``, then ``~/.cache/hedgerow/numba``.  With ``ledger``,
    the tasks reserve their memory there (``HEDGEROW_MEMORY_LEDGER``,
    :mod:`hedgerow.admission`).

    Examples
    --------
    >>> sorted(worker_env("/tmp/nc"))
    ['HEDGEROW_TASK_THREADS', 'NUMBA_CACHE_DIR']
    """
    cache = (
        numba_cache_dir
        or os.environ.get("HEDGEROW_NUMBA_CACHE_DIR")
        or os.environ.get("NUMBA_CACHE_DIR")
        or str(Path.home() / ".cache" / "hedgerow" / "numba")
    )
    env = {"NUMBA_CACHE_DIR": cache, "HEDGEROW_TASK_THREADS": str(int(task_threads))}
    if ledger:
        env[LEDGER_ENV] = ledger
    return env


def memory_ledger() -> str:
    """The memory ledger of this machine's sweeps (:mod:`hedgerow.admission`).

    One file per user in the system's temporary folder, so every sweep on a
    machine (and every task of each) counts the others' reservations, and each
    machine of a cluster has its own.

    Examples
    --------
    >>> memory_ledger().endswith(".json")
    True
    """
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    return str(Path(tempfile.gettempdir()) / f"hedgerow-memory-{uid}.json")


def _prepare_worker(env: Mapping[str, str]) -> None:
    for k, v in env.items():
        if k != LEDGER_ENV:  # the ledger is set for each run alone (_ledger_of)
            os.environ.setdefault(k, v)
    cache = os.environ.get("NUMBA_CACHE_DIR")
    if cache:
        with contextlib.suppress(OSError):
            Path(cache).mkdir(parents=True, exist_ok=True)
    threads = int(os.environ.get("HEDGEROW_TASK_THREADS", "1"))
    import numba

    # numba.config sets its options at import time: the stubs do not declare them
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


@contextlib.contextmanager
def _ledger_of(ledger: str | None) -> Iterator[None]:
    """The sweep's memory ledger (or none) for one run; the process's own setting after it.

    A worker may serve several sweeps, and a partition may run in the driver's own process
    (tests): neither keeps a ledger beyond the run.  The run's reservation is released at its end.
    """
    before = os.environ.get(LEDGER_ENV)
    if ledger:
        os.environ[LEDGER_ENV] = ledger
    else:
        os.environ.pop(LEDGER_ENV, None)
    try:
        yield
    finally:
        release()  # the run's memory is given back: its reservation goes
        if before is None:
            os.environ.pop(LEDGER_ENV, None)
        else:
            os.environ[LEDGER_ENV] = before


def _run_partition(
    payloads: Iterable[str],
    run_fn: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """Spark partition function: run each payload, yield its rows as one JSON string."""
    _prepare_worker(env or {})
    from hedgerow.experiment import run as runner

    fn = run_fn or runner.run_one
    for text in payloads:
        payload = json.loads(text)
        t0 = time.perf_counter()
        try:
            with _ledger_of((env or {}).get(LEDGER_ENV)):
                rows = fn(payload)
        except Exception as e:  # run_one never raises; an injected run function may
            import traceback

            rows = runner.failed_rows(
                payload,
                f"{type(e).__name__}: {e}",
                traceback.format_exc(),
                time.perf_counter() - t0,
            )
        yield json.dumps(rows, default=_json_default)


# --------------------------------------------------------------------------- driver
@dataclass
class SweepResult:
    """What a sweep did.

    Attributes
    ----------
    total : int
        Runs in the spec.
    skipped : int
        Runs already finished (``ok``) before this sweep.
    stale : int
        Of the skipped runs, those whose rows were made by other code (see
        :mod:`hedgerow.fingerprint`); ``redo_stale=True`` runs them again.
    executed : int
        Runs this sweep ran (``ok + failed``).
    """

    experiment: str
    out: Path
    total: int
    skipped: int
    stale: int = 0
    executed: int = 0
    ok: int = 0
    failed: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    deferrals: int = 0

    def summary(self) -> str:
        """One line for the terminal."""
        by_other = f" ({self.stale} by other code)" if self.stale else ""
        waited = (f"; {self.deferrals} start{'s' * (self.deferrals != 1)} deferred until "
                  "memory was released" if self.deferrals else "")
        return (
            f"{self.experiment}: {self.total} runs, {self.skipped} already done{by_other}, "
            f"{self.executed} run now ({self.ok} ok, {self.failed} failed) in {self.seconds:.1f}s"
            f"{waited} -> {rows_dir(self.out)}"
        )


_NEEDS = re.compile(r"needs about ([\d,.]+) GiB more")
#: a run deferred while no other run of the sweep was in flight waits this long, this many times
ALONE_WAIT_S = 30.0
ALONE_TRIES = 20


def deferred_need(rows: list[dict[str, Any]]) -> float | None:
    """The bytes a run asked for when its row says it was deferred for memory, else ``None``.

    Examples
    --------
    >>> deferred_need([{"status": "failed", "error": "MemoryDeferred: gm needs about "
    ...                 "9.5 GiB more; ..."}]) / 2**30
    9.5
    >>> deferred_need([{"status": "failed", "error": "ParameterError: nodes ..."}]) is None
    True
    """
    if len(rows) != 1 or rows[0].get("status") == "ok":
        return None
    error = str(rows[0].get("error") or "")
    if not error.startswith("MemoryDeferred:"):
        return None
    m = _NEEDS.search(error)
    return float(m.group(1).replace(",", "")) * 2**30 if m else 0.0


def _spark_error_text(exc: BaseException) -> str:
    text = str(exc)
    for marker in ("PythonException:", "Caused by:"):
        if marker in text:
            text = text[text.index(marker) :]
            break
    return " ".join(text.split())[:2000]


_SPARK_GONE = (
    "SparkContext was shut down",
    "SparkContext has been shutdown",
    "Cannot call methods on a stopped SparkContext",
    "Connection refused",
    "Answer from Java side is empty",
    "Error while sending or receiving",
    "Py4JNetworkError",
    "cancelled because SparkContext",
    "Master removed our application",
)


def spark_is_gone(exc: BaseException, sc: Any = None) -> bool:
    """Whether a job failed because Spark itself went away (not because of its run).

    Examples
    --------
    >>> spark_is_gone(ConnectionRefusedError(111, "Connection refused"))
    True
    >>> spark_is_gone(RuntimeError("ZeroDivisionError: division by zero"))
    False
    """
    if isinstance(exc, ConnectionError):
        return True
    name = type(exc).__name__
    if name.startswith("Py4JNetwork"):
        return True
    text = f"{name}: {exc}"
    if any(m in text for m in _SPARK_GONE):
        return True
    return sc is not None and getattr(sc, "_jsc", "alive") is None


def task_failure_text(exc: BaseException) -> str:
    """The ``error`` of a run whose task died: in words, with Spark's reason after it.

    Examples
    --------
    >>> task_failure_text(RuntimeError("Python worker exited unexpectedly (crashed)"))[:55]
    'WorkerCrashed: the Python process running this run died'
    """
    text = str(exc)
    if "exited unexpectedly" in text or "crashed" in text or "EOFException" in text:
        import re

        m = re.search(r"exit code:? ?(-?\d+)", text)
        code = f" (exit code {m.group(1)})" if m else ""
        return (
            f"WorkerCrashed: the Python process running this run died{code} - a segfault, "
            "an out-of-memory kill or os._exit; the Spark log under --out has the details"
        )
    return f"SparkTaskFailed: {_spark_error_text(exc)[:500]}"


def run_sweep(
    spec: ExperimentSpec | str | Path,
    out: str | Path,
    *,
    spark: Any = None,
    master: str | None = None,
    parallelism: int | None = None,
    max_runs: int | None = None,
    concurrency: int | None = None,
    progress: bool = True,
    run_fn: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
    on_result: Callable[[ResolvedRun, list[dict[str, Any]]], None] | None = None,
    numba_cache_dir: str | None = None,
    redo_stale: bool = False,
    warn: Callable[[str], None] | None = None,
    log_file: str | Path | None = None,
    on_start: Callable[[SweepResult], None] | None = None,
    admission: bool = True,
) -> SweepResult:
    """Run every missing run of ``spec`` as Spark tasks and commit rows under ``out``.

    Parameters
    ----------
    spec : ExperimentSpec or path
        The experiment (a YAML path is loaded with :func:`hedgerow.experiment.load_spec`).
    out : path
        Output directory (created); rows go to ``out/rows``.
    spark : SparkSession, optional
        Session to use; default :func:`hedgerow.pipeline.session.get_spark`
        with ``master`` and ``parallelism``.  Not started at all when every
        run is already finished.
    max_runs : int, optional
        Run at most this many of the missing runs (the rest stay missing).
    concurrency : int, optional
        Spark jobs in flight at once; default ``max(8, 2 * defaultParallelism)``.
    progress : bool
        Show a rich progress bar of finished runs on stderr.
    run_fn : callable, optional
        Replacement for :func:`hedgerow.experiment.run_one` inside the tasks (tests).
    on_result : callable, optional
        Called on the driver as ``on_result(run, rows)`` after each run's rows are committed.
    numba_cache_dir : str, optional
        ``NUMBA_CACHE_DIR`` of the workers (see :func:`worker_env`).
    redo_stale : bool
        Also run again the finished runs whose rows were made by other code
        (:func:`hedgerow.pipeline.store.stale_run_ids`); their new rows replace the old ones.
    warn : callable, optional
        Called with one line for each corrupt or foreign file under ``out/rows``.
    log_file : path, optional
        Quiet mode: Spark's output goes to this file (see ``get_spark``).
    on_start : callable, optional
        Called with the result so far (total, skipped) before Spark starts.
    admission : bool
        Tasks reserve their memory estimates in this machine's ledger
        (:func:`memory_ledger`, :mod:`hedgerow.admission`), and a run that fits alone
        but not beside the runs in flight waits until one of them ends instead of
        failing (``False``: every run is checked on its own, as a single run is).

    Returns
    -------
    SweepResult

    Raises
    ------
    HedgerowError
        ``out`` not writable or full, in use by another sweep, or Spark lost
        during the sweep (the runs that did not finish get no row).
    """
    if not isinstance(spec, ExperimentSpec):
        spec = load_spec(spec)
    out = Path(out)
    t_start = time.perf_counter()
    runs = spec.expand()
    check_writable(out)
    with sweep_lock(out):
        return _sweep_locked(
            spec, out, runs, t_start, spark=spark, master=master, parallelism=parallelism,
            max_runs=max_runs, concurrency=concurrency, progress=progress, run_fn=run_fn,
            on_result=on_result, numba_cache_dir=numba_cache_dir, redo_stale=redo_stale,
            warn=warn, log_file=log_file, on_start=on_start, admission=admission,
        )  # fmt: skip


def _prepare_inputs(todo: list[ResolvedRun], spark: Any) -> None:
    """Run, once and on the driver, the ingest jobs of the named inputs the runs read and that
    are not prepared yet (FB samples, follower graphs, Google churn samples): the tasks only
    read them, so a fresh machine needs no ``hedgerow ingest`` before a sweep."""
    from hedgerow.pipeline.inputs import ensure_inputs, inputs_of

    names = list(dict.fromkeys(n for r in todo for n in inputs_of(r.scenario)))
    if names:
        ensure_inputs(names, spark=spark, log=lambda m: print(m, file=sys.stderr, flush=True))


def _sweep_locked(
    spec: ExperimentSpec,
    out: Path,
    runs: list[ResolvedRun],
    t_start: float,
    *,
    spark: Any,
    master: str | None,
    parallelism: int | None,
    max_runs: int | None,
    concurrency: int | None,
    progress: bool,
    run_fn: Callable[[dict[str, Any]], list[dict[str, Any]]] | None,
    on_result: Callable[[ResolvedRun, list[dict[str, Any]]], None] | None,
    numba_cache_dir: str | None,
    redo_stale: bool,
    warn: Callable[[str], None] | None,
    log_file: str | Path | None,
    on_start: Callable[[SweepResult], None] | None,
    admission: bool,
) -> SweepResult:
    write_manifest(out, spec, runs)
    finished = finished_runs(out, warn=warn)
    done = set(finished)
    stale = _stale(finished, code_fingerprint()) & {r.run_id for r in runs}
    if redo_stale:
        done -= stale
    todo = [r for r in runs if r.run_id not in done]
    result = SweepResult(
        spec.experiment,
        out,
        total=len(runs),
        skipped=len(runs) - len(todo),
        stale=0 if redo_stale else len(stale),
    )
    # most expensive first: the sweep does not end waiting on one big straggler
    todo.sort(key=lambda r: -r.cost)
    if max_runs is not None:
        todo = todo[: max(0, int(max_runs))]
    if on_start is not None:
        on_start(result)
    if not todo:
        result.seconds = time.perf_counter() - t_start
        return result

    if spark is None:
        from hedgerow.pipeline.session import get_spark, preflight

        preflight(master)
        spark = get_spark(
            master,
            app_name=f"hedgerow-sweep:{spec.experiment}",
            parallelism=parallelism,
            log_file=log_file,
        )
    _prepare_inputs(todo, spark)
    sc = spark.sparkContext
    task_cpus = int(sc.getConf().get("spark.task.cpus", "1"))
    ledger = memory_ledger() if admission else None
    env = worker_env(numba_cache_dir, task_threads=task_cpus, ledger=ledger)
    payloads = [json.dumps(r.payload(), sort_keys=True) for r in todo]
    rdd = sc.parallelize(payloads, len(payloads))
    func = functools.partial(_run_partition, run_fn=run_fn, env=env)
    group = f"hedgerow-sweep-{spec.experiment}-{uuid.uuid4().hex[:8]}"
    width = concurrency or max(8, 2 * sc.defaultParallelism)
    width = max(1, min(width, len(todo)))

    def job(i: int) -> list[str]:
        sc.setJobGroup(
            group,
            f"{spec.experiment}: {todo[i].label} seed {todo[i].scenario['seed']}",
            interruptOnCancel=True,
        )
        return sc.runJob(rdd, func, [i])

    from hedgerow.experiment import run as runner

    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="hedgerow-sweep")
    pending: dict[Future, int] = {}
    # runs deferred for memory (index, bytes asked for), in the order they were deferred
    waiting: deque[tuple[int, float]] = deque()
    alone = [0] * len(todo)
    local = str(getattr(sc, "master", "")).startswith("local")
    bar = progress_bar(enabled=progress, status=True, remaining=True, transient=False)

    def status() -> str:
        parts = [f"[red]{result.failed} failed"] if result.failed else []
        if waiting:
            parts.append(f"{len(waiting)} waiting for memory")
        return ", ".join(parts)

    def start_waiting(task: Any) -> None:
        """Submit the first waiting run that fits now (any, when this host's memory is unseen)."""
        room = room_bytes(ledger) if (ledger and local) else None
        for k, (i, need) in enumerate(waiting):
            if room is None or need <= room:
                del waiting[k]
                pending[pool.submit(job, i)] = i
                bar.update(task, status=status())
                return

    try:
        with bar:
            task = bar.add_task(spec.experiment, total=len(todo), status="")
            pending.update({pool.submit(job, i): i for i in range(len(todo))})
            while pending or waiting:
                if not pending:
                    # deferred with no other run of this sweep in flight: memory held outside
                    # it; wait, and in the end give up with the deferral as the run's error
                    i, _ = waiting.popleft()
                    alone[i] += 1
                    time.sleep(ALONE_WAIT_S)
                    pending[pool.submit(job, i)] = i
                    continue
                ended, _ = wait(list(pending), timeout=10.0, return_when=FIRST_COMPLETED)
                if not ended:
                    start_waiting(task)  # memory may have been released by another sweep
                    continue
                # the runs that finished first: none is lost when another says Spark has gone
                for fut in sorted(ended, key=lambda f: f.exception() is not None):
                    i = pending.pop(fut)
                    run = todo[i]
                    try:
                        (text,) = fut.result()
                        rows = json.loads(text)
                    except Exception as e:
                        if spark_is_gone(e, sc):
                            # Spark itself went away: this run and the rest never finished;
                            # they get no row (a rerun runs them), not a "failed" one
                            first = _spark_error_text(e).split(". ")[0][:200]
                            raise HedgerowError(
                                f"Spark stopped during the sweep ({first}); "
                                f"{result.executed} runs committed, "
                                f"{len(todo) - result.executed} not finished and not written; "
                                "rerun the same command to run them"
                            ) from None
                        # the task itself died (worker crash, OOM ...)
                        rows = runner.failed_rows(run, task_failure_text(e))
                    need = deferred_need(rows)
                    if need is not None and alone[i] < ALONE_TRIES:
                        # fits alone, not beside the runs in flight: again when memory is freed
                        result.deferrals += 1
                        waiting.append((i, need))
                        bar.update(task, status=status())
                        continue
                    write_rows(out, run.run_id, rows)
                    failed = any(r.get("status") != "ok" for r in rows)
                    result.executed += 1
                    if failed:
                        result.failed += 1
                        result.failures.append((run.run_id, run.label, str(rows[0].get("error"))))
                    else:
                        result.ok += 1
                    bar.update(task, advance=1, status=status())
                    if on_result is not None:
                        on_result(run, rows)
                    # a run ended and gave its memory back
                    start_waiting(task)
    except BaseException:
        # interrupted: cancel what is in flight; committed runs stay committed
        pool.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(Exception):
            sc.cancelJobGroup(group)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    result.seconds = time.perf_counter() - t_start
    return result
