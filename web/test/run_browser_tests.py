#!/usr/bin/env python3
"""graft's browser tests: every Keras fixture's descriptor (and every torch-exported ONNX fixture's) run
by the WebAssembly runtime in headless Chromium and compared with its tfjs (torch) reference, plus
descriptors broken on purpose.

    run_browser_tests.py prepare --graft build/dev/bin/graft --plugins build/dev/plugins \\
                                 --fixtures tests/fixtures/keras --out build/dev/web-cases
    run_browser_tests.py run --dist build/web/web/dist --cases build/dev/web-cases --mode simd

`prepare` converts each fixture on the host (`graft convert`, the way a user does), writes its inputs
and reference outputs as raw little-endian arrays, and makes the broken descriptors. `run` serves the
runtime, the cases and the test page (web/serve.py), opens the page in headless Chromium and waits
for the page's report. Modes:

  simd      the single-threaded build (threads: 1), page not crossOriginIsolated
  threads   the threaded build, page served with COOP/COEP, every core
  fallback  threads "auto" on a page without COOP/COEP: graft must fall back to the SIMD build
  sample    the sample page (samples/web) classifying its six flowers (the case "iris", prepared
            from samples/models/iris with --case)

Exit status: 0 pass, 1 fail, 77 skipped (no Chromium, or the web build is missing), 2 timeout.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import browser  # noqa: E402  (web/browser.py)
SKIP = 77
GRAFT_DTYPES = {"float32", "int32", "int64", "uint8", "uint16", "int8", "bool"}


def prepare(a):
    import numpy as np  # Debian python3-numpy (scripts/deps.sh)

    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    cases, failures = [], []
    dirs = [os.path.join(f, n) for f in a.fixtures for n in sorted(os.listdir(f))] + a.case
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        man_path = os.path.join(d, "manifest.json")
        if not os.path.isfile(man_path):
            continue
        man = json.load(open(man_path))
        out = os.path.join(a.out, name)
        os.makedirs(out)
        cmd = [a.graft, "convert", "-o", os.path.join(out, "descriptor"), "--plugin", a.plugins]
        if "config" in man:
            cmd += ["--config", os.path.join(d, man["config"]), "--weights", os.path.join(d, man["model"])]
        else:
            cmd += [os.path.join(d, man["model"])]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("%s: graft convert failed: %s" % (name, (p.stderr or p.stdout).strip()))
            continue
        entry = {"name": name, "atol": man.get("atol", 1e-5), "rtol": man.get("rtol", 1e-5), "inputs": [], "outputs": []}
        # A model with free sizes also runs at the sizes of its more_runs (same loaded model).
        runs = [(entry, man, "")]
        for k, more in enumerate(man.get("more_runs", []), 1):
            entry.setdefault("more_runs", []).append({"inputs": [], "outputs": []})
            runs.append((entry["more_runs"][-1], more, "r%d_" % k))
        for target, source, prefix in runs:
            for kind in ("inputs", "outputs"):
                for i, v in enumerate(source[kind]):
                    arr = np.load(os.path.join(d, v["file"]))
                    if arr.dtype == np.float64:
                        arr = arr.astype(np.float32)
                    dtype = "bool" if arr.dtype == np.bool_ else str(arr.dtype)
                    if dtype not in GRAFT_DTYPES:
                        failures.append("%s: %s '%s' has dtype %s" % (name, kind, v["name"], arr.dtype))
                        continue
                    fname = "%s%s%d.bin" % (prefix, kind[0], i)
                    np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tofile(os.path.join(out, fname))
                    target[kind].append({"name": v["name"], "dtype": dtype, "shape": list(arr.shape), "file": fname})
        cases.append(entry)

    for t in a.torch:  # ONNX models exported by torch, with torch's forward as the reference
        for entry in json.load(open(os.path.join(t, "manifest.json")))["models"]:
            name = "torch_" + os.path.splitext(entry["file"])[0]
            out = os.path.join(a.out, name)
            os.makedirs(out)
            desc = os.path.join(out, "descriptor")
            p = subprocess.run([a.graft, "convert", "-o", desc, os.path.join(t, entry["file"])], capture_output=True, text=True)
            if p.returncode != 0:
                failures.append("%s: graft convert failed: %s" % (name, (p.stderr or p.stdout).strip()))
                continue
            graph = json.load(open(os.path.join(desc, "graph.json")))
            # 1e-5 as for the Keras fixtures (the host test allows 1e-4; the worst seen here is 3.8e-6,
            # and WebAssembly's float arithmetic is the same on every CPU: no fused multiply-adds).
            entry_case = {"name": name, "atol": 1e-5, "rtol": 1e-5, "inputs": [], "outputs": []}
            for kind, key, suffix in (("inputs", "x", "i0.bin"), ("outputs", "y", "o0.bin")):
                arr = np.load(os.path.join(t, "%s_%s_b%d.npy" % (entry["model"], key, entry["batches"][-1])))
                arr.astype("<f4").tofile(os.path.join(out, suffix))
                entry_case[kind].append({"name": graph[kind][0]["name"], "dtype": "float32", "shape": list(arr.shape),
                                         "file": suffix})
            cases.append(entry_case)

    with_weights = [c["name"] for c in cases if os.path.getsize(os.path.join(a.out, c["name"], "descriptor", "weights.bin"))]
    bad = make_bad(a.out, with_weights[0] if with_weights else None)
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump({"cases": cases, "bad": bad}, f, indent=1)
    print("prepared %d cases and %d broken descriptors in %s" % (len(cases), len(bad), a.out))
    for msg in failures:
        print("FAIL " + msg, file=sys.stderr)
    return 1 if failures else 0


def make_bad(root, source):
    """Descriptors broken the ways a download or an edit breaks them, with the words the error must hold."""
    if not source:
        return []
    src = os.path.join(root, source, "descriptor")
    graph = open(os.path.join(src, "graph.json"), encoding="utf-8").read()
    weights = open(os.path.join(src, "weights.bin"), "rb").read()
    flipped = bytearray(weights)
    if flipped:
        flipped[len(flipped) // 2] ^= 0x55
    unknown = json.loads(graph)
    unknown["operators"][0]["type"] = "NoSuchOp"
    future = json.loads(graph)
    future["format_version"] = 99
    outside = json.loads(graph)
    const = next(v for v in outside["variables"] if "offset" in v)
    const["offset"] = (len(weights) + 63) // 64 * 64 + 64 * 1024  # aligned, past the end
    kinds = [
        ("corrupt_weights", graph, bytes(flipped), "format", ["CRC-32"]),
        ("truncated_weights", graph, weights[: len(weights) // 2], "format", ["weights.bin has", "bytes"]),
        ("truncated_json", graph[: len(graph) // 3], weights, "format", ["not valid JSON"]),
        ("unknown_op", json.dumps(unknown), weights, "unsupported", ["unknown op type 'NoSuchOp'"]),
        ("future_version", json.dumps(future), weights, "format", ["format version 99"]),
        ("constant_outside", json.dumps(outside), weights, "format", ["lie outside", const["name"]]),
    ]
    out = []
    for name, g, w, kind, words in kinds:
        d = os.path.join(root, "bad", name)
        os.makedirs(d)
        open(os.path.join(d, "graph.json"), "w", encoding="utf-8").write(g)
        open(os.path.join(d, "weights.bin"), "wb").write(w)
        out.append({"name": name, "kind": kind, "words": words})
    return out


def run(a):
    chromium = browser.find_chromium(a.chromium)
    if not chromium:
        print("SKIP: no Chromium (Debian: apt-get install chromium; scripts/deps.sh installs it for the test command)")
        return SKIP
    if not os.path.isfile(os.path.join(a.dist, "graft-simd.mjs")) or not os.path.isfile(os.path.join(a.dist, "graft-threads.mjs")):
        print("SKIP: the browser runtime is not built in %s (cmake --preset web && cmake --build --preset web; "
              "scripts/test.sh does it when emcc is installed)" % a.dist)
        return SKIP
    if not os.path.isfile(os.path.join(a.cases, "index.json")):
        print("FAIL: no prepared cases in %s (run_browser_tests.py prepare)" % a.cases, file=sys.stderr)
        return 1

    if a.mode == "sample":  # the sample page as samples/web/serve.sh serves it, checking itself
        mounts = ["/=" + os.path.join(REPO, "samples", "web"), "/graft/=" + a.dist,
                  "/models/iris/=" + os.path.join(a.cases, "iris", "descriptor"),
                  "/sample/=" + os.path.join(REPO, "samples", "models", "iris")]
        page = "/index.html?selftest"
    else:
        mounts = ["/dist/=" + a.dist, "/cases/=" + a.cases, "/test/=" + HERE]
        page = "/test/index.html?mode=" + a.mode
    try:
        data = browser.open_page(chromium, mounts, page, a.mode in ("threads", "sample"), a.timeout)
    except browser.Timeout as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 2
    if a.mode == "sample":
        for line in data.get("lines", []):
            print(line)
    print("%s: %s" % (a.mode, "PASS" if data.get("ok") else "FAIL"))
    return 0 if data.get("ok") else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--graft", required=True)
    p.add_argument("--plugins", required=True, help="the plugin directory (the fixtures with custom layers)")
    p.add_argument("--fixtures", required=True, action="append", help="a folder of fixture folders (repeatable)")
    p.add_argument("--case", action="append", default=[], help="one more fixture folder (repeatable)")
    p.add_argument("--torch", action="append", default=[], help="a folder of torch-exported ONNX models with a manifest.json")
    p.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dist", required=True)
    r.add_argument("--cases", required=True)
    r.add_argument("--mode", choices=["simd", "threads", "fallback", "sample"], required=True)
    r.add_argument("--chromium")
    r.add_argument("--timeout", type=float, default=240)
    a = ap.parse_args()
    return prepare(a) if a.cmd == "prepare" else run(a)


if __name__ == "__main__":
    sys.exit(main())
