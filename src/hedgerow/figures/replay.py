"""A replay of traced messages: one self-contained HTML page (no network needed).

:func:`write_replay` reads one or more trace files (:mod:`hedgerow.trace`) of the same world
and writes a page with, per protocol and side by side:

* the overlay drawn where ``hedgerow draw`` puts the nodes (longitude/latitude for
  ``cities``, the plane for the unit-square worlds, a circle by id for ring protocols);
* one message spreading over it as a time slider moves (or the play button plays it): copies in
  flight are dots moving along their links (first copies green, duplicates red), nodes turn blue
  (subscribers) or orange (relays) when their first copy arrives, and the links of first copies
  stay drawn (the message's dissemination tree);
* the curve of the share of the message's subscribers reached against time (the arrival-time
  CDF), one line per protocol on one plot;
* on hover, a node's copies received, duplicates, first arrival and hops for that message, and
  its copies over every traced message.

The message (by epoch and index, the same message of the same world in every protocol) is
chosen from a list; the page embeds at most ``max_messages`` messages per protocol.  A link may
open the page at a message and an instant: ``replay.html#m=2&t=0.4`` (``t`` as a share of the
message's time span).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hedgerow.errors import ParameterError
from hedgerow.trace import read_trace

__all__ = ["replay_data", "write_replay"]


def _round(a: np.ndarray, nd: int = 3) -> list:
    return np.round(np.asarray(a, dtype=float), nd).tolist()


def _layout(world: dict[str, Any], protocol: str) -> tuple[np.ndarray, str]:
    """Node positions as ``hedgerow draw`` places them, from a trace's world geometry."""
    from types import SimpleNamespace

    from hedgerow.figures.draw import node_layout

    lat = SimpleNamespace(
        coords=None if world.get("coords") is None else np.asarray(world["coords"], float),
        positions=None if world.get("positions") is None
        else np.asarray(world["positions"], float),
    )
    fake = SimpleNamespace(n_nodes=int(world["n_nodes"]), latency=lat)
    try:
        return node_layout(fake, protocol)
    except ParameterError:  # a protocol this installation does not know: no ring rule
        return node_layout(fake, "")


def replay_data(
    paths: Sequence[str | Path], *, max_messages: int = 30
) -> dict[str, Any]:
    """The data the page draws, from trace files of one world (a ``ParameterError`` otherwise).

    Returns a dict: ``world`` (layout, positions, scenario, seed, fingerprint), ``messages``
    (the ``[epoch, message, topic, publisher]`` every protocol has, at most ``max_messages``,
    from the last epochs), ``panels`` (per protocol: links, and per message the copies as
    columns ``s, r, t0, t1, f`` plus ``hops``), ``subscribers`` (per topic) and per-node copy
    counts over every traced message.
    """
    if not paths:
        raise ParameterError("replay needs at least one trace file", key="traces")
    frames, world = [], None
    for p in paths:
        df, meta = read_trace(p)
        w = {k: meta.get(k) for k in ("world", "scenario", "seed", "n_nodes", "coords",
                                      "positions")}
        if world is None:
            world, subs = w, dict(meta.get("subscribers", {}))
        elif w["world"] != world["world"]:
            raise ParameterError(
                f"{p} traces world {w['world']}, not {world['world']} of {paths[0]}: a replay "
                "shows protocols of one world", key="traces"
            )
        else:
            subs.update(meta.get("subscribers", {}))
        frames.append((df, meta))
    assert world is not None
    # messages every protocol traced, latest epochs first
    common = None
    for df, _ in frames:
        for proto, part in df.groupby("protocol"):
            keys = set(map(tuple, part[["epoch", "message"]].drop_duplicates().to_numpy().tolist()))
            common = keys if common is None else common & keys
    if not common:
        raise ParameterError("the traces share no message (same world, same epochs?)",
                             key="traces")
    chosen = sorted(common, key=lambda k: (-k[0], k[1]))[:max_messages]
    chosen.sort()
    panels = []
    info: dict[tuple[int, int], list[int]] = {}
    for df, meta in frames:
        for proto, part in df.groupby("protocol", sort=False):
            desc = meta["protocols"].get(proto, {})
            n = int(world["n_nodes"])
            counts = np.bincount(part["receiver"].to_numpy(), minlength=n)
            dups = np.bincount(part.loc[~part["first"], "receiver"].to_numpy(), minlength=n)
            xy, layout = _layout(world, proto)
            msgs = {}
            for (ep, mi), g in part.groupby(["epoch", "message"]):
                if (ep, mi) not in chosen:
                    continue
                g = g.sort_values(["arrival_ms", "receiver"], kind="stable")
                info[(ep, mi)] = [int(g["topic"].iat[0]), int(g["publisher"].iat[0])]
                msgs[f"{ep}:{mi}"] = {
                    "s": g["sender"].tolist(), "r": g["receiver"].tolist(),
                    "t0": _round(g["send_ms"]), "t1": _round(g["arrival_ms"]),
                    "f": g["first"].astype(int).tolist(), "h": g["hops"].tolist(),
                }
            panels.append({
                "protocol": proto, "links": desc.get("links", []),
                "xy": _round(xy, 5), "layout": layout,
                "params": desc.get("params", {}), "messages": msgs,
                "copies": counts.tolist(), "duplicates": dups.tolist(),
                "traced": int(part[["epoch", "message"]].drop_duplicates().shape[0]),
            })
    messages = [[int(e), int(m), *info.get((e, m), [-1, -1])] for e, m in chosen]
    return {"world": world, "messages": messages, "panels": panels, "subscribers": subs}


def write_replay(
    paths: Sequence[str | Path], out: str | Path, *, max_messages: int = 30
) -> Path:
    """Write the replay page of ``paths`` (trace files of one world) to ``out``."""
    data = replay_data(paths, max_messages=max_messages)
    out = Path(out)
    if not out.parent.is_dir():
        raise ParameterError(f"--out {out}: folder {out.parent} does not exist", key="out")
    title = (f"Replay: {', '.join(p['protocol'] for p in data['panels'])} on "
             f"{data['world'].get('scenario') or 'a world'} (seed {data['world'].get('seed')})")
    page = _PAGE.replace("__TITLE__", html.escape(title)).replace(
        "__DATA__", json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    )
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out


_PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 8px}
#controls{display:flex;gap:12px;align-items:center;flex-wrap:wrap;margin:8px 0}
#slider{width:420px}
.panels{display:flex;gap:12px;flex-wrap:wrap}
.panel{border:1px solid #ccc;border-radius:6px;padding:6px;width:460px}
.panel h2{font-size:14px;margin:2px 0 4px}
.panel .stats{font-size:12px;color:#555;min-height:32px}
canvas{display:block}
#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #999;border-radius:4px;
padding:4px 6px;font-size:12px;display:none;white-space:pre}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.dot{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;vertical-align:middle}
</style></head><body>
<h1>__TITLE__</h1>
<div id="controls">
 <label>message <select id="msg"></select></label>
 <button id="play" type="button">play</button>
 <input id="slider" type="range" min="0" max="1000" value="0">
 <span id="clock">t = 0 ms</span>
</div>
<div class="legend">
 <span><i class="dot" style="background:#111"></i>publisher</span>
 <span><i class="dot" style="background:#1f77b4"></i>subscriber reached</span>
 <span><i class="dot" style="background:#ff7f0e"></i>relay reached</span>
 <span><i class="dot" style="background:#bbb"></i>not yet</span>
 <span><i class="dot" style="background:#2ca02c"></i>first copy in flight</span>
 <span><i class="dot" style="background:#d62728"></i>duplicate in flight</span>
</div>
<div class="panels" id="panels"></div>
<h2 style="font-size:14px">Subscribers reached against time</h2>
<canvas id="cdf" width="640" height="260"></canvas>
<div id="tip"></div>
<script>
"use strict";
const D = __DATA__;
const W = 460, H = 380, PAD = 14;
const COLORS = ["#1f77b4","#ff7f0e","#2ca02c","#d62728","#9467bd","#8c564b","#e377c2","#7f7f7f"];
const n = D.world.n_nodes;
function frame(P){
  const xs = P.xy.map(p => p[0]), ys = P.xy.map(p => p[1]), geo = P.layout === "geo";
  let minx = geo ? -180 : Infinity, maxx = geo ? 180 : -Infinity;
  let miny = geo ? -60 : Infinity, maxy = geo ? 80 : -Infinity;
  if (!geo) for (let i = 0; i < xs.length; i++){ minx = Math.min(minx, xs[i]); maxx = Math.max(maxx, xs[i]);
    miny = Math.min(miny, ys[i]); maxy = Math.max(maxy, ys[i]); }
  const X = new Float64Array(xs.length), Y = new Float64Array(xs.length);
  for (let i = 0; i < xs.length; i++){ X[i] = PAD + (xs[i]-minx)/((maxx-minx)||1)*(W-2*PAD);
    Y[i] = H-PAD - (ys[i]-miny)/((maxy-miny)||1)*(H-2*PAD); }
  return {X: X, Y: Y, geo: geo, minx: minx, maxx: maxx, miny: miny, maxy: maxy};
}
const sel = document.getElementById("msg"), slider = document.getElementById("slider");
const clock = document.getElementById("clock"), tip = document.getElementById("tip");
D.messages.forEach((m, k) => {
  const o = document.createElement("option");
  o.value = String(k);
  o.textContent = "epoch " + m[0] + ", message " + m[1] + " (topic " + m[2] + ", from node " + m[3] + ")";
  sel.appendChild(o);
});
const panels = D.panels.map((p, k) => {
  const div = document.createElement("div"); div.className = "panel";
  const h = document.createElement("h2"); h.textContent = p.protocol; div.appendChild(h);
  const c = document.createElement("canvas"); c.width = W; c.height = H; div.appendChild(c);
  const s = document.createElement("div"); s.className = "stats"; div.appendChild(s);
  document.getElementById("panels").appendChild(div);
  return {p: p, canvas: c, ctx: c.getContext("2d"), stats: s, color: COLORS[k % COLORS.length],
          g: frame(p)};
});
function current(){ const m = D.messages[Number(sel.value) || 0]; return m; }
function key(m){ return m[0] + ":" + m[1]; }
function tmax(){
  const m = current(); let t = 1;
  for (const P of panels){ const c = P.p.messages[key(m)]; if (c) for (const v of c.t1) if (v > t) t = v; }
  return t;
}
function subsOf(topic){ const s = D.subscribers[String(topic)]; return s ? s : []; }
function drawPanel(P, t){
  const ctx = P.ctx, m = current(), c = P.p.messages[key(m)], G = P.g;
  const px = i => G.X[i], py = i => G.Y[i], minx = G.minx, maxx = G.maxx, miny = G.miny, maxy = G.maxy;
  ctx.clearRect(0, 0, W, H);
  if (G.geo){ ctx.strokeStyle = "#eee"; ctx.lineWidth = 1;
    for (let lon = -180; lon <= 180; lon += 30){ ctx.beginPath();
      const x = PAD + (lon-minx)/(maxx-minx)*(W-2*PAD); ctx.moveTo(x, PAD); ctx.lineTo(x, H-PAD); ctx.stroke(); }
    for (let lat = -60; lat <= 80; lat += 20){ ctx.beginPath();
      const y = H-PAD - (lat-miny)/(maxy-miny)*(H-2*PAD); ctx.moveTo(PAD, y); ctx.lineTo(W-PAD, y); ctx.stroke(); } }
  ctx.strokeStyle = "rgba(0,0,0," + Math.min(0.12, 30 / Math.max(1, P.p.links.length)).toFixed(4) + ")";
  ctx.lineWidth = 1; ctx.beginPath();
  for (const e of P.p.links){ ctx.moveTo(px(e[0]), py(e[0])); ctx.lineTo(px(e[1]), py(e[1])); }
  ctx.stroke();
  const reached = new Float64Array(n).fill(Infinity);
  let first = 0, dup = 0, flying = 0;
  if (c){
    ctx.strokeStyle = "rgba(31,119,180,0.55)"; ctx.lineWidth = 1.2; ctx.beginPath();
    for (let i = 0; i < c.s.length; i++){
      if (c.t1[i] <= t){ if (c.f[i]){ first++; reached[c.r[i]] = c.t1[i];
          ctx.moveTo(px(c.s[i]), py(c.s[i])); ctx.lineTo(px(c.r[i]), py(c.r[i])); } else dup++; }
    }
    ctx.stroke();
  }
  const subs = new Set(subsOf(m[2]));
  for (let v = 0; v < n; v++){
    let col = "#bbb";
    if (v === m[3]) col = "#111";
    else if (reached[v] <= t) col = subs.has(v) ? "#1f77b4" : "#ff7f0e";
    ctx.fillStyle = col; ctx.beginPath(); ctx.arc(px(v), py(v), v === m[3] ? 5 : 3, 0, 2*Math.PI); ctx.fill();
  }
  if (c){
    for (let i = 0; i < c.s.length; i++){
      if (c.t0[i] <= t && t < c.t1[i]){ flying++;
        const a = (t - c.t0[i]) / ((c.t1[i] - c.t0[i]) || 1);
        const x = px(c.s[i]) + a*(px(c.r[i]) - px(c.s[i])), y = py(c.s[i]) + a*(py(c.r[i]) - py(c.s[i]));
        ctx.fillStyle = c.f[i] ? "#2ca02c" : "#d62728"; ctx.beginPath(); ctx.arc(x, y, 2.5, 0, 2*Math.PI); ctx.fill(); }
    }
  }
  let want = 0, got = 0;
  for (const v of subs){ if (v !== m[3]){ want++; if (reached[v] <= t) got++; } }
  P.stats.textContent = "reached " + got + " of " + want + " subscribers; copies arrived: " + first +
    " first, " + dup + " duplicates; in flight " + flying + (c ? "" : " (message not traced here)");
  P.reached = reached;
}
function drawCdf(){
  const cv = document.getElementById("cdf"), ctx = cv.getContext("2d"), m = current(), T = tmax();
  const w = cv.width, h = cv.height, L = 48, B = 28;
  ctx.clearRect(0, 0, w, h); ctx.strokeStyle = "#999"; ctx.lineWidth = 1; ctx.beginPath();
  ctx.moveTo(L, 8); ctx.lineTo(L, h-B); ctx.lineTo(w-8, h-B); ctx.stroke();
  ctx.fillStyle = "#555"; ctx.font = "11px sans-serif";
  ctx.fillText("1.0", 20, 12); ctx.fillText("0", 34, h-B); ctx.fillText("0 ms", L, h-10);
  ctx.fillText(T.toFixed(0) + " ms", w-60, h-10);
  const subs = new Set(subsOf(m[2])); subs.delete(m[3]);
  panels.forEach((P, k) => {
    const c = P.p.messages[key(m)]; if (!c || subs.size === 0) return;
    const ts = []; for (let i = 0; i < c.s.length; i++) if (c.f[i] && subs.has(c.r[i])) ts.push(c.t1[i]);
    ts.sort((a, b) => a - b);
    ctx.strokeStyle = P.color; ctx.lineWidth = 2; ctx.beginPath(); ctx.moveTo(L, h-B);
    ts.forEach((v, i) => { const x = L + v/T*(w-L-8), y = h-B - (i+1)/subs.size*(h-B-8);
      ctx.lineTo(x, h-B - i/subs.size*(h-B-8)); ctx.lineTo(x, y); });
    ctx.stroke(); ctx.fillStyle = P.color; ctx.fillText(P.p.protocol, w-140, 18 + 14*k);
  });
  const x = L + Number(slider.value)/1000*(w-L-8);
  ctx.strokeStyle = "#444"; ctx.setLineDash([4, 3]); ctx.beginPath(); ctx.moveTo(x, 8); ctx.lineTo(x, h-B); ctx.stroke();
  ctx.setLineDash([]);
}
function render(){
  const t = Number(slider.value)/1000*tmax();
  clock.textContent = "t = " + t.toFixed(1) + " ms of " + tmax().toFixed(1);
  for (const P of panels) drawPanel(P, t);
  drawCdf();
}
let timer = null;
document.getElementById("play").addEventListener("click", () => {
  if (timer){ clearInterval(timer); timer = null; return; }
  if (Number(slider.value) >= 1000) slider.value = "0";
  timer = setInterval(() => { const v = Number(slider.value) + 5; slider.value = String(Math.min(v, 1000));
    render(); if (v >= 1000){ clearInterval(timer); timer = null; } }, 40);
});
slider.addEventListener("input", render);
sel.addEventListener("change", () => { slider.value = "0"; render(); });
for (const P of panels){
  P.canvas.addEventListener("mousemove", ev => {
    const r = P.canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    let best = -1, bd = 64;
    for (let v = 0; v < n; v++){ const d = (P.g.X[v]-x)**2 + (P.g.Y[v]-y)**2; if (d < bd){ bd = d; best = v; } }
    if (best < 0){ tip.style.display = "none"; return; }
    const m = current(), c = P.p.messages[key(m)];
    let got = 0, dups = 0, at = null, hops = null;
    if (c) for (let i = 0; i < c.r.length; i++) if (c.r[i] === best){ got++; if (c.f[i]){ at = c.t1[i]; hops = c.h[i]; } else dups++; }
    tip.textContent = P.p.protocol + ", node " + best + (best === m[3] ? " (publisher)" : "") +
      "\nthis message: " + got + " copies, " + dups + " duplicates" +
      (at === null ? "" : "\nfirst copy at " + at.toFixed(1) + " ms, " + hops + " hops") +
      "\nall " + P.p.traced + " traced messages: " + P.p.copies[best] + " copies, " + P.p.duplicates[best] + " duplicates";
    tip.style.left = (ev.clientX + 12) + "px"; tip.style.top = (ev.clientY + 12) + "px"; tip.style.display = "block";
  });
  P.canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
}
// a link may start at a message and an instant: #m=K&t=0.4 (t as a share of the message's span)
(function(){
  const q = new URLSearchParams(location.hash.slice(1));
  if (q.has("m") && Number(q.get("m")) < D.messages.length) sel.value = String(Number(q.get("m")));
  if (q.has("t")) slider.value = String(Math.round(1000*Math.min(1, Math.max(0, Number(q.get("t")) || 0))));
})();
render();
</script></body></html>
"""
