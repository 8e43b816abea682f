#!/usr/bin/env python3
"""graft's browser runtime vs onnxruntime-web 1.30 (wasm backend), in the same headless Chromium.

    (cd bench/web && npm ci)        # onnxruntime-web, from the npm registry
    /usr/bin/python3 bench/web/run.py --graft build/release/bin/graft --dist build/web/web/dist \\
        --kit ../shared/bench [--models mlp,smallcnn,lstm] [--seconds 1.5] [--json out.json]

For each bench model (the kit's model.onnx; graft runs the descriptor `graft convert` makes of that
same file), batch 1 and 32, with 1 and then 2 intra-op threads (a fresh browser each, the page served
with COOP/COEP so that both runtimes may use threads), the page times both runtimes alternately and
checks both outputs against the kit's tfjs references. Prints a Markdown table: the median and the
best of the blocks' mean time per run, and the ratio of the medians graft / onnxruntime-web (below 1
is graft faster).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "web"))
import browser  # noqa: E402  (web/browser.py)


def prepare(a, out, models):
    import numpy as np  # Debian python3-numpy

    index = {"models": []}
    for name in models:
        kit = os.path.join(a.kit, "models", name)
        man = json.load(open(os.path.join(kit, "manifest.json")))
        d = os.path.join(out, name)
        os.makedirs(d)
        subprocess.run([a.graft, "convert", os.path.join(kit, man["onnx"]), "-o", os.path.join(d, "descriptor")], check=True)
        i, o = man["inputs"][0], man["outputs"][0]
        m = {"name": name, "input": i["name"], "output": o["name"], "batches": []}
        for key, fname in sorted(i["files"].items(), key=lambda kv: int(kv[0][1:])):
            x = np.load(os.path.join(kit, fname)).astype("<f4")
            y = np.load(os.path.join(kit, o["files"][key])).astype("<f4")
            x.tofile(os.path.join(d, "input_%s.bin" % key))
            y.tofile(os.path.join(d, "output_%s.bin" % key))
            m["batches"].append({"batch": int(key[1:]), "input": "input_%s.bin" % key, "output": "output_%s.bin" % key,
                                 "shape": list(x.shape)})
        index["models"].append(m)
    json.dump(index, open(os.path.join(out, "bench.json"), "w"), indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graft", required=True, help="the host graft tool (to convert model.onnx)")
    ap.add_argument("--dist", required=True, help="the web build's output (build/web/web/dist)")
    ap.add_argument("--kit", required=True, help="the bench kit (../shared/bench)")
    ap.add_argument("--models", default="mlp,smallcnn,lstm")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--seconds", type=float, default=1.5, help="timing per runtime per row")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--chromium")
    a = ap.parse_args()

    ort = os.path.join(HERE, "node_modules", "onnxruntime-web", "dist")
    if not os.path.isfile(os.path.join(ort, "ort.wasm.min.mjs")):
        sys.exit("bench/web/run.py: onnxruntime-web is not installed: run `npm ci` in bench/web")
    chromium = browser.find_chromium(a.chromium)
    if not chromium:
        sys.exit("bench/web/run.py: no Chromium (apt-get install chromium)")
    rows, meta = [], {}
    with tempfile.TemporaryDirectory(prefix="graft-bench-web-") as cases:
        prepare(a, cases, a.models.split(","))
        mounts = ["/dist/=" + a.dist, "/ort/=" + ort, "/kit/=" + os.path.join(a.kit, "models"), "/cases/=" + cases,
                  "/bench/=" + HERE]
        for t in a.threads.split(","):
            report = browser.open_page(chromium, mounts, "/bench/index.html?threads=%s&seconds=%g" % (t, a.seconds), True,
                                       timeout=600)
            if not report.get("ok"):
                sys.exit("the benchmark page failed: %s" % report.get("error"))
            rows += report["rows"]
            meta["userAgent"] = report.get("userAgent")

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    print("\n%s, %d cores; %s\n" % (cpu, os.cpu_count(), meta.get("userAgent")))
    print("| model | batch | threads | graft-wasm ms | onnxruntime-web ms | graft / ORT | graft min ms | ORT min ms | graft build | "
          "threaded build x1 ms | max abs err graft / ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        g1 = r.get("graft_threads_build_1_ms")
        print("| %s | %d | %d | %.4f | %.4f | **%.2f** | %.4f | %.4f | %s x%d | %s | %.1e / %.1e |" % (
            r["model"], r["batch"], r["threads"], r["graft_ms"], r["ort_ms"], r["ratio"], r["graft_min_ms"], r["ort_min_ms"],
            r["graft_backend"], r["graft_threads"], "%.4f" % g1 if g1 else "", r["graft_err"], r["ort_err"]))
    if a.json:
        json.dump({"cpu": cpu, "rows": rows, **meta}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
