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
so the Java T-Man on the ring is this harness's own: the classes below are
written here, in this script, and compiled against the anchor at run time into
a temporary directory with the generated configuration.  The engine order is
shuffled every cycle (``peersim.cdsim.Shuffle``), as Hedgerow's cycles use a
random order.

Two Java T-Man classes (``--variants``), the same protocol with the same draws:

- ``harness`` (``RingTMan``): the first one, over the anchor's ``Buffer``
  (``ArrayList.contains`` deduplication) with a linear scan per selected entry;
- ``tuned`` (``TunedRingTMan``): the same exchange with per-node marks for the
  unions and two short insertion lists for the successors and predecessors,
  no ``ArrayList``.  It keeps the union order and the selection's candidate
  order, so both classes give the same views after every cycle: the observed
  runs print an order-free digest of all views per cycle, and the harness
  says whether the two classes' digests agree.

The anchor is found through ``HEDGEROW_ANCHOR_PEERSIM``: a directory whose
``classes/`` sub-directory holds the compiled ``jabeja-peersim`` sources
(PeerSim's core is vendored there) and whose ``*.jar`` files are PeerSim's
dependencies (``jep-2.3.0.jar``, ``djep-1.0.0.jar``, as shipped in PeerSim
1.0.x's ``lib/``)::

    javac -cp jep-2.3.0.jar:djep-1.0.0.jar -d classes $(find jabeja-peersim/src -name '*.java')

Usage::

    HEDGEROW_ANCHOR_PEERSIM=/path/to/peersim python benchmarks/anchors/gossip_peersim.py
    ... --nodes 1000,10000,100000 --cycles 20 --reps 3 --json out.json
    ... --nodes 100000 --reps 1 --variants tuned --modes cold,warm --no-quality

Modes (``--modes``): ``cold`` times the only experiment of a fresh JVM (its
JIT compiles while the cycles run); ``warm`` runs two experiments in one JVM
(PeerSim's ``simulation.experiments 2``: the second re-initialises the network
with the next seed of PeerSim's generator) and times only the second.

Times (per run; median over repetitions, all sides interleaved in one run):

- ``sim``: the cycles only.  PeerSim: between the probe's calls before the
  first and after the last cycle, its own work excluded (JVM start,
  configuration and initialisation are outside), as wall time, the process's
  CPU time (which counts the JIT compiler and collector threads, often on the
  second core) and the main thread's CPU time
  (``ThreadMXBean.getCurrentThreadCpuTime``: the simulation itself).
  Hedgerow: the ``PeerSampling.cycle`` and ``TMan.cycle`` calls, after a
  warm-up on 64 nodes that loads the compiled numba kernels; they run on one
  thread, so its process CPU is its thread CPU.
- ``total``: the whole child process (JVM, or Python with its imports, the
  numba load and the bootstrap), wall clock and CPU of the process.

``--parallel`` adds one more run per repetition: Hedgerow with
``TMan(parallel=True)`` (each batch's exchanges on numba's threads, the same
views; ``OMP_WAIT_POLICY=PASSIVE`` unless set, so that idle threads sleep through
the serial parts instead of spinning), reported as ``hedgerow_par`` beside the
single-threaded side.

Quality: per cycle, the fraction of nodes whose T-Man view holds their true
ring successor; PeerSim's is measured in separate cold runs with the probe's
observer on (one per Java class; their time is reported too), so the timed
runs carry no observer.  ``--no-quality`` skips those runs.
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

TUNED_TMAN = """\
package hedgerowanchor;

import peersim.cdsim.CDProtocol;
import peersim.config.Configuration;
import peersim.core.CommonState;
import peersim.core.Network;
import peersim.core.Node;
import peersim.jabeja.Newscast;

/**
 * The harness's ring T-Man, tuned: the same exchange, unions, draws and views (in the same
 * order), built with per-node marks instead of ArrayList.contains and ranked by insertion into
 * two short sorted lists instead of repeated linear scans.
 */
public class TunedRingTMan extends RingTMan {
    private final int viewSize;
    private final int newscastPid;
    private final int cacheSize;
    // scratch shared by all nodes (one exchange at a time): marks keyed by rank, two unions
    private static int[] markA = new int[0];
    private static int[] markB = new int[0];
    private static int epoch;
    private static Node[] sent = new Node[64];
    private static long[] sentId = new long[64];
    private static Node[] all = new Node[128];
    private static long[] allId = new long[128];
    private static Node[] mine = new Node[64];
    private static long[] mineId = new long[64];
    private static int[] mineRank = new int[64];
    private static boolean[] chosen = new boolean[128];
    private static long[] listD = new long[64];
    private static int[] listI = new int[64];

    public TunedRingTMan(String prefix) {
        super(prefix);
        viewSize = Configuration.getInt(prefix + ".view");
        newscastPid = Configuration.getPid(prefix + ".newscast");
        cacheSize = Configuration.getInt(prefix + ".cache");
    }

    private static void ensure(int n, int m) {
        if (markA.length < n) { markA = new int[n]; markB = new int[n]; epoch = 0; }
        if (sent.length < m) {
            sent = new Node[m]; sentId = new long[m]; mine = new Node[m]; mineId = new long[m];
            mineRank = new int[m];
        }
        if (all.length < 2 * m) {
            all = new Node[2 * m]; allId = new long[2 * m]; chosen = new boolean[2 * m];
        }
    }

    public void nextCycle(Node self, int pid) {
        Newscast ns = (Newscast) self.getProtocol(newscastPid);
        Node partner = null;
        if (view.length > 0) {
            partner = view[CommonState.r.nextInt(view.length)];
        } else {
            int live = 0;
            for (int i = 0; i < cacheSize; i++) {
                Node x = ns.getNeighbor(i);
                if (x != null && x.isUp()) live++;
            }
            if (live == 0) return;
            int pick = CommonState.r.nextInt(live);
            for (int i = 0; i < cacheSize; i++) {
                Node x = ns.getNeighbor(i);
                if (x != null && x.isUp() && pick-- == 0) { partner = x; break; }
            }
        }
        if (partner == null || !partner.isUp()) return;
        ensure(Network.size(), view.length + 2 * cacheSize + 2 * viewSize + 2);
        TunedRingTMan other = (TunedRingTMan) partner.getProtocol(pid);
        // what p sends: its view, then its cache's new entries, without q, then p itself
        int ea = ++epoch;
        markA[rank] = ea;
        markA[other.rank] = ea;
        int s = 0;
        for (Node x : view) {
            TunedRingTMan t = (TunedRingTMan) x.getProtocol(pid);
            if (markA[t.rank] != ea) { markA[t.rank] = ea; sent[s] = x; sentId[s++] = t.ringId; }
        }
        for (int i = 0; i < cacheSize; i++) {
            Node x = ns.getNeighbor(i);
            if (x == null) continue;
            TunedRingTMan t = (TunedRingTMan) x.getProtocol(pid);
            if (markA[t.rank] != ea) { markA[t.rank] = ea; sent[s] = x; sentId[s++] = t.ringId; }
        }
        sent[s] = self;
        sentId[s++] = ringId;
        // q's side: its view and cache (q's buffer), then what p sent; q ranks the union
        int mm = other.passive(partner, s, pid);
        // p's union: what it sent without itself, q's buffer's entries p did not send, then q
        int m = s - 1;
        for (int i = 0; i < m; i++) { all[i] = sent[i]; allId[i] = sentId[i]; }
        for (int i = 0; i < mm; i++)
            if (markA[mineRank[i]] != ea) { all[m] = mine[i]; allId[m++] = mineId[i]; }
        all[m] = partner;
        allId[m++] = other.ringId;
        view = select(ringId, viewSize, all, allId, m);
    }

    /** q's side of the exchange: rank its union, leave its own buffer in {@code mine}. */
    private int passive(Node me, int s, int pid) {
        Newscast ns = (Newscast) me.getProtocol(newscastPid);
        int eb = ++epoch;
        markB[rank] = eb;
        int mm = 0;
        for (Node x : view) {
            TunedRingTMan t = (TunedRingTMan) x.getProtocol(pid);
            if (markB[t.rank] != eb) {
                markB[t.rank] = eb; mine[mm] = x; mineId[mm] = t.ringId; mineRank[mm++] = t.rank;
            }
        }
        for (int i = 0; i < cacheSize; i++) {
            Node x = ns.getNeighbor(i);
            if (x == null) continue;
            TunedRingTMan t = (TunedRingTMan) x.getProtocol(pid);
            if (markB[t.rank] != eb) {
                markB[t.rank] = eb; mine[mm] = x; mineId[mm] = t.ringId; mineRank[mm++] = t.rank;
            }
        }
        int m = mm;
        for (int i = 0; i < mm; i++) { all[i] = mine[i]; allId[i] = mineId[i]; }
        for (int i = 0; i < s; i++) {
            TunedRingTMan t = (TunedRingTMan) sent[i].getProtocol(pid);
            if (markB[t.rank] != eb) {
                markB[t.rank] = eb; all[m] = sent[i]; allId[m++] = sentId[i];
            }
        }
        view = select(ringId, viewSize, all, allId, m);
        return mm;
    }

    /** Insert candidate t at distance d into the sorted list at [base, base+len), capped at cap. */
    private static int insert(int base, int len, int cap, long d, int t) {
        if (len == cap && Long.compareUnsigned(d, listD[base + len - 1]) >= 0) return len;
        int j = len < cap ? len : len - 1;
        while (j > 0 && Long.compareUnsigned(listD[base + j - 1], d) > 0) {
            listD[base + j] = listD[base + j - 1];
            listI[base + j] = listI[base + j - 1];
            j--;
        }
        listD[base + j] = d;
        listI[base + j] = t;
        return len < cap ? len + 1 : len;
    }

    private static long dist(long self, long x) {
        long cw = x - self, ccw = self - x;
        return Long.compareUnsigned(cw, ccw) < 0 ? cw : ccw;
    }

    /** The harness's selection (the same set, in candidate order) by two insertion lists. */
    static Node[] select(long self, int viewSize, Node[] cand, long[] ids, int m) {
        int half = (viewSize + 1) / 2;
        if (listD.length < 2 * half) { listD = new long[2 * half]; listI = new int[2 * half]; }
        int ns = 0, np = 0;
        for (int t = 0; t < m; t++) {
            ns = insert(0, ns, half, ids[t] - self, t);
            np = insert(half, np, half, self - ids[t], t);
        }
        for (int t = 0; t < m; t++) chosen[t] = false;
        int k = 0;
        for (int j = 0; j < ns; j++) { chosen[listI[j]] = true; k++; }
        for (int j = 0; j < np; j++)
            if (!chosen[listI[half + j]]) { chosen[listI[half + j]] = true; k++; }
        while (k > viewSize) {  // odd R: drop the farthest chosen
            int worst = -1;
            for (int t = 0; t < m; t++)
                if (chosen[t] && (worst < 0
                        || Long.compareUnsigned(dist(self, ids[t]), dist(self, ids[worst])) > 0))
                    worst = t;
            chosen[worst] = false;
            k--;
        }
        while (k < viewSize && k < m) {  // lists that overlap: the nearest others
            int best = -1;
            for (int t = 0; t < m; t++)
                if (!chosen[t] && (best < 0
                        || Long.compareUnsigned(dist(self, ids[t]), dist(self, ids[best])) < 0))
                    best = t;
            chosen[best] = true;
            k++;
        }
        Node[] out = new Node[k];
        int i = 0;
        for (int t = 0; t < m; t++)
            if (chosen[t]) out[i++] = cand[t];
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
import java.lang.management.ThreadMXBean;
import peersim.config.Configuration;
import peersim.core.Control;
import peersim.core.Network;
import peersim.core.Node;

/**
 * Cumulated simulation wall, process CPU and main-thread CPU seconds (its own work excluded);
 * with quality on, the ring quality and an order-free digest of every view.
 */
public class Probe implements Control {
    private final int tmanPid;
    private final boolean quality;
    private final com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private long lastWall = -1;
    private long lastCpu;
    private long lastThread;
    private double simWall;
    private double simCpu;
    private double simThread;
    private int calls;

    public Probe(String prefix) {
        tmanPid = Configuration.getPid(prefix + ".tman");
        quality = Configuration.getBoolean(prefix + ".quality");
    }

    public boolean execute() {
        long w = System.nanoTime();
        long c = os.getProcessCpuTime();
        long h = threads.getCurrentThreadCpuTime();
        if (lastWall >= 0) {
            simWall += (w - lastWall) / 1e9;
            simCpu += (c - lastCpu) / 1e9;
            simThread += (h - lastThread) / 1e9;
        }
        String q = "nan";
        String digest = "0";
        if (quality) {
            int n = Network.size();
            int hit = 0;
            long sum = 0;
            for (int i = 0; i < n; i++) {
                RingTMan t = (RingTMan) Network.get(i).getProtocol(tmanPid);
                int succ = (t.rank + 1) % n;
                long hv = t.rank * 0x9E3779B97F4A7C15L;
                for (Node x : t.view) {
                    int r = ((RingTMan) x.getProtocol(tmanPid)).rank;
                    if (r == succ) hit++;
                    hv = (hv ^ r) * 0x100000001B3L;
                }
                sum += hv ^ (hv >>> 29);
            }
            q = Double.toString(hit / (double) n);
            digest = Long.toHexString(sum);
        }
        System.out.println("PROBE " + calls + " " + simWall + " " + simCpu + " " + simThread + " "
                           + q + " " + digest);
        calls++;
        lastWall = System.nanoTime();
        lastCpu = os.getProcessCpuTime();
        lastThread = threads.getCurrentThreadCpuTime();
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
    for name, text in (("RingTMan", RING_TMAN), ("TunedRingTMan", TUNED_TMAN),
                       ("RingInit", RING_INIT), ("Probe", PROBE)):
        (src / f"{name}.java").write_text(text)
    out = work / "classes"
    out.mkdir()
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(out),
                    *sorted(str(p) for p in src.glob("*.java"))], check=True)
    return os.pathsep.join([str(out), cp])


#: The Java T-Man classes of the harness: its first one, and the tuned one (same views).
VARIANTS = {"harness": "RingTMan", "tuned": "TunedRingTMan"}
#: A cold run times the only experiment of a fresh JVM; a warm run the second of two.
MODES = {"cold": 1, "warm": 2}


def peersim_config(n: int, view: int, cache: int, cycles: int, seed: int, quality: bool,
                   variant: str = "harness", experiments: int = 1) -> str:
    """The PeerSim configuration of one run (cycle-driven engine)."""
    return "\n".join([
        f"random.seed {seed}",
        f"network.size {n}",
        f"simulation.cycles {cycles}",
        f"simulation.experiments {experiments}",
        f"init.node.newscastcache {cache}",  # where the anchor's Newscast reads its cache size
        "protocol.ns peersim.jabeja.Newscast",
        f"protocol.tman {PACKAGE}.{VARIANTS[variant]}",
        "protocol.tman.newscast ns",
        f"protocol.tman.view {view}",
        f"protocol.tman.cache {cache}",
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
                quality: bool, variant: str = "harness", mode: str = "cold") -> dict[str, Any]:
    """One PeerSim run in its own JVM: sim and total times, quality per cycle.

    ``mode="warm"`` runs two experiments in the JVM (PeerSim's ``simulation.experiments``)
    and reports the second one's simulation times; ``total`` is still the whole process.
    """
    experiments = MODES[mode]
    cfg = work / f"gossip_{n}_{seed}_{int(quality)}_{variant}_{mode}.cfg"
    cfg.write_text(peersim_config(n, view, cache, cycles, seed, quality, variant, experiments))
    c0, w0 = _cpu_children(), time.perf_counter()
    res = subprocess.run(["java", "-cp", cp, "peersim.Simulator", str(cfg)],
                         capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - w0, _cpu_children() - c0
    probes = [line.split() for line in res.stdout.splitlines() if line.startswith("PROBE ")]
    if res.returncode != 0 or len(probes) != experiments * (cycles + 1):
        sys.exit(f"PeerSim run failed (rc {res.returncode}):\n{res.stderr[-3000:]}")
    probes = probes[-(cycles + 1):]  # the last experiment
    return {"sim_wall_s": float(probes[-1][2]), "sim_cpu_s": float(probes[-1][3]),
            "sim_thread_cpu_s": float(probes[-1][4]),
            "total_wall_s": wall, "total_cpu_s": cpu,
            "quality": [float(p[5]) for p in probes[1:]] if quality else None,
            "digest": [p[6] for p in probes[1:]] if quality else None}


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
    ap.add_argument("--variants", default="harness,tuned",
                    help="Java T-Man classes to run: harness (the first one), tuned (marks and "
                         "insertion lists; the same views)")
    ap.add_argument("--modes", default="cold,warm",
                    help="cold (one experiment per JVM) and/or warm (the second of two "
                         "experiments in one JVM is timed)")
    ap.add_argument("--no-quality", action="store_true",
                    help="skip the observed runs (quality per cycle, view digests)")
    ap.add_argument("--parallel", action="store_true",
                    help="also run Hedgerow with TMan(parallel=True) (each batch's exchanges "
                         "on numba's threads; same views), reported as hedgerow_par")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(ours_child(int(args.nodes), args.view, args.cache, args.cycles,
                                    args.seed, args.parallel)))
        return
    variants = [v for v in args.variants.split(",") if v]
    modes = [m for m in args.modes.split(",") if m]
    for v in variants:
        if v not in VARIANTS:
            sys.exit(f"--variants: unknown Java T-Man {v!r} (one of {', '.join(VARIANTS)})")
    for m in modes:
        if m not in MODES:
            sys.exit(f"--modes: unknown mode {m!r} (one of {', '.join(MODES)})")
    columns = [f"{v}_{m}" for v in variants for m in modes]
    cp = anchor_classpath()
    sizes = [int(x) for x in args.nodes.split(",")]
    report: dict[str, Any] = {"view": args.view, "cache": args.cache, "cycles": args.cycles,
                              "reps": args.reps, "columns": columns,
                              "load_before": os.getloadavg(), "sizes": {}}
    keys = ("sim_wall_s", "sim_cpu_s", "sim_thread_cpu_s", "total_wall_s", "total_cpu_s")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cp = build_probe_classes(cp, work)
        for n in sizes:
            java: dict[str, list[dict[str, Any]]] = {c: [] for c in columns}
            ours: list[dict[str, Any]] = []
            par: list[dict[str, Any]] = []
            for r in range(args.reps):
                seed = args.seed + r
                for v in variants:
                    for m in modes:
                        java[f"{v}_{m}"].append(run_peersim(
                            cp, work, n, args.view, args.cache, args.cycles, seed,
                            quality=False, variant=v, mode=m))
                ours.append(run_ours(n, args.view, args.cache, args.cycles, seed))
                if args.parallel:
                    par.append(run_ours(n, args.view, args.cache, args.cycles, seed, True))
            row: dict[str, Any] = {"load": os.getloadavg()}
            for key in ("sim_wall_s", "sim_cpu_s", "total_wall_s", "total_cpu_s"):
                row[f"hedgerow_{key}"] = _median(ours, key)
                if par:
                    row[f"hedgerow_par_{key}"] = _median(par, key)
            # Hedgerow's cycles run on its one thread: its process CPU is its thread's
            row["hedgerow_sim_thread_cpu_s"] = row["hedgerow_sim_cpu_s"]
            for c in columns:
                for key in keys:
                    row[f"{c}_{key}"] = _median(java[c], key)
                    row[f"ratio_{c}_{key}"] = row[f"{c}_{key}"] / row[f"hedgerow_{key}"]
            if not args.no_quality:
                observed = {v: run_peersim(cp, work, n, args.view, args.cache, args.cycles,
                                           args.seed, quality=True, variant=v)
                            for v in variants}
                for v, o in observed.items():
                    row[f"{v}_observed_sim_wall_s"] = o["sim_wall_s"]
                    row[f"{v}_quality"] = o["quality"]
                    row[f"{v}_digest"] = o["digest"]
                if len(observed) > 1:
                    first = next(iter(observed.values()))
                    row["java_views_identical"] = all(o["digest"] == first["digest"]
                                                      for o in observed.values())
            row["hedgerow_quality"] = ours[0]["quality"]
            row["hedgerow_tman_cycle_s"] = row["hedgerow_sim_wall_s"] / args.cycles
            row["runs"] = {"peersim": java, "hedgerow": ours, "hedgerow_par": par}
            report["sizes"][str(n)] = row
            print(f"N={n:>7}  cycles={args.cycles}  reps={args.reps}  load={row['load'][0]:.2f}")
            print(f"  {'sim s (median)':<22}{'wall':>9}{'CPU':>9}{'thread':>9}"
                  f"{'ratio wall':>12}{'CPU':>7}{'thread':>8}")
            print(f"  {'Hedgerow':<22}{row['hedgerow_sim_wall_s']:9.3f}"
                  f"{row['hedgerow_sim_cpu_s']:9.3f}{row['hedgerow_sim_thread_cpu_s']:9.3f}")
            if par:
                print(f"  {'Hedgerow par':<22}{row['hedgerow_par_sim_wall_s']:9.3f}"
                      f"{row['hedgerow_par_sim_cpu_s']:9.3f}")
            for c in columns:
                print(f"  {'PeerSim ' + c:<22}" + "".join(
                    f"{row[f'{c}_{k}']:9.3f}" for k in keys[:3]) + "   " + "".join(
                    f"{row[f'ratio_{c}_{k}']:6.1f}x " for k in keys[:3]))
            if not args.no_quality:
                marks = sorted({0, 4, 9, args.cycles - 1} & set(range(args.cycles)))
                print("  successor in view, cycle " + " / ".join(str(c + 1) for c in marks)
                      + ":  " + "  ".join(
                          f"{name} " + " / ".join(f"{row[f'{name}_quality'][c]:.3f}"
                                                  for c in marks)
                          for name in [*variants, "hedgerow"]))
                if "java_views_identical" in row:
                    print("  Java T-Man views after every cycle, harness vs tuned: "
                          + ("identical" if row["java_views_identical"] else "DIFFERENT"))
    report["load_after"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
