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


def _page() -> str:
    """The page template (``replay_page.html`` beside this module: HTML, CSS and the script)."""
    from importlib.resources import files

    return files("hedgerow.figures").joinpath("replay_page.html").read_text(encoding="utf-8")


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

    Each protocol is shown in its latest traced epoch (a static protocol's run is epoch 0, an
    adaptive one's its last, so their messages differ unless both traced one epoch of the
    same traffic; the message list says which).  Returns a dict: ``world`` (geometry,
    scenario, seed, fingerprint), ``messages`` (``[index, label]``, at most ``max_messages``
    indices every protocol traced), ``panels`` (per protocol: layout, links, and per message
    its epoch, topic, publisher and copies as columns ``s, r, t0, t1, f, h``),
    ``subscribers`` (per topic) and per-node copy counts over every traced message.
    """
    if not paths:
        raise ParameterError("replay needs at least one trace file", key="traces")
    frames, world = [], None
    for p in paths:
        df, meta = read_trace(p)
        w: dict[str, Any] = {k: meta.get(k) for k in ("world", "scenario", "seed", "n_nodes",
                                                      "coords", "positions")}
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
    # each protocol's latest traced epoch (a static protocol's run is epoch 0, an adaptive one's
    # its last): the messages it traced there, by index; the page shows the indices all share
    parts = []
    for df, meta in frames:
        for proto, part in df.groupby("protocol", sort=False):
            part = part[part["epoch"] == part["epoch"].max()]
            parts.append((proto, part, meta["protocols"].get(proto, {})))
    common = None
    for _, part, _ in parts:
        ids = set(part["message"].unique().tolist())
        common = ids if common is None else common & ids
    if not common:
        raise ParameterError("the traces share no message index (different samples?)",
                             key="traces")
    chosen = sorted(common)[:max_messages]
    n = int(world["n_nodes"])
    panels: list[dict[str, Any]] = []
    seen: dict[int, set[tuple[int, int, int]]] = {}
    for proto, part, desc in parts:
        counts = np.bincount(part["receiver"].to_numpy(), minlength=n)
        dups = np.bincount(part.loc[~part["first"], "receiver"].to_numpy(), minlength=n)
        xy, layout = _layout(world, proto)
        msgs = {}
        for mi, g in part[part["message"].isin(chosen)].groupby("message"):
            g = g.sort_values(["arrival_ms", "receiver"], kind="stable")
            head = (int(g["epoch"].iat[0]), int(g["topic"].iat[0]), int(g["publisher"].iat[0]))
            seen.setdefault(int(mi), set()).add(head)
            msgs[str(int(mi))] = {
                "epoch": head[0], "topic": head[1], "pub": head[2],
                "s": g["sender"].tolist(), "r": g["receiver"].tolist(),
                "t0": _round(g["send_ms"]), "t1": _round(g["arrival_ms"]),
                "f": g["first"].astype(int).tolist(), "h": g["hops"].tolist(),
            }
        panels.append({
            "protocol": proto, "links": desc.get("links", []),
            "xy": _round(xy, 5), "layout": layout,
            "params": desc.get("params", {}), "messages": msgs,
            "copies": counts.tolist(), "duplicates": dups.tolist(),
            "traced": int(part["message"].nunique()),
        })
    messages = []
    for mi in chosen:
        heads = seen.get(mi, set())
        if len(heads) == 1:
            e, t, pub = next(iter(heads))
            label = f"message {mi} (epoch {e}, topic {t}, from node {pub})"
        else:
            label = f"message {mi} (each protocol's last epoch: different messages)"
        messages.append([mi, label])
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
    page = _page().replace("__TITLE__", html.escape(title)).replace(
        "__DATA__", json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    )
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out
