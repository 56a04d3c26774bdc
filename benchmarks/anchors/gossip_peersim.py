"""The gossip layer side by side with PeerSim: Newscast + T-Man on a ring, same N, sizes and cycles.

Setting: ``N`` nodes with random 64-bit ring ids, Newscast with a cache of ``c``
(PeerSim's usual 20) under T-Man with a view of ``R`` (20) ranked on the ring:
the ``ceil(R/2)`` nearest successors and predecessors, the rest of the view to
the nearest others.  Each cycle every node, in a random order, runs one
Newscast exchange and one T-Man exchange; a T-Man exchange picks the partner
uniformly among the view (among the Newscast cache while the view is empty),
both sides build the union of both views, both Newscast caches and both
descriptors, and each keeps its ``R`` best.

The anchor is PeerSim's cycle-driven engine (``peersim.cdsim``) with the
Newscast class of the Ja-be-Ja PeerSim code (``payberah/jabeja``,
``jabeja-peersim``: ``peersim.jabeja.Newscast``, PeerSim's SimpleNewscast
merge) and its T-Man exchange buffers (``peersim.jabeja.Buffer``).  That code's
own ``Tman`` selects the view by a Ja-be-Ja colour test, not by ring distance,
so the ring ranking, the initialiser (ring ids, random Newscast bootstrap) and
a probe (timing and ring quality) are three small classes written here, in this
script, compiled against the anchor at run time into a temporary directory with
the generated configuration.  The engine order is shuffled every cycle
(``peersim.cdsim.Shuffle``), as Hedgerow's cycles use a random order.

The anchor is found through ``HEDGEROW_ANCHOR_PEERSIM``: a directory whose
``classes/`` sub-directory holds the compiled ``jabeja-peersim`` sources
(PeerSim's core is vendored there) and whose ``*.jar`` files are PeerSim's
dependencies (``jep-2.3.0.jar``, ``djep-1.0.0.jar``)::

    javac -cp jep-2.3.0.jar:djep-1.0.0.jar -d classes $(find jabeja-peersim/src -name '*.java')

Usage::

    HEDGEROW_ANCHOR_PEERSIM=/path/to/peersim python benchmarks/anchors/gossip_peersim.py
    ... --nodes 1000,10000,100000 --cycles 20 --reps 3 --json out.json

Times (per run; median over repetitions, both sides interleaved in one run):

- ``sim``: the cycles only.  PeerSim: between the probe's calls before the
  first and after the last cycle, its own work excluded (JVM start,
  configuration and initialisation are outside).  Hedgerow: the
  ``PeerSampling.cycle`` and ``TMan.cycle`` calls, after a warm-up on 64
  nodes that loads the compiled numba kernels.
- ``total``: the whole child process (JVM, or Python with its imports, the
  numba load and the bootstrap), wall clock and CPU of the process.

``--parallel`` adds a third run per repetition: Hedgerow with
``TMan(parallel=True)`` (each batch's exchanges on numba's threads, the same
views; ``OMP_WAIT_POLICY=PASSIVE`` unless set, so that idle threads sleep through
the serial parts instead of spinning), reported as ``hedgerow_par`` beside the
single-threaded side.

Quality: per cycle, the fraction of nodes whose T-Man view holds their true
ring successor; PeerSim's is measured in a separate run with the probe's
observer on (its time is reported too), so the timed runs carry no observer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ENV = "HEDGEROW_ANCHOR_PEERSIM"
PACKAGE = "hedgerowanchor"

RING_TMAN = """\
package hedgerowanchor;

import java.util.ArrayList;
import peersim.cdsim.CDProtocol;
import peersim.config.Configuration;
import peersim.core.CommonState;
import peersim.core.Node;
import peersim.jabeja.Buffer;
import peersim.jabeja.Newscast;

/** T-Man on a ring of unsigned 64-bit ids over the anchor's Newscast and buffers. */
public class RingTMan implements CDProtocol {
    private final int viewSize;
    private final int newscastPid;
    long ringId;
    int rank;
    Node[] view = new Node[0];

    public RingTMan(String prefix) {
        viewSize = Configuration.getInt(prefix + ".view");
        newscastPid = Configuration.getPid(prefix + ".newscast");
    }

    public Object clone() {
        try {
            RingTMan t = (RingTMan) super.clone();
            t.view = new Node[0];
            return t;
        } catch (CloneNotSupportedException e) {
            throw new RuntimeException(e);
        }
    }

    public void nextCycle(Node self, int pid) {
        Newscast ns = (Newscast) self.getProtocol(newscastPid);
        Node partner = null;
        if (view.length > 0) {
            partner = view[CommonState.r.nextInt(view.length)];
        } else {
            ArrayList<Node> live = new ArrayList<Node>();
            for (Node x : ns.getNeighbors())
                if (x != null && x.isUp()) live.add(x);
            if (live.isEmpty()) return;
            partner = live.get(CommonState.r.nextInt(live.size()));
        }
        if (partner == null || !partner.isUp()) return;
        Buffer buf = new Buffer(self, view);
        buf.merge(ns.getNeighbors());
        buf.remove(partner);
        buf.add(self);
        RingTMan other = (RingTMan) partner.getProtocol(pid);
        ArrayList<Node> reply = other.passive(partner, self, buf, pid);
        buf.merge(reply);
        buf.remove(self);
        view = select(buf.getNodes(), pid);
    }

    ArrayList<Node> passive(Node me, Node sender, Buffer received, int pid) {
        Newscast ns = (Newscast) me.getProtocol(newscastPid);
        Buffer mine = new Buffer(me, view);
        mine.merge(ns.getNeighbors());
        Buffer all = new Buffer(me, mine.getNodes());
        all.merge(received.getNodes());
        all.remove(me);
        view = select(all.getNodes(), pid);
        mine.remove(sender);
        mine.add(me);
        return mine.getNodes();
    }

    private static int nearest(long[] d, boolean[] skip) {
        int best = -1;
        for (int t = 0; t < d.length; t++)
            if (!skip[t] && (best < 0 || Long.compareUnsigned(d[t], d[best]) < 0)) best = t;
        return best;
    }

    /** The ceil(R/2) nearest each way, then the nearest others, up to R. */
    Node[] select(ArrayList<Node> cand, int pid) {
        int m = cand.size();
        int half = (viewSize + 1) / 2;
        long[] cw = new long[m];
        long[] ccw = new long[m];
        long[] dist = new long[m];
        for (int t = 0; t < m; t++) {
            long x = ((RingTMan) cand.get(t).getProtocol(pid)).ringId;
            cw[t] = x - ringId;
            ccw[t] = ringId - x;
            dist[t] = Long.compareUnsigned(cw[t], ccw[t]) < 0 ? cw[t] : ccw[t];
        }
        boolean[] inView = new boolean[m];
        boolean[] seen = new boolean[m];
        int k = 0;
        for (int j = 0; j < half && j < m; j++) {
            int a = nearest(cw, seen);
            seen[a] = true;
            if (!inView[a]) { inView[a] = true; k++; }
        }
        seen = new boolean[m];
        for (int j = 0; j < half && j < m; j++) {
            int a = nearest(ccw, seen);
            seen[a] = true;
            if (!inView[a]) { inView[a] = true; k++; }
        }
        while (k > viewSize) {  // odd R: drop the farthest chosen
            int worst = -1;
            for (int t = 0; t < m; t++)
                if (inView[t] && (worst < 0 || Long.compareUnsigned(dist[t], dist[worst]) > 0))
                    worst = t;
            inView[worst] = false;
            k--;
        }
        while (k < viewSize && k < m) {
            int a = nearest(dist, inView);
            inView[a] = true;
            k++;
        }
        Node[] out = new Node[k];
        int i = 0;
        for (int t = 0; t < m; t++)
            if (inView[t]) out[i++] = cand.get(t);
        return out;
    }
}
"""

RING_INIT = """\
package hedgerowanchor;

import java.util.ArrayList;
import java.util.Arrays;
import peersim.config.Configuration;
import peersim.core.CommonState;
import peersim.core.Control;
import peersim.core.Network;
import peersim.core.Node;
import peersim.jabeja.Newscast;

/** Random ring ids and a Newscast bootstrap of c distinct random other nodes. */
public class RingInit implements Control {
    private final int tmanPid;
    private final int newscastPid;
    private final int cache;

    public RingInit(String prefix) {
        tmanPid = Configuration.getPid(prefix + ".tman");
        newscastPid = Configuration.getPid(prefix + ".newscast");
        cache = Configuration.getInt(prefix + ".cache");
    }

    public boolean execute() {
        int n = Network.size();
        Long[] ids = new Long[n];
        for (int i = 0; i < n; i++) {
            RingTMan t = (RingTMan) Network.get(i).getProtocol(tmanPid);
            t.ringId = CommonState.r.nextLong();
            ids[i] = t.ringId;
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Long.compareUnsigned(ids[a], ids[b]));
        for (int r = 0; r < n; r++)
            ((RingTMan) Network.get(order[r]).getProtocol(tmanPid)).rank = r;
        int want = Math.min(cache, n - 1);
        for (int i = 0; i < n; i++) {
            Node self = Network.get(i);
            ArrayList<Node> nb = new ArrayList<Node>();
            while (nb.size() < want) {
                Node x = Network.get(CommonState.r.nextInt(n));
                if (x != self && !nb.contains(x)) nb.add(x);
            }
            ((Newscast) self.getProtocol(newscastPid)).init(nb);
        }
        return false;
    }
}
"""

PROBE = """\
package hedgerowanchor;

import java.lang.management.ManagementFactory;
import peersim.config.Configuration;
import peersim.core.Control;
import peersim.core.Network;
import peersim.core.Node;

/** Cumulated simulation wall and CPU seconds (its own work excluded), ring quality. */
public class Probe implements Control {
    private final int tmanPid;
    private final boolean quality;
    private final com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long lastWall = -1;
    private long lastCpu;
    private double simWall;
    private double simCpu;
    private int calls;

    public Probe(String prefix) {
        tmanPid = Configuration.getPid(prefix + ".tman");
        quality = Configuration.getBoolean(prefix + ".quality");
    }

    public boolean execute() {
        long w = System.nanoTime();
        long c = os.getProcessCpuTime();
        if (lastWall >= 0) {
            simWall += (w - lastWall) / 1e9;
            simCpu += (c - lastCpu) / 1e9;
        }
        String q = "nan";
        if (quality) {
            int n = Network.size();
            int hit = 0;
            for (int i = 0; i < n; i++) {
                RingTMan t = (RingTMan) Network.get(i).getProtocol(tmanPid);
                int succ = (t.rank + 1) % n;
                for (Node x : t.view) {
                    if (((RingTMan) x.getProtocol(tmanPid)).rank == succ) { hit++; break; }
                }
            }
            q = Double.toString(hit / (double) n);
        }
        System.out.println("PROBE " + calls + " " + simWall + " " + simCpu + " " + q);
        calls++;
        lastWall = System.nanoTime();
        lastCpu = os.getProcessCpuTime();
        return false;
    }
}
"""


def anchor_classpath() -> str:
    """The anchor's class path (``classes/`` and the jars), or exit with a clear message."""
    where = os.environ.get(ENV)
    if not where:
        sys.exit(f"{ENV} is not set: point it at a directory with the compiled jabeja-peersim "
                 "classes in classes/ and PeerSim's jep/djep jars (see this script's docstring); "
                 "nothing was run")
    path = Path(where)
    classes = path / "classes"
    if not (classes / "peersim" / "jabeja" / "Newscast.class").is_file():
        sys.exit(f"{ENV}={where}: no compiled peersim.jabeja.Newscast under classes/; "
                 "nothing was run")
    jars = sorted(str(p) for p in path.glob("*.jar"))
    return os.pathsep.join([str(classes), *jars])


def build_probe_classes(cp: str, work: Path) -> str:
    """Compile the ring T-Man, initialiser and probe against the anchor; return the class path."""
    src = work / "src" / PACKAGE
    src.mkdir(parents=True)
    for name, text in (("RingTMan", RING_TMAN), ("RingInit", RING_INIT), ("Probe", PROBE)):
        (src / f"{name}.java").write_text(text)
    out = work / "classes"
    out.mkdir()
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(out),
                    *sorted(str(p) for p in src.glob("*.java"))], check=True)
    return os.pathsep.join([str(out), cp])


def peersim_config(n: int, view: int, cache: int, cycles: int, seed: int, quality: bool) -> str:
    """The PeerSim configuration of one run (cycle-driven engine)."""
    return "\n".join([
        f"random.seed {seed}",
        f"network.size {n}",
        f"simulation.cycles {cycles}",
        f"init.node.newscastcache {cache}",  # where the anchor's Newscast reads its cache size
        "protocol.ns peersim.jabeja.Newscast",
        f"protocol.tman {PACKAGE}.RingTMan",
        "protocol.tman.newscast ns",
        f"protocol.tman.view {view}",
        f"init.ring {PACKAGE}.RingInit",
        "init.ring.tman tman",
        "init.ring.newscast ns",
        f"init.ring.cache {cache}",
        f"control.probe {PACKAGE}.Probe",
        "control.probe.tman tman",
        f"control.probe.quality {str(quality).lower()}",
        "control.probe.FINAL",
        "control.shf peersim.cdsim.Shuffle",
        "",
    ])


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_peersim(cp: str, work: Path, n: int, view: int, cache: int, cycles: int, seed: int,
                quality: bool) -> dict[str, Any]:
    """One PeerSim run in its own JVM: sim and total times, quality per cycle."""
    cfg = work / f"gossip_{n}_{seed}_{int(quality)}.cfg"
    cfg.write_text(peersim_config(n, view, cache, cycles, seed, quality))
    c0, w0 = _cpu_children(), time.perf_counter()
    res = subprocess.run(["java", "-cp", cp, "peersim.Simulator", str(cfg)],
                         capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - w0, _cpu_children() - c0
    probes = [line.split() for line in res.stdout.splitlines() if line.startswith("PROBE ")]
    if res.returncode != 0 or len(probes) != cycles + 1:
        sys.exit(f"PeerSim run failed (rc {res.returncode}):\n{res.stderr[-3000:]}")
    return {"sim_wall_s": float(probes[-1][2]), "sim_cpu_s": float(probes[-1][3]),
            "total_wall_s": wall, "total_cpu_s": cpu,
            "quality": [float(p[4]) for p in probes[1:]] if quality else None}


def ours_child(n: int, view: int, cache: int, cycles: int, seed: int,
               parallel: bool = False) -> dict[str, Any]:
    """Hedgerow's side, run inside the child process: times and quality per cycle."""
    from hedgerow.gossip import PeerSampling, TMan, ring_select
    from hedgerow.model import RngStreams
    from hedgerow.protocols.vitis.ring import node_ids

    def setup(m: int, rng: np.random.Generator) -> tuple[Any, Any, np.ndarray, np.ndarray]:
        ids = node_ids(m, seed)
        ps = PeerSampling(m, cache)
        ps.bootstrap(np.ones(m, bool), rng)
        tm = TMan(view, ring_select(ids), parallel=parallel)
        order = np.argsort(ids)
        succ = np.empty(m, np.int64)
        succ[order] = np.roll(order, -1)
        return ps, tm, tm.empty_view(m), succ

    streams = RngStreams(seed)
    w0 = time.perf_counter()
    rng = streams.stream("warm-up")
    ps, tm, v, _ = setup(64, rng)
    ps.cycle(rng)
    tm.cycle(v, ps, rng)
    warm = time.perf_counter() - w0
    rng = streams.stream("gossip")
    ps, tm, v, succ = setup(n, rng)
    sim_wall = sim_cpu = 0.0
    quality = []
    for _ in range(cycles):
        c0, w0 = time.process_time(), time.perf_counter()
        ps.cycle(rng)
        tm.cycle(v, ps, rng)
        sim_wall += time.perf_counter() - w0
        sim_cpu += time.process_time() - c0
        quality.append(float(np.mean((v == succ[:, None]).any(axis=1))))
    return {"sim_wall_s": sim_wall, "sim_cpu_s": sim_cpu, "warmup_s": warm, "quality": quality}


def run_ours(n: int, view: int, cache: int, cycles: int, seed: int,
             parallel: bool = False) -> dict[str, Any]:
    """One Hedgerow run in a fresh Python process (imports and numba load in ``total``)."""
    c0, w0 = _cpu_children(), time.perf_counter()
    res = subprocess.run([sys.executable, __file__, "--child", "--nodes", str(n), "--view",
                          str(view), "--cache", str(cache), "--cycles", str(cycles),
                          "--seed", str(seed)] + (["--parallel"] if parallel else []),
                         capture_output=True, text=True, check=False,
                         env={"OMP_WAIT_POLICY": "PASSIVE", **os.environ} if parallel else None)
    wall, cpu = time.perf_counter() - w0, _cpu_children() - c0
    if res.returncode != 0:
        sys.exit(f"Hedgerow run failed (rc {res.returncode}):\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out.update(total_wall_s=wall, total_cpu_s=cpu)
    return out


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="1000,10000", help="comma-separated N")
    ap.add_argument("--view", type=int, default=20, help="T-Man view size R")
    ap.add_argument("--cache", type=int, default=20, help="Newscast cache size c")
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--parallel", action="store_true",
                    help="also run Hedgerow with TMan(parallel=True) (each batch's exchanges "
                         "on numba's threads; same views), reported as hedgerow_par")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(ours_child(int(args.nodes), args.view, args.cache, args.cycles,
                                    args.seed, args.parallel)))
        return
    cp = anchor_classpath()
    sizes = [int(x) for x in args.nodes.split(",")]
    report: dict[str, Any] = {"view": args.view, "cache": args.cache, "cycles": args.cycles,
                              "reps": args.reps, "load_before": os.getloadavg(), "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cp = build_probe_classes(cp, work)
        for n in sizes:
            java: list[dict[str, Any]] = []
            ours: list[dict[str, Any]] = []
            par: list[dict[str, Any]] = []
            for r in range(args.reps):
                seed = args.seed + r
                java.append(run_peersim(cp, work, n, args.view, args.cache, args.cycles, seed,
                                        quality=False))
                ours.append(run_ours(n, args.view, args.cache, args.cycles, seed))
                if args.parallel:
                    par.append(run_ours(n, args.view, args.cache, args.cycles, seed, True))
            observed = run_peersim(cp, work, n, args.view, args.cache, args.cycles, args.seed,
                                   quality=True)
            row = {"load": os.getloadavg()}
            for key in ("sim_wall_s", "sim_cpu_s", "total_wall_s", "total_cpu_s"):
                row[f"peersim_{key}"] = _median(java, key)
                row[f"hedgerow_{key}"] = _median(ours, key)
                row[f"ratio_{key}"] = row[f"peersim_{key}"] / row[f"hedgerow_{key}"]
                if par:
                    row[f"hedgerow_par_{key}"] = _median(par, key)
                    row[f"ratio_par_{key}"] = row[f"peersim_{key}"] / row[f"hedgerow_par_{key}"]
            row["peersim_observed_sim_wall_s"] = observed["sim_wall_s"]
            row["peersim_quality"] = observed["quality"]
            row["hedgerow_quality"] = ours[0]["quality"]
            row["hedgerow_tman_cycle_s"] = row["hedgerow_sim_wall_s"] / args.cycles
            row["runs"] = {"peersim": java, "hedgerow": ours, "hedgerow_par": par}
            report["sizes"][str(n)] = row
            print(f"N={n:>7}  cycles={args.cycles}  load={row['load'][0]:.2f}")
            for key in ("sim_wall_s", "sim_cpu_s", "total_wall_s", "total_cpu_s"):
                print(f"  {key:<13} PeerSim {row[f'peersim_{key}']:8.3f}  Hedgerow "
                      f"{row[f'hedgerow_{key}']:8.3f}  ratio {row[f'ratio_{key}']:6.1f}x"
                      + (f"   parallel {row[f'hedgerow_par_{key}']:8.3f}  ratio "
                         f"{row[f'ratio_par_{key}']:6.1f}x" if par else ""))
            qp, qh = row["peersim_quality"], row["hedgerow_quality"]
            marks = sorted({0, 4, 9, args.cycles - 1} & set(range(args.cycles)))
            print("  successor in view, cycle " + " / ".join(str(c + 1) for c in marks) + ": "
                  f"PeerSim {' / '.join(f'{qp[c]:.3f}' for c in marks)}  "
                  f"Hedgerow {' / '.join(f'{qh[c]:.3f}' for c in marks)}")
    report["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
