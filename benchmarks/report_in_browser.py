"""Open HTML reports in headless Chromium, as a person would, and say what the browser saw.

Usage::

    python benchmarks/report_in_browser.py REPORT.html [...] [--screenshot-dir DIR]

For each report: a copy with a probe script appended is loaded with ``--dump-dom``; after
``load`` the probe writes the number of images, those not decoded
(``!img.complete || img.naturalWidth == 0``) and the ``window.onerror`` events into the page,
and the browser's console (``--enable-logging=stderr --v=0``) is scanned for messages the page
logged. With ``--screenshot-dir`` the report's first screen (1280x900) is saved as
``<name>.png`` beside the JSON line printed per report. Exits 1 when a report has an undecoded
image, a script error or a console message, and 2 when no Chromium is found (name it with
``--chromium`` or ``CHROMIUM``); the HTML reports need no network, so neither does this check.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message)));
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const bad = imgs.filter(i => !i.complete || i.naturalWidth === 0).length;
  const out = document.createElement("pre");
  out.id = "hedgerow-probe";
  out.textContent = JSON.stringify({images: imgs.length, undecoded: bad,
                                    errors: window.__errors});
  document.body.appendChild(out);
});
</script>
"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
         "--virtual-time-budget=10000"]
CONSOLE = re.compile(r'CONSOLE\(\d+\)\]? ?"(.*)"|:CONSOLE:?\d*\] "(.*)"')


def find_chromium(given: str | None) -> str | None:
    for name in (given, os.environ.get("CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome"):
        if name and (path := shutil.which(name)):
            return path
    return None


def check(chromium: str, report: Path, shots: Path | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        probed = Path(tmp) / report.name
        probed.write_text(report.read_text(encoding="utf-8") + PROBE, encoding="utf-8")
        run = subprocess.run(
            [chromium, *FLAGS, "--enable-logging=stderr", "--v=0", "--dump-dom",
             probed.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="hedgerow-probe">(.*?)</pre>', run.stdout, re.S)
    probe = json.loads(found.group(1).replace("&quot;", '"')) if found else None
    console = [m.group(1) or m.group(2) for m in CONSOLE.finditer(run.stderr)]
    row = {"report": str(report), "probe_ran": probe is not None, **(probe or {}),
           "console_messages": console}
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        png = shots / f"{report.stem}.png"
        subprocess.run([chromium, *FLAGS, f"--screenshot={png}", "--window-size=1280,900",
                        report.resolve().as_uri()], capture_output=True, timeout=120)
        row["screenshot"] = str(png) if png.exists() else None
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", type=Path)
    ap.add_argument("--screenshot-dir", type=Path, default=None)
    ap.add_argument("--chromium", default=None)
    args = ap.parse_args()
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("error: no Chromium found; install it (Debian: apt install chromium) or name it "
              "with --chromium PATH or CHROMIUM=PATH", file=sys.stderr)
        return 2
    ok = True
    for report in args.reports:
        if not report.is_file():
            print(f"error: {report}: no such report", file=sys.stderr)
            return 2
        row = check(chromium, report, args.screenshot_dir)
        ok &= (row["probe_ran"] and row.get("undecoded", 1) == 0 and not row.get("errors")
               and not row["console_messages"])
        print(json.dumps(row))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
