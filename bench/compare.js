#!/usr/bin/env node
// graft vs ONNX Runtime, side by side in one run, alternating.
//
//   node bench/compare.js --graft BUILD/bin/graft [--kit DIR] [--big DIR] [--extra DIR[,DIR]]
//        [--models mlp,smallcnn,lstm,resnet18k] [--formats h5,onnx] [--ort c-api|node]
//        [--batches 1,32] [--threads 1,2] [--rounds 3] [--roofline PATH|none] [--out FILE.md]
//        [--precision fp32|int8|bf16]
//
// --kit is the benchmark kit (default $GRAFT_BENCH_KIT or /work/shared/bench): models/<m>/ for mlp,
// smallcnn, lstm, and the ORT runners. --big holds resnet18k (default $GRAFT_BENCH_BIG or
// /tmp/graft-bench; the kit's make.sh makes it); --extra lists more folders of models, such as the
// torchvision exports of tests/fixtures/onnx/make_torch.py --bench (a model folder has model.onnx
// and/or model.h5, input_bB.npy, output_bB.npy and optionally manifest.json with atol, rtol,
// gflop_per_sample).
//
// For every row (model x batch x threads) it runs, --rounds times and alternating, each a fresh
// process: `graft bench --json --check output.npy` on model.h5 and on model.onnx (--formats), and
// ORT on model.onnx. --ort c-api (the default) is the kit's ort_cpp/ort_bench, ORT in-process
// through its C API (`make -C KIT/ort_cpp`); --ort node is ort_bench.js, which adds the node
// binding's 14-54 us per run. It reports the median of the per-round medians, the best min,
// graft/ORT for each format and graft's GFLOP/s. A graft output that misses the reference fails the
// row and the run.
//
// The roofline column: --roofline (default: graft_roofline beside --graft, built with
// -DGRAFT_BUILD_BENCH=ON) measures this machine's FMA peak and L2/L3/DRAM read bandwidth once per
// run. A row's bound is the larger of its FLOPs at the FMA peak and the bytes of weights a run
// reads (graft bench's weight_read_mb: each once, a recurrent layer's recurrent weights once per
// time step) at the read bandwidth graft_roofline measured for a working set the size of all the
// weights (weight_mb; its bw_curve, so an L3 shared with other tenants counts as much as is left);
// the column is that bound over graft's best time, and which limit it is (FMA, or the level the
// weights fit in: per-core L2 times threads, L3, else DRAM).
//
// --precision int8 makes a different table: per row, graft on model.onnx at fp32 and with
// `--precision int8`, and ORT on model.onnx and on its int8 version (bench/quantize_onnx.py, the
// graph onnxruntime's quantize_dynamic writes, made once into --int8-dir, default
// /tmp/graft-bench-int8): both speed-ups, graft int8 over ORT int8, and each one's max abs error
// against the fp32 reference and graft's top-1 agreement with it. A graft int8 error beyond
// --int8-atol (default 0.05) times the reference's largest magnitude (when above 1) fails the run.
//
// --precision bf16 makes a third table: graft on model.onnx at fp32 and with `--precision bf16`,
// ORT at fp32 (ORT has no bf16 path for these models on a CPU), the speed-up, graft bf16 over ORT,
// the error against the fp32 reference (beyond --int8-atol fails the run) and top-1 agreement, and
// a roofline fraction against graft_roofline's bf16 peak (vdpbf16ps) and half the weights' bytes.
'use strict';
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

function parse(argv) {
  const a = {graft: null, kit: process.env.GRAFT_BENCH_KIT || '/work/shared/bench',
             big: process.env.GRAFT_BENCH_BIG || '/tmp/graft-bench', extra: '', models: 'mlp,smallcnn,lstm,resnet18k',
             formats: 'h5,onnx', ort: 'c-api', batches: '1,32', threads: '1,2', rounds: 3, roofline: null, out: null,
             precision: 'fp32', int8Dir: '/tmp/graft-bench-int8', int8Atol: 0.05};
  const keys = {'--graft': 'graft', '--kit': 'kit', '--big': 'big', '--extra': 'extra', '--models': 'models', '--formats': 'formats',
                '--ort': 'ort', '--batches': 'batches', '--threads': 'threads', '--rounds': 'rounds', '--roofline': 'roofline',
                '--out': 'out', '--precision': 'precision', '--int8-dir': 'int8Dir', '--int8-atol': 'int8Atol'};
  for (let i = 0; i < argv.length; i++) {
    if (!keys[argv[i]] || i + 1 >= argv.length) { console.error('unknown argument or missing value: ' + argv[i]); process.exit(2); }
    a[keys[argv[i]]] = argv[++i];
  }
  a.rounds = +a.rounds;
  if (!a.graft) { console.error('usage: node bench/compare.js --graft PATH/TO/graft [options] (see the header)'); process.exit(2); }
  if (a.ort !== 'c-api' && a.ort !== 'node') { console.error('--ort is c-api or node'); process.exit(2); }
  if (!['fp32', 'int8', 'bf16'].includes(a.precision)) { console.error('--precision is fp32, int8 or bf16'); process.exit(2); }
  a.int8Atol = +a.int8Atol;
  return a;
}

// GFLOP per sample: 2 x multiply-adds of Dense/Conv/LSTM (the kit's README); others from manifest.json.
const GFLOP = {mlp: 2 * (784 * 512 + 512 * 512 + 512 * 10) / 1e9,
               smallcnn: 2 * (28 * 28 * 9 * 1 * 32 + 28 * 28 * 9 * 32 * 64 + 14 * 14 * 64 * 128 + 128 * 10) / 1e9,
               lstm: 2 * (50 * (64 + 128) * 512 + 128 * 10) / 1e9,
               resnet18k: 3.63};
// Timed iterations per row (as run_ort.sh), by model and batch; large models otherwise.
const ITERS = {mlp: {1: 2000, 32: 500}, smallcnn: {1: 500, 32: 100}, lstm: {1: 500, 32: 200}};
const ITERS_LARGE = {1: 50, 32: 8};

const median = (xs) => { const s = [...xs].sort((p, q) => p - q), n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const fmt = (x, d = 3) => (x === undefined ? '-' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(d));
const ratio = (x, y) => (x === undefined ? '-' : (x / y).toFixed(2));

function runJson(cmd, args) {
  const out = execFileSync(cmd, args, {encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'pipe']});
  const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  return JSON.parse(line);
}

function ortRunner(a) {
  if (a.ort === 'c-api') {
    const exe = path.join(a.kit, 'ort_cpp', 'ort_bench');
    if (!fs.existsSync(exe)) throw new Error(`${exe} is missing: run 'make -C ${path.join(a.kit, 'ort_cpp')}' (after 'npm ci --ignore-scripts' in the kit)`);
    return {label: `\`${exe}\` (ORT in-process through its C API)`, run: (model, input, t, iters, ref) =>
      runJson(exe, [model, input, '--threads', `${t}`, '--iters', `${iters}`, '--json', ...(ref ? ['--check', ref, '--atol', '1e9'] : [])])};
  }
  const js = path.join(a.kit, 'ort_bench.js');
  if (!fs.existsSync(path.join(a.kit, 'node_modules', 'onnxruntime-node')))
    throw new Error(`${a.kit}/node_modules/onnxruntime-node is missing: run 'npm ci --ignore-scripts' in the kit (or pass --kit)`);
  return {label: `\`${js}\` (onnxruntime-node)`, run: (model, input, t, iters) =>
    runJson('node', [js, model, input, '--threads', `${t}`, '--iters', `${iters}`, '--json'])};
}

/// This machine's limits from graft_roofline, or null (with the reason on stderr) when it is absent.
function measureRoofline(a) {
  const exe = a.roofline || path.join(path.dirname(a.graft), 'graft_roofline');
  if (a.roofline === 'none') return null;
  if (!fs.existsSync(exe)) { console.error(`no roofline column: ${exe} is missing (configure with -DGRAFT_BUILD_BENCH=ON)`); return null; }
  const threads = Math.max(...a.threads.split(',').map(Number));
  return runJson(exe, ['--threads', `${threads}`]);
}

/// The read bandwidth (GB/s) of graft_roofline's curve `curve` ([bytes, GB/s] pairs, all threads)
/// at a working set of `bytes`: interpolated in log(bytes), the ends held beyond the curve.
function bandwidthAt(curve, bytes) {
  if (bytes <= curve[0][0]) return curve[0][1];
  for (let i = 1; i < curve.length; i++) {
    const [b0, g0] = curve[i - 1], [b1, g1] = curve[i];
    if (bytes <= b1) return g0 + (g1 - g0) * Math.log(bytes / b0) / Math.log(b1 / b0);
  }
  return curve[curve.length - 1][1];
}

/// The row's roofline bound: its FLOPs at the peak `peakKey` of graft_roofline (fma_gflops,
/// bf16_gflops) or the `read` bytes of weights a run reads at the bandwidth graft_roofline
/// measured for a working set of the weights' `bytes` (its bw_curve; without one, the bandwidth
/// of the level they fit in), whichever takes longer, over `ms`; undefined without the figures.
/// The level named is where the weights fit: per-core L2 times threads, the L3, else DRAM.
function boundOf(rl, r, gflop, peakKey, bytes, read, ms) {
  const lim = rl && rl[`t${r.threads}`];
  if (!lim || !lim[peakKey] || !gflop || !(bytes >= 0) || !(read >= bytes)) return undefined;
  let [level, bw] = bytes <= rl.l2_bytes * r.threads ? ['L2', lim.bw_l2_gbs] : bytes <= rl.l3_bytes ? ['L3', lim.bw_l3_gbs]
                                                                                                   : ['DRAM', lim.bw_dram_gbs];
  if (lim.bw_curve && lim.bw_curve.length) bw = bandwidthAt(lim.bw_curve, bytes);
  const computeMs = gflop * r.batch / lim[peakKey] * 1e3, memoryMs = read / (bw * 1e9) * 1e3;
  return {fraction: Math.max(computeMs, memoryMs) / ms, compute: computeMs >= memoryMs, level};
}

/// The fraction of the row's roofline bound that graft reaches, and the limit that bounds it.
function rooflineOf(rl, r, gflop) {
  const best = Math.min(...['h5', 'onnx'].filter((f) => r[f] !== undefined).map((f) => r[f]));
  const b = boundOf(rl, r, gflop, 'fma_gflops', r.weight_mb * 1048576, r.weight_read_mb * 1048576, best);
  return b && {fraction: b.fraction, limit: b.compute ? 'FMA' : b.level};
}

/// The folder of model `m`: the kit's models/, --big, or one of --extra.
function modelDir(a, m) {
  const dirs = [path.join(a.kit, 'models', m), path.join(a.big, m), ...a.extra.split(',').filter(Boolean).map((d) => path.join(d, m))];
  return dirs.find((d) => fs.existsSync(path.join(d, 'model.onnx')) || fs.existsSync(path.join(d, 'model.h5')));
}

function benchRow(a, ort, m, dir, man, b, t) {
  const iters = (ITERS[m] || man.iters || ITERS_LARGE)[b] || 100;
  const input = path.join(dir, `input_b${b}.npy`), ref = path.join(dir, `output_b${b}.npy`);
  const formats = a.formats.split(',').filter((f) => fs.existsSync(path.join(dir, `model.${f}`)));
  const g = Object.fromEntries(formats.map((f) => [f, []])), o = [], failed = {};
  for (let r = 0; r < a.rounds; r++) {
    for (const f of formats.filter((x) => !failed[x])) {
      try {
        g[f].push(runJson(a.graft, ['bench', path.join(dir, `model.${f}`), '--input', input, '--threads', `${t}`, '--iters', `${iters}`,
                                    '--json', '--check', ref, '--atol', `${man.atol || 1e-4}`, '--rtol', `${man.rtol || 1e-4}`]));
      } catch (e) {  // a model graft refuses (an op it lacks) is reported in the row, not fatal
        failed[f] = (e.stderr ? e.stderr.toString() : e.message).trim().split('\n').pop();
        console.error(`${m} .${f}: ${failed[f]}`);
      }
    }
    o.push(ort.run(path.join(dir, 'model.onnx'), input, t, iters));
  }
  formats.splice(0, formats.length, ...formats.filter((f) => !failed[f]));
  const row = {model: m, batch: b, threads: t, ort_ms: median(o.map((x) => x.median_ms)), ort_min: Math.min(...o.map((x) => x.min_ms)), failed};
  if (!formats.length) return Object.assign(row, {ok: false, worst: Infinity, err: NaN, graft_min: NaN, rss: NaN, arena: NaN});
  const all = formats.flatMap((f) => g[f]);
  for (const f of formats) row[f] = median(g[f].map((x) => x.median_ms));
  row.graft_min = Math.min(...all.map((x) => x.min_ms));
  row.err = Math.max(...all.map((x) => x.max_abs_err));
  row.ok = all.every((x) => x.ok);
  row.first_ms = median(all.map((x) => x.first_result_ms));
  row.rss = Math.max(...all.map((x) => x.peak_rss_mb));
  row.arena = all[0].arena_mb;
  row.weight_mb = Math.max(...all.map((x) => x.weight_mb));
  row.weight_read_mb = Math.max(...all.map((x) => x.weight_read_mb ?? x.weight_mb));
  row.worst = Math.max(...formats.map((f) => row[f] / row.ort_ms));
  const best = Math.min(...formats.map((f) => row[f]));
  const gflop = GFLOP[m] || man.gflop_per_sample;
  row.gflop = gflop;
  row.gflops = gflop ? gflop * b / (best / 1e3) : undefined;
  console.error(`${m} b${b} t${t}: ` + formats.map((f) => `graft .${f} ${fmt(row[f])} ms`).join(', ') +
                `, ORT ${fmt(row.ort_ms)} ms, worst ratio ${row.worst.toFixed(2)}, max err ${row.err.toExponential(1)} ${row.ok ? 'ok' : 'FAIL'}`);
  return row;
}

/// model.onnx of `dir` quantised by bench/quantize_onnx.py, made once into a.int8Dir.
function int8Model(a, m, dir) {
  const out = path.join(a.int8Dir, `${m}.onnx`);
  if (!fs.existsSync(out)) {
    fs.mkdirSync(a.int8Dir, {recursive: true});
    execFileSync('/usr/bin/python3', [path.join(__dirname, 'quantize_onnx.py'), path.join(dir, 'model.onnx'), out], {stdio: ['ignore', 'ignore', 'inherit']});
  }
  return out;
}

/// --precision int8 or bf16: graft fp32 and reduced, ORT fp32 and (int8) on the quantised model, alternating.
function benchRowLowp(a, ort, m, dir, man, b, t) {
  const iters = (ITERS[m] || man.iters || ITERS_LARGE)[b] || 100;
  const input = path.join(dir, `input_b${b}.npy`), ref = path.join(dir, `output_b${b}.npy`), model = path.join(dir, 'model.onnx');
  const q = a.precision === 'int8' ? int8Model(a, m, dir) : null;
  const runs = {g32: [], g8: [], o32: [], o8: []};
  const graft = (precision, atol, rtol) => runJson(a.graft, ['bench', model, '--input', input, '--threads', `${t}`, '--iters', `${iters}`,
                                                             '--json', '--check', ref, '--atol', `${atol}`, '--rtol', `${rtol}`, '--precision', precision]);
  for (let r = 0; r < a.rounds; r++) {
    runs.g32.push(graft('fp32', man.atol || 1e-4, man.rtol || 1e-4));
    runs.g8.push(graft(a.precision, 1e9, 0));
    runs.o32.push(ort.run(model, input, t, iters));
    if (q) runs.o8.push(ort.run(q, input, t, iters, ref));
  }
  const med = (k) => (runs[k].length ? median(runs[k].map((x) => x.median_ms)) : undefined);
  const row = {model: m, batch: b, threads: t, g32: med('g32'), g8: med('g8'), o32: med('o32'), o8: med('o8'),
               precision: runs.g8[0].precision, err: Math.max(...runs.g8.map((x) => x.max_abs_err)),
               ort_err: q ? Math.max(...runs.o8.map((x) => x.max_abs_diff)) : undefined, top1: runs.g8[0].top1_agree,
               rows: runs.g8[0].top1_rows, weight_mb: runs.g8[0].weight_mb,
               weight_read_mb: runs.g8[0].weight_read_mb ?? runs.g8[0].weight_mb, gflop: GFLOP[m] || man.gflop_per_sample};
  row.ok = runs.g32.every((x) => x.ok) && row.err <= a.int8Atol * Math.max(1, runs.g8[0].ref_max_abs || 0);
  console.error(`${m} b${b} t${t}: graft fp32 ${fmt(row.g32)} ${a.precision} ${fmt(row.g8)} ms (${row.precision}), ORT fp32 ${fmt(row.o32)}` +
                (q ? ` int8 ${fmt(row.o8)}` : '') + ` ms, err graft ${row.err.toExponential(1)}` + (q ? ` ORT ${row.ort_err.toExponential(1)}` : '') +
                ` ${row.ok ? 'ok' : 'FAIL'}`);
  return row;
}

/// --precision bf16: the row's bound at the bf16 peak (FLOPs) or half the weights' bytes, over graft bf16's time.
function bf16Roofline(rl, r) {
  const b = boundOf(rl, r, r.gflop, 'bf16_gflops', r.weight_mb * 1048576 / 2, r.weight_read_mb * 1048576 / 2, r.g8);
  return b ? `${(100 * b.fraction).toFixed(0)}% ${b.compute ? 'BF16' : b.level}` : '-';
}

function bf16Table(rows, rl) {
  const lines = [
    '| model | batch | threads | graft fp32 ms | graft bf16 ms | graft speed-up | ORT fp32 ms | graft bf16 / ORT fp32 | bf16 roofline | graft bf16 max abs err | top-1 as fp32 reference |',
    '|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const r of rows)
    lines.push(`| ${r.model} | ${r.batch} | ${r.threads} | ${fmt(r.g32)} | ${fmt(r.g8)}${r.precision === 'bf16' ? '' : ' (ran fp32)'} | ${ratio(r.g32, r.g8)}x | ` +
               `${fmt(r.o32)} | **${ratio(r.g8, r.o32)}** | ${bf16Roofline(rl, r)} | ${r.err.toExponential(1)}${r.ok ? '' : ' FAIL'} | ` +
               `${r.rows ? `${r.top1}/${r.rows}` : '-'} |`);
  return lines;
}

function int8Table(rows) {
  const lines = [
    '| model | batch | threads | graft fp32 ms | graft int8 ms | graft speed-up | ORT fp32 ms | ORT int8 ms | ORT speed-up | graft int8 / ORT int8 | graft int8 / ORT fp32 | graft int8 max abs err | top-1 as fp32 reference | ORT int8 max abs err |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const r of rows)
    lines.push(`| ${r.model} | ${r.batch} | ${r.threads} | ${fmt(r.g32)} | ${fmt(r.g8)}${r.precision === 'int8' ? '' : ' (ran fp32)'} | ${ratio(r.g32, r.g8)}x | ` +
               `${fmt(r.o32)} | ${fmt(r.o8)} | ${ratio(r.o32, r.o8)}x | **${ratio(r.g8, r.o8)}** | ${ratio(r.g8, r.o32)} | ` +
               `${r.err.toExponential(1)}${r.ok ? '' : ' FAIL'} | ${r.rows ? `${r.top1}/${r.rows}` : '-'} | ${r.ort_err.toExponential(1)} |`);
  return lines;
}

function main() {
  const a = parse(process.argv.slice(2));
  const ort = ortRunner(a);
  const rows = [];
  const started = new Date();
  const load0 = os.loadavg();
  const rl = measureRoofline(a);
  for (const m of a.models.split(',')) {
    const dir = modelDir(a, m);
    if (!dir || !fs.existsSync(path.join(dir, 'model.onnx'))) { console.error(`skipping ${m}: no model.onnx in the kit, --big or --extra`); continue; }
    const mf = path.join(dir, 'manifest.json');
    const man = fs.existsSync(mf) ? JSON.parse(fs.readFileSync(mf, 'utf8')) : {};
    for (const b of a.batches.split(',').map(Number)) {
      if (!fs.existsSync(path.join(dir, `input_b${b}.npy`))) { console.error(`skipping ${m} b${b}: no input_b${b}.npy`); continue; }
      for (const t of a.threads.split(',').map(Number))
        rows.push(a.precision === 'fp32' ? benchRow(a, ort, m, dir, man, b, t) : benchRowLowp(a, ort, m, dir, man, b, t));
    }
  }
  const load1 = os.loadavg();
  const lines = [
    '| model | batch | threads | graft .h5 ms | graft .onnx ms | ORT ms | .h5/ORT | .onnx/ORT | min ratio | graft GFLOP/s | roofline | <= 0.8x | max abs err | file to 1st result ms | peak RSS MB | arena MB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const r of a.precision === 'fp32' ? rows : []) {
    const roof = rooflineOf(rl, r, r.gflop);
    lines.push(`| ${r.model} | ${r.batch} | ${r.threads} | ${r.failed.h5 ? 'refused' : fmt(r.h5)} | ${r.failed.onnx ? 'refused' : fmt(r.onnx)} | ${fmt(r.ort_ms)} | **${ratio(r.h5, r.ort_ms)}** | ` +
               `**${ratio(r.onnx, r.ort_ms)}** | ${(r.graft_min / r.ort_min).toFixed(2)} | ${r.gflops === undefined ? '-' : r.gflops.toFixed(1)} | ` +
               `${roof ? `${(100 * roof.fraction).toFixed(0)}% ${roof.limit}` : '-'} | ${r.worst <= 0.8 ? 'yes' : 'no'} | ${r.err.toExponential(1)}${r.ok ? '' : ' FAIL'} | ${fmt(r.first_ms)} | ` +
               `${r.rss.toFixed(0)} | ${r.arena.toFixed(2)} |`);
  }
  const mb = (x) => `${(x / 1048576).toFixed(x < 1048576 ? 2 : 0)} MiB`;
  const limits = rl ? Object.keys(rl).filter((k) => /^t\d+$/.test(k)).map((k) =>
    `${k.slice(1)} thread(s): FMA ${rl[k].fma_gflops}${rl[k].bf16_gflops ? `, bf16 dot ${rl[k].bf16_gflops}` : ''} GFLOP/s, read L2 ${rl[k].bw_l2_gbs} / L3 ${rl[k].bw_l3_gbs} / DRAM ${rl[k].bw_dram_gbs} GB/s` +
    (rl[k].bw_curve ? ` (by working set: ${[1, 4, 8, 16, 32].map((m) => `${m} MB ${bandwidthAt(rl[k].bw_curve, m * 1048576).toFixed(0)}`).join(', ')})` : '')).join('; ')
    : '';
  const head = [
    `Measured ${started.toISOString()} on ${os.cpus().length} x ${os.cpus()[0].model}, ${os.hostname()}; ` +
      `load average ${load0.map((x) => x.toFixed(1)).join(' ')} at start, ${load1.map((x) => x.toFixed(1)).join(' ')} at end.`,
    rl ? `CPU ${rl.cpu}: graft ISA ${rl.isa} (${rl.flags}); L2 ${mb(rl.l2_bytes)} per core, L3 ${mb(rl.l3_bytes)}. ` +
         `Measured by graft_roofline at the start: ${limits}. roofline = the row's bound (FLOPs at the FMA peak, or the ` +
         'weights a run reads, a recurrent matrix once per step, at the read bandwidth graft_roofline measured for a ' +
         'working set of their size, whichever is larger) over graft\'s best time.' : 'No roofline column (graft_roofline missing).',
    a.precision === 'bf16'
      ? `graft: \`${a.graft} bench --json --check --precision fp32|bf16\` on model.onnx; ORT: ${ort.label}, graph optimization all, on model.onnx. ` +
        'Errors are against the fp32 reference output. '
      : a.precision === 'int8'
      ? `graft: \`${a.graft} bench --json --check --precision fp32|int8\` on model.onnx; ORT: ${ort.label}, graph optimization all, on model.onnx ` +
        'and on its int8 version (bench/quantize_onnx.py: DynamicQuantizeLinear + MatMulInteger per product and ConvInteger per Conv, weights per column / output channel, as onnxruntime\'s ' +
        'quantize_dynamic writes them). Errors are against the fp32 reference output. '
      : `graft: \`${a.graft} bench --json --check\` on model.h5 and model.onnx; ORT: ${ort.label}, graph optimization all, on model.onnx. ` +
      `Per row ${a.rounds} rounds, each a fresh process per runner in turn; times are the median over rounds of each ` +
      `process's median, mins the best over rounds; min ratio is graft's best min over ORT's. <= 0.8x holds when every format does.`,
    '', ''];
  const refusals = rows.flatMap((r) => Object.entries(r.failed || {}).map(([f, msg]) => `- ${r.model} b${r.batch} t${r.threads} .${f}: ${msg}`));
  const table = a.precision === 'int8' ? int8Table(rows) : a.precision === 'bf16' ? bf16Table(rows, rl) : lines;
  const text = head.join('\n') + table.join('\n') + '\n' + (refusals.length ? '\nRefused:\n' + [...new Set(refusals)].join('\n') + '\n' : '');
  process.stdout.write(text);
  if (a.out) {  // a temporary name, then a rename: never a half-written file
    const tmp = `${a.out}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, a.out);
  }
  if (rows.some((r) => !r.ok && !Object.keys(r.failed || {}).length)) process.exit(1);  // a wrong result fails the run
}

try { main(); } catch (e) { console.error('compare: ' + (e.stderr ? e.stderr.toString() : '') + e.message); process.exit(1); }
