#!/usr/bin/env node
// graft vs ONNX Runtime, side by side in one run, alternating.
//
//   node bench/compare.js --graft BUILD/bin/graft [--kit DIR] [--big DIR] [--models mlp,smallcnn,lstm,resnet18k]
//        [--batches 1,32] [--threads 1,2] [--rounds 3] [--out bench/RESULTS.md]
//
// --kit is the benchmark kit (default $GRAFT_BENCH_KIT or /work/shared/bench): models/<m>/ for
// mlp, smallcnn, lstm, ort_bench.js, and node_modules/onnxruntime-node (`npm ci --ignore-scripts`
// there). --big holds resnet18k (default $GRAFT_BENCH_BIG or /tmp/graft-bench; make.sh makes it).
// For every row (model x batch x threads) it runs `graft bench --json --check output.npy` and the
// kit's ort_bench.js --json alternately, --rounds times each (each a fresh process), and reports
// the median of the per-round medians, the best min, graft/ORT, and graft's GFLOP/s. A graft
// output that misses the reference (atol/rtol from manifest.json) fails the row.
'use strict';
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

function parse(argv) {
  const a = {graft: null, kit: process.env.GRAFT_BENCH_KIT || '/work/shared/bench',
             big: process.env.GRAFT_BENCH_BIG || '/tmp/graft-bench', models: 'mlp,smallcnn,lstm,resnet18k',
             batches: '1,32', threads: '1,2', rounds: 3, out: null};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = () => argv[++i];
    if (k === '--graft') a.graft = v();
    else if (k === '--kit') a.kit = v();
    else if (k === '--big') a.big = v();
    else if (k === '--models') a.models = v();
    else if (k === '--batches') a.batches = v();
    else if (k === '--threads') a.threads = v();
    else if (k === '--rounds') a.rounds = +v();
    else if (k === '--out') a.out = v();
    else { console.error('unknown argument ' + k); process.exit(2); }
  }
  if (!a.graft) { console.error('usage: node bench/compare.js --graft PATH/TO/graft [options] (see the header)'); process.exit(2); }
  return a;
}

// GFLOP per sample: 2 x multiply-adds of Dense/Conv/LSTM (the kit's README).
const GFLOP = {mlp: 2 * (784 * 512 + 512 * 512 + 512 * 10) / 1e9,
               smallcnn: 2 * (28 * 28 * 9 * 1 * 32 + 28 * 28 * 9 * 32 * 64 + 14 * 14 * 64 * 128 + 128 * 10) / 1e9,
               lstm: 2 * (50 * (64 + 128) * 512 + 128 * 10) / 1e9,
               resnet18k: 3.63};
// Timed iterations per row (as run_ort.sh), by model and batch.
const ITERS = {mlp: {1: 2000, 32: 500}, smallcnn: {1: 500, 32: 100}, lstm: {1: 500, 32: 200}, resnet18k: {1: 50, 32: 8}};

const median = (xs) => { const s = [...xs].sort((p, q) => p - q), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const fmt = (x, d = 3) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(d));

function runJson(cmd, args) {
  const out = execFileSync(cmd, args, {encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'pipe']});
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  return JSON.parse(line);
}

function main() {
  const a = parse(process.argv.slice(2));
  const ortBench = path.join(a.kit, 'ort_bench.js');
  if (!fs.existsSync(path.join(a.kit, 'node_modules', 'onnxruntime-node')))
    throw new Error(`${a.kit}/node_modules/onnxruntime-node is missing: run 'npm ci --ignore-scripts' in the kit (or pass --kit)`);
  const rows = [];
  const started = new Date();
  const load0 = os.loadavg();
  for (const m of a.models.split(',')) {
    const dir = m === 'resnet18k' ? path.join(a.big, m) : path.join(a.kit, 'models', m);
    if (!fs.existsSync(path.join(dir, 'manifest.json'))) { console.error(`skipping ${m}: no ${dir}/manifest.json`); continue; }
    const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    const inName = man.inputs[0].name;
    for (const b of a.batches.split(',').map(Number)) {
      for (const t of a.threads.split(',').map(Number)) {
        const iters = (ITERS[m] || {})[b] || 100;
        const input = path.join(dir, `input_b${b}.npy`), ref = path.join(dir, `output_b${b}.npy`);
        const g = [], o = [];
        for (let r = 0; r < a.rounds; r++) {
          g.push(runJson(a.graft, ['bench', path.join(dir, 'model.h5'), '--input', `${inName}=${input}`, '--threads', `${t}`,
                                   '--iters', `${iters}`, '--json', '--check', ref, '--atol', `${man.atol}`, '--rtol', `${man.rtol}`]));
          o.push(runJson('node', [ortBench, path.join(dir, 'model.onnx'), input, '--threads', `${t}`, '--iters', `${iters}`, '--json']));
        }
        const row = {model: m, batch: b, threads: t, iters, rounds: a.rounds,
                     graft_ms: median(g.map((x) => x.median_ms)), graft_min: Math.min(...g.map((x) => x.min_ms)),
                     ort_ms: median(o.map((x) => x.median_ms)), ort_min: Math.min(...o.map((x) => x.min_ms)),
                     err: Math.max(...g.map((x) => x.max_abs_err)), ok: g.every((x) => x.ok),
                     first_ms: median(g.map((x) => x.first_result_ms)), rss: Math.max(...g.map((x) => x.peak_rss_mb)),
                     arena: g[0].arena_mb};
        row.ratio = row.graft_ms / row.ort_ms;
        row.ratio_min = row.graft_min / row.ort_min;
        row.gflops = (GFLOP[m] || 0) * b / (row.graft_ms / 1e3);
        rows.push(row);
        console.error(`${m} b${b} t${t}: graft ${fmt(row.graft_ms)} ms, ORT ${fmt(row.ort_ms)} ms, ratio ${row.ratio.toFixed(2)}` +
                      ` (min ${row.ratio_min.toFixed(2)}), max err ${row.err.toExponential(1)} ${row.ok ? 'ok' : 'FAIL'}`);
      }
    }
  }
  const load1 = os.loadavg();
  const lines = [];
  lines.push('| model | batch | threads | graft median ms | ORT median ms | graft/ORT | graft min ms | ORT min ms | min ratio | graft GFLOP/s | <= 0.8x | max abs err vs tfjs | file to 1st result ms | peak RSS MB | arena MB |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    lines.push(`| ${r.model} | ${r.batch} | ${r.threads} | ${fmt(r.graft_ms)} | ${fmt(r.ort_ms)} | **${r.ratio.toFixed(2)}** | ` +
               `${fmt(r.graft_min)} | ${fmt(r.ort_min)} | ${r.ratio_min.toFixed(2)} | ${r.gflops.toFixed(1)} | ` +
               `${r.ratio <= 0.8 ? 'yes' : 'no'} | ${r.err.toExponential(1)}${r.ok ? '' : ' FAIL'} | ${fmt(r.first_ms)} | ` +
               `${r.rss.toFixed(0)} | ${r.arena.toFixed(2)} |`);
  const head = [
    `Measured ${started.toISOString()} on ${os.cpus().length} x ${os.cpus()[0].model}, ${os.hostname()}; ` +
      `load average ${load0.map((x) => x.toFixed(1)).join(' ')} at start, ${load1.map((x) => x.toFixed(1)).join(' ')} at end.`,
    `graft: \`${a.graft} bench --json --check\`; ORT: \`${ortBench}\` (onnxruntime-node, graph optimization all). ` +
      `Per row ${a.rounds} rounds, each a fresh graft process then a fresh ORT process; times are the median over rounds of each ` +
      `process's median (iterations per process in the kit's run_ort.sh counts), mins the best over rounds.`,
    '', ''];
  const text = head.join('\n') + lines.join('\n') + '\n';
  process.stdout.write(text);
  if (a.out) fs.writeFileSync(a.out, text);
  if (rows.some((r) => !r.ok)) process.exit(1);
}

try { main(); } catch (e) { console.error('compare: ' + (e.stderr ? e.stderr.toString() : '') + e.message); process.exit(1); }
