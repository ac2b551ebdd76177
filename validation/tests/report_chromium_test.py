#!/usr/bin/env python3
"""The HTML validation report in headless Chromium: it renders, its plots exist, and it fetches nothing.

Generates a report from the committed 4x H200 data with the commsim under test, loads it in headless Chromium
with name resolution disabled and a network log, and checks:
  - the screenshot is a real rendering (not blank);
  - the DOM Chromium parsed holds the plots and the heatmap;
  - the page started no request other than file:// (browser housekeeping traffic, which has no file://
    network isolation key, is ignored).
A probe page with one remote image proves the network check can fail. Exits 77 (CTest: skipped) when Chromium
is not installed.

  report_chromium_test.py --commsim build/default/sim/commsim --source-dir . --work /tmp/report-test
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(browser, work, page, tag, *extra):
    profile = os.path.join(work, "profile-" + tag)
    netlog = os.path.join(work, "net-" + tag + ".json")
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--user-data-dir=" + profile, "--host-resolver-rules=MAP * ~NOTFOUND",
           "--log-net-log=" + netlog, *extra, "file://" + os.path.abspath(page)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120, check=True)
    return out.stdout.decode("utf-8", "replace"), netlog


def page_requests(netlog):
    """URLs other than file:// that a page loaded from a file asked for."""
    with open(netlog) as f:
        log = json.load(f)
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for e in log["events"]:
        p = e.get("params", {})
        if e["type"] == start_job and "file://" in p.get("network_isolation_key", ""):
            if not p.get("url", "").startswith("file://"):
                urls.append(p["url"])
    return urls


def png_stats(path):
    """(width, height, distinct byte values in the decompressed image data)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commsim", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    browser = chromium()
    if browser is None:
        print("SKIP: Chromium is not installed (apt-get install chromium); the HTML report was not rendered")
        return SKIP
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    d = os.path.join(args.source_dir, "validation/data/h200x4")
    report = os.path.join(args.work, "report.html")
    subprocess.run([args.commsim, "validate",
                    "--topology", os.path.join(args.source_dir, "topologies/library/real/h200x4.topo"),
                    "--params", os.path.join(args.source_dir, "models/params/h200.toml"),
                    "--measured", os.path.join(d, "measure/p2p_all"), os.path.join(d, "measure/exchange_batched"),
                    "--report", report], stdout=subprocess.DEVNULL, check=True)

    failures = []
    shot = os.path.join(args.work, "shot.png")
    _, netlog = run_chromium(browser, args.work, report, "shot", "--window-size=1300,2000",
                             "--screenshot=" + shot)
    width, height, distinct = png_stats(shot)
    if (width, height) != (1300, 2000) or distinct < 16:
        failures.append(f"screenshot {width}x{height} with {distinct} distinct byte values: not a rendering")
    fetched = page_requests(netlog)
    if fetched:
        failures.append("the report fetched " + ", ".join(fetched))

    dom, _ = run_chromium(browser, args.work, report, "dom", "--dump-dom")
    charts = dom.count('<svg class="chart"')
    cells = dom.count('<rect class="cell"')
    if charts != 2 * 13 or cells == 0 or "<h2 id=\"worst\">" not in dom:
        failures.append(f"parsed DOM has {charts} charts (want 26: 12 p2p pairs + 1 exchange, 2 each) "
                        f"and {cells} heatmap cells")

    probe = os.path.join(args.work, "probe.html")
    with open(probe, "w") as f:
        f.write('<html><body><img src="http://commsim-probe.invalid/x.png">probe</body></html>')
    _, probe_log = run_chromium(browser, args.work, probe, "probe", "--dump-dom")
    if not any("commsim-probe.invalid" in u for u in page_requests(probe_log)):
        failures.append("the network check did not see the probe page's remote image: it cannot fail")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: rendered {width}x{height}, {charts} charts, {cells} heatmap cells, no network requests")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
