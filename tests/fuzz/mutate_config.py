#!/usr/bin/env python3
"""A seeded config-value campaign: Keras model files whose model_config holds hostile values.

    mutate_config.py GRAFT [--count N] [--seed S] [--first I] [--timeout SEC] [--jobs J]
                     [--corpus DIR ...] [--keep DIR]

Where tests/fuzz/mutate.py flips bytes (and so mostly exercises the HDF5 container), this campaign
keeps every file valid and attacks graft's own arithmetic: the numbers a converter turns into
shapes, strides, repeat counts and pads. Seeds are the .h5 models under the corpus directories
(default: ../shared/corpus/keras-real and tests/fixtures/keras) with their manifest's inputs. Variant
i of seed s is fully determined by (s, i): one seed file and 1-3 edits of its model_config, each
  number   an integer or float leaf (a units count, a kernel size, a stride, a pool size, an axis,
           a rate, ...) replaced by an "interesting" value: 0, +-1, 2^31 +- 1, 2^32 + 1, 2^59 + 1,
           2^62, 2^63 - 1, -2^63, a huge float, the old value times 2^k, a random integer;
  type     a leaf replaced by a value of another JSON type (a string, a list, an object, null);
  list     a list of numbers (a shape, a kernel_size, an axes list) shortened, lengthened or emptied.
The variant is written with h5py (only the model_config attribute changes; the weights stay) and
run as `graft run VARIANT --hdf5-in-process --input ... --output OUT` (HDF5 is not the target here).
Build GRAFT with the asan preset: UBSan and ASan reports abort the run (UBSAN_OPTIONS/ASAN_OPTIONS
are set here), so an overflow counts as a crash. Outcomes are classified as in mutate.py (ok,
error, crash, hang, other) plus "ubsan" (a "runtime error:" line in stderr, whatever the exit).
Crashes, hangs, UBSan reports and "other" are copied to --keep with the tool's stderr. Prints a
summary; exits 1 if anything but ok and error happened.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import h5py

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutate import SOURCE, classify, run_one, seeds  # noqa: E402  (one classifier for both campaigns)

INTERESTING = [0, 1, -1, 2, 2**31 - 1, 2**31, 2**31 + 1, 2**32 + 1, 2**59 + 1, 2**62, 2**63 - 1, -2**63,
               -2**31, 65537, 1e308, -1e308, 1e-300, 0.5, -0.5]


def leaves(node, path=()):
    """Every (path, value) below `node`; a path is a tuple of keys and indices."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        yield path, node
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))
    else:
        yield path, node


def put(root, path, value):
    node = root
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def edit(config, rng):
    """One edit of `config` in place; returns its description."""
    everything = [(p, v) for p, v in leaves(config) if p]
    numbers = [(p, v) for p, v in everything if isinstance(v, (int, float)) and not isinstance(v, bool)]
    lists = [(p, v) for p, v in everything if isinstance(v, list) and v and
             all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)]
    kind = rng.choices(["number", "type", "list"], weights=[8, 1, 2])[0]
    if kind == "list" and lists:
        path, old = rng.choice(lists)
        how = rng.choice(["shorten", "lengthen", "empty"])
        new = old[:-1] if how == "shorten" else old + [rng.choice(INTERESTING)] if how == "lengthen" else []
        put(config, path, new)
        return f"list {'/'.join(map(str, path))}: {how}"
    if kind == "type" or not numbers:
        path, old = rng.choice(everything)
        new = rng.choice(["x", [], [1, 2], {}, None, True, "same"])
        put(config, path, new)
        return f"type {'/'.join(map(str, path))}: {json.dumps(old)[:40]} -> {json.dumps(new)}"
    path, old = rng.choice(numbers)
    pick = rng.randrange(len(INTERESTING) + 2)
    if pick < len(INTERESTING):
        new = INTERESTING[pick]
    elif pick == len(INTERESTING):
        new = old * 2 ** rng.randint(8, 62) if isinstance(old, int) else old * 1e30
    else:
        new = rng.randint(-2**63, 2**63 - 1)
    put(config, path, new)
    return f"number {'/'.join(map(str, path))}: {old} -> {new}"


def make_variant(model, rng, out):
    """Copies `model` to `out` with 1-3 edits of its model_config; returns the edits."""
    shutil.copy(model, out)
    with h5py.File(out, "r+") as f:
        raw = f.attrs["model_config"]
        config = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        edits = [edit(config, rng) for _ in range(rng.randint(1, 3))]
        f.attrs["model_config"] = json.dumps(config).encode()
    return "; ".join(edits)


def has_config(model):
    """A seed holds a model_config to edit (a weights-only file does not)."""
    with h5py.File(model, "r") as f:
        return "model_config" in f.attrs


def run_variant(graft, cases, seed, i, timeout, tmp):
    rng = random.Random(f"config:{seed}:{i}")
    model, inputs = cases[rng.randrange(len(cases))]
    work = Path(tmp) / str(i)
    work.mkdir()
    variant = work / "variant.h5"
    try:
        how = make_variant(model, rng, variant)
    except (KeyError, ValueError, OSError) as e:  # a seed h5py cannot rewrite: not graft's business
        shutil.rmtree(work)
        return i, model, "skipped", f"{type(e).__name__}: {e}", 0, ""
    rc, err, timed_out = run_one(graft, variant, inputs, "in-process", timeout, work)
    kind = "ubsan" if "runtime error:" in err else classify(rc, err, timed_out)
    return i, model, kind, how, rc, err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graft")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0, help="index of the first variant (to resume)")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--corpus", action="append")
    ap.add_argument("--keep", default=None, help="where crashing/hanging/UBSan variants are copied")
    args = ap.parse_args()

    corpus = args.corpus or [str(SOURCE.parent / "shared/corpus/keras-real"), str(SOURCE / "tests/fixtures/keras")]
    cases = [(m, i) for m, i in seeds([d for d in corpus if Path(d).is_dir()]) if m.suffix == ".h5" and has_config(m)]
    if not cases:
        sys.exit("no seed .h5 models found in " + ", ".join(corpus))
    os.environ["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    os.environ["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=1"
    counts = {k: 0 for k in ("ok", "error", "crash", "hang", "other", "ubsan", "skipped")}
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="graft-mutate-config.") as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = [pool.submit(run_variant, args.graft, cases, args.seed, i, args.timeout, tmp)
                for i in range(args.first, args.first + args.count)]
        for done, job in enumerate(concurrent.futures.as_completed(jobs), 1):
            i, model, kind, how, rc, err = job.result()
            counts[kind] += 1
            if kind not in ("ok", "error", "skipped"):
                print(f"{kind}: variant {args.seed}:{i} ({model.parent.name}/{model.name}; {how}), exit {rc}: "
                      f"{err.strip()[:400]}", flush=True)
                if keep:
                    name = f"config-{args.seed}-{i}"
                    shutil.copy(Path(tmp) / str(i) / "variant.h5", keep / (name + ".h5"))
                    (keep / (name + ".txt")).write_text(f"seed model: {model}\nedits: {how}\nexit: {rc}\n{err}")
            work = Path(tmp) / str(i)
            if work.exists():
                shutil.rmtree(work)
            if done % 500 == 0:
                print(f"... {done} variants, {time.time() - start:.0f} s: {json.dumps(counts)}", flush=True)
    print(json.dumps({"seed": args.seed, "first": args.first, "count": args.count, "seed_models": len(cases),
                      "seconds": round(time.time() - start), "results": counts}, indent=1))
    sys.exit(1 if any(counts[k] for k in ("crash", "hang", "other", "ubsan")) else 0)


if __name__ == "__main__":
    main()
