#!/usr/bin/python3
"""Runs graft over ONNX's own backend node tests (../shared/corpus/onnx-node) and reports per op.

Usage: run_node_tests.py GRAFT SHARED_DIR EXPECTED_FILE [--all]

Selects the cases whose inputs and outputs are float32, int64, int32, int8, uint8, uint16 or bool (the
dtypes graft's inputs take) and whose references are neither NaN nor random, and counts the float32-only
ones apart (the set ONNX Runtime 1.30 passes 389 of 396); runs them through shared/tools/check_cases.py
(the CLI contract: `graft run MODEL --input ... --output-dir ...`), prints the pass count per op and
in total, and fails if a case listed in EXPECTED_FILE does not pass, so a regression cannot hide in
a count. A case that passes and is not listed is reported, to be added. With --all, every case of
the corpus is run and counted (a report; it never fails).

Exits 77 (CTest's skip code) when the shared corpus is absent.
"""
import collections, glob, json, os, subprocess, sys


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    graft, shared, expected_file = sys.argv[1:4]
    run_all = '--all' in sys.argv[4:]
    corpus = os.path.join(shared, 'corpus', 'onnx-node')
    checker = os.path.join(shared, 'tools', 'check_cases.py')
    if not os.path.isdir(corpus) or not os.path.isfile(checker):
        print('SKIP: ../shared/corpus/onnx-node not found (the shared corpus sits beside the repo in CI)')
        return 77
    manifests = {os.path.basename(os.path.dirname(p)): json.load(open(p)) for p in glob.glob(os.path.join(corpus, '*', 'manifest.json'))}
    if run_all:
        cases = sorted(manifests)
    else:
        taken = {'float32', 'int64', 'int32', 'int8', 'uint8', 'uint16', 'bool'}
        cases = sorted(c for c, m in manifests.items()
                       if set(m['dtypes']) <= taken and not m['ref_has_nan'] and not m['ref_random'])
    r = subprocess.run(['/usr/bin/python3', checker, graft, '--data', corpus] + cases,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=3000)
    status = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] in ('PASS', 'FAIL', 'ERROR'):
            status[parts[1]] = (parts[0], parts[2] if len(parts) > 2 else '')
    per_op = collections.defaultdict(lambda: [0, 0])
    for c in cases:
        ops = sorted(set(manifests[c].get('ops') or ['(none)']))
        key = '+'.join(ops) if len(ops) <= 3 else ops[0] + '+...'
        per_op[key][1] += 1
        if status.get(c, ('ERROR',))[0] == 'PASS':
            per_op[key][0] += 1
    print('%-40s %s' % ('ops of the case', 'passed/cases'))
    for key in sorted(per_op):
        p, n = per_op[key]
        print('%-40s %d/%d' % (key, p, n))
    passed = sum(1 for c in cases if status.get(c, ('ERROR',))[0] == 'PASS')
    if not run_all:
        f32 = [c for c in cases if manifests[c]['dtypes'] == ['float32']]
        print('ONNX node tests (float32): %d of %d cases pass' % (sum(1 for c in f32 if status.get(c, ('ERROR',))[0] == 'PASS'), len(f32)))
    print('ONNX node tests (%s): %d of %d cases pass' % ('all' if run_all else 'float32 and integer/bool', passed, len(cases)))
    if run_all:
        return 0
    expected = []
    with open(expected_file) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                expected.append(line)
    unknown = [c for c in expected if c not in manifests]
    if unknown:
        print('error: %s lists cases the corpus does not have: %s' % (expected_file, ' '.join(unknown)))
        return 1
    regressed = [c for c in expected if status.get(c, ('ERROR', 'not run'))[0] != 'PASS']
    new = [c for c in cases if status.get(c, ('',))[0] == 'PASS' and c not in expected]
    for c in regressed:
        print('REGRESSED %s: %s %s' % (c, *status.get(c, ('ERROR', 'not run'))))
    if new:
        print('passing but not in %s (add them): %s' % (os.path.basename(expected_file), ' '.join(new)))
    return 1 if regressed else 0


if __name__ == '__main__':
    sys.exit(main())
