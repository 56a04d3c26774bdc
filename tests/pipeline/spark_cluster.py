"""A real Spark standalone cluster (one master, two workers) started from the installed PySpark.

Used by the ``cluster`` tests (``pytest -m cluster``).  Every daemon is bound to
127.0.0.1 (``SPARK_LOCAL_IP`` and ``--host``), listens on ports chosen free,
runs in its own process group and is stopped (``SIGTERM``, then ``SIGKILL``)
however the tests end.  Nothing is downloaded: the launcher is PySpark's
``bin/spark-class``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import hedgerow

SRC = str(Path(hedgerow.__file__).resolve().parents[1])


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment of every daemon and driver: loopback only, this checkout's hedgerow."""
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_NO_DAEMONIZE="1",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p),
        HEDGEROW_SPARK_DRIVER_MEMORY="512m",
        SPARK_DAEMON_MEMORY="256m",
    )
    env.pop("SPARK_ENV_LOADED", None)
    env.update(extra or {})
    return env


@dataclass
class StandaloneCluster:
    """One master and ``n`` workers of one core each, on 127.0.0.1."""

    workdir: Path
    workers: int = 2
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _spawn(self, name: str, args: list[str]) -> None:
        log = open(self.workdir / f"{name}.log", "ab")
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        self.procs[name] = subprocess.Popen(
            cmd, env=cluster_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()

    def start(self, timeout: float = 120.0) -> StandaloneCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._spawn(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(self.port), "--webui-port", str(self.ui_port)],
        )  # fmt: skip
        for i in range(self.workers):
            self.start_worker(i)
        self.wait_workers(self.workers, timeout)
        return self

    def start_worker(self, i: int) -> None:
        work = self.workdir / f"worker{i}"
        work.mkdir(exist_ok=True)
        self._spawn(
            f"worker{i}",
            ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--port", str(free_port()), "--webui-port", str(free_port()),
             "--cores", "1", "--memory", "1536m", "--work-dir", str(work), self.url],
        )  # fmt: skip

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            return json.loads(r.read().decode())

    def alive_workers(self) -> int:
        try:
            return int(self.state().get("aliveworkers", 0))
        except OSError:
            return 0

    def wait_workers(self, n: int, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.procs["master"].poll() is not None:
                raise RuntimeError(self.log("master"))
            if self.alive_workers() >= n:
                return
            time.sleep(0.5)
        raise TimeoutError(f"{n} workers not alive after {timeout}s:\n{self.log('master')}")

    def kill_worker(self, i: int) -> None:
        """The machine of worker ``i`` is gone: its JVM, executor and Python workers at once."""
        p = self.procs.pop(f"worker{i}")
        _killpg(p, signal.SIGKILL)

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        for p in self.procs.values():
            _killpg(p, signal.SIGTERM, wait=0)
        for p in self.procs.values():
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                _killpg(p, signal.SIGKILL)
        self.procs.clear()


def _killpg(p: subprocess.Popen, sig: int, wait: float = 15.0) -> None:
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass
    if wait:
        try:
            p.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
