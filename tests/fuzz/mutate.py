#!/usr/bin/env python3
"""A seeded mutation campaign against the graft tool: byte-level variants of real model files.

    mutate.py GRAFT [--count N] [--seed S] [--timeout SEC] [--mode boxed|in-process|both]
              [--corpus DIR ...] [--keep DIR] [--jobs J]

Seeds are every model.h5 / model.keras under the corpus directories (default: the shared corpus
../shared/corpus/keras-real and tests/fixtures/keras), each run with the inputs its manifest.json
names. Variant i of a campaign is fully determined by (seed, i): a seed file and one mutation,
  flip      XOR 1-8 random bytes with random non-zero values;
  integer   overwrite 1, 2, 4 or 8 bytes at a random offset with an "interesting" little-endian
            integer (0, 1, -1, 2^7, 2^15, 2^31, 2^32-1, 2^63-1, a random one, the old value +-1);
  truncate  cut the file at a random offset.
Each variant runs `graft run MODEL --input ... --output OUT` with a wall-clock timeout, in each
mode asked for (boxed: the default sandboxed HDF5 reader; in-process: --hdf5-in-process), and is
counted as
  ok        exit 0;
  error     exit 1 with one "graft: error: <kind> error: ..." line (a clean typed error);
  crash     killed by a signal (or an exit status over 128, a shell's way of saying so);
  hang      still running at the timeout (killed);
  other     anything else (another exit status, or exit 1 without graft's error line).
Crashing, hanging and "other" variants are copied to --keep (named seed-index-mode.ext) with the
tool's stderr, to become fixtures. Prints a summary per mode; exits 1 if any crash or hang.
"""
import argparse
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
INTERESTING = [0, 1, 0xFF, 0x80, 0x7F, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
               0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF]


def seeds(corpus_dirs):
    """(model path, [(input name, npy path)]) for every case with a manifest."""
    out = []
    for d in corpus_dirs:
        for manifest in sorted(Path(d).glob("*/manifest.json")):
            try:
                m = json.loads(manifest.read_text())
            except ValueError:
                continue
            if m.get("needs_plugin"):
                continue
            model = manifest.parent / m.get("model", "model.h5")
            if model.suffix not in (".h5", ".keras") or not model.is_file():
                continue
            inputs = [(i["name"], manifest.parent / i["file"]) for i in m.get("inputs", [])]
            out.append((model, inputs))
    return out


def mutate(data, rng):
    """One mutation of `data` (bytes); returns (new bytes, description)."""
    b = bytearray(data)
    kind = rng.choice(["flip", "integer", "truncate"])
    if kind == "flip" or len(b) < 16:
        offsets = [rng.randrange(len(b)) for _ in range(rng.randint(1, 8))]
        for o in offsets:
            b[o] ^= rng.randint(1, 255)
        return bytes(b), "flip@" + ",".join(map(str, offsets))
    if kind == "integer":
        width = rng.choice([1, 2, 4, 8])
        o = rng.randrange(len(b) - width)
        old = int.from_bytes(b[o:o + width], "little")
        choice = rng.randrange(len(INTERESTING) + 3)
        if choice < len(INTERESTING):
            v = INTERESTING[choice]
        elif choice == len(INTERESTING):
            v = rng.getrandbits(8 * width)
        else:
            v = old + rng.choice([-1, 1])
        v &= (1 << (8 * width)) - 1
        b[o:o + width] = v.to_bytes(width, "little")
        return bytes(b), f"int{8 * width}@{o}={v:#x}"
    cut = rng.randrange(len(b))
    return bytes(b[:cut]), f"truncate@{cut}"


def classify(proc_rc, err, timed_out):
    if timed_out:
        return "hang"
    if proc_rc < 0 or proc_rc > 128:
        return "crash"
    if proc_rc == 0:
        return "ok"
    lines = [l for l in err.split("\n") if l.strip()]  # (not splitlines: a name may hold \x1c-\x1e)
    if proc_rc == 1 and len(lines) == 1 and lines[0].startswith("graft: error: "):
        return "error"
    return "other"


def run_one(graft, model, inputs, mode, timeout, workdir):
    cmd = [graft, "run", str(model)]
    if mode == "in-process":
        cmd.append("--hdf5-in-process")
    for name, path in inputs:
        cmd += ["--input", f"{name}={path}"]
    cmd += ["--output", str(workdir / "out.npy")]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
        return p.returncode, err.decode(errors="replace"), False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the tool and its HDF5 reader
        _, err = p.communicate()
        return p.returncode, err.decode(errors="replace"), True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graft")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--mode", choices=["boxed", "in-process", "both"], default="both")
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--keep", default=None, help="where crashing/hanging variants are copied")
    ap.add_argument("--first", type=int, default=0, help="index of the first variant (to resume)")
    args = ap.parse_args()

    corpus = args.corpus or [str(SOURCE.parent / "shared/corpus/keras-real"), str(SOURCE / "tests/fixtures/keras")]
    cases = seeds([d for d in corpus if Path(d).is_dir()])
    if not cases:
        sys.exit("no seed models found in " + ", ".join(corpus))
    modes = ["boxed", "in-process"] if args.mode == "both" else [args.mode]
    counts = {m: {k: 0 for k in ("ok", "error", "crash", "hang", "other")} for m in modes}
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="graft-mutate.") as tmp:
        tmp = Path(tmp)
        for i in range(args.first, args.first + args.count):
            rng = random.Random(f"{args.seed}:{i}")
            model, inputs = cases[rng.randrange(len(cases))]
            data, how = mutate(model.read_bytes(), rng)
            variant = tmp / ("variant" + model.suffix)
            variant.write_bytes(data)
            for mode in modes:
                rc, err, timed_out = run_one(args.graft, variant, inputs, mode, args.timeout, tmp)
                kind = classify(rc, err, timed_out)
                counts[mode][kind] += 1
                if kind in ("crash", "hang", "other"):
                    print(f"{kind}: variant {args.seed}:{i} ({model.parent.name}/{model.name}, {how}), {mode}, "
                          f"exit {rc}: {err.strip()[:300]}", flush=True)
                    if keep:
                        name = f"{args.seed}-{i}-{mode}"
                        shutil.copy(variant, keep / (name + model.suffix))
                        (keep / (name + ".txt")).write_text(
                            f"seed model: {model}\nmutation: {how}\nmode: {mode}\nexit: {rc}\n{err}")
            if (i - args.first + 1) % 200 == 0:
                print(f"... {i - args.first + 1} variants, {time.time() - start:.0f} s: {json.dumps(counts)}", flush=True)
    print(json.dumps({"seed": args.seed, "first": args.first, "count": args.count, "seed_models": len(cases),
                      "seconds": round(time.time() - start), "results": counts}, indent=1))
    sys.exit(1 if any(c["crash"] or c["hang"] for c in counts.values()) else 0)


if __name__ == "__main__":
    main()
