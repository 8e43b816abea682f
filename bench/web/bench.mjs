// The benchmark page (bench/web/run.py serves and opens it): each bench model at batch 1 and 32,
// run by graft's WebAssembly runtime (the descriptor converted from model.onnx) and by
// onnxruntime-web's wasm backend (the same model.onnx) in this browser, with ?threads=N intra-op
// threads each. Timing alternates between the two in blocks, so a disturbance hits both; the
// outputs are checked against the kit's tfjs references. Results are POSTed to /__result.
import * as graft from '/dist/graft.mjs';
import * as ort from '/ort/ort.wasm.min.mjs';

const params = new URLSearchParams(location.search);
const threads = Number(params.get('threads') || 1);
const seconds = Number(params.get('seconds') || 1.5);  // per runtime per row
const lines = [];
function log(line) {
  lines.push(line);
  document.getElementById('log').textContent += line + '\n';
  fetch('/__log', { method: 'POST', body: line }).catch(() => {});
}

ort.env.wasm.wasmPaths = '/ort/';
ort.env.wasm.numThreads = threads;
ort.env.wasm.simd = true;
ort.env.logLevel = 'error';

async function f32(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`cannot fetch ${url}: ${r.status}`);
  return new Float32Array(await r.arrayBuffer());
}

function maxAbsErr(a, b) {
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return a.length === b.length ? m : Infinity;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

// The mean time per run over a block of n runs (performance.now() is coarsened to 5 us on a
// cross-origin isolated page; a block of ~50 ms makes that negligible).
// Before each block the page idles 20 ms, so that the other runtime's spinning worker threads
// have gone to sleep and do not take a core from this one.
async function timeBlock(fn, n) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return (performance.now() - t0) / n;
}

async function row(m, b) {
  const input = await f32(`/cases/${m.name}/${b.input}`);
  const ref = await f32(`/cases/${m.name}/${b.output}`);
  const g = await graft.load(`/cases/${m.name}/descriptor/`, { threads });
  // At one thread, also graft's threaded build on one thread: what its exception scheme costs.
  const g1 = threads === 1 ? await graft.load(`/cases/${m.name}/descriptor/`, { threads: 1, build: 'threads' }) : null;
  const s = await ort.InferenceSession.create(`/kit/${m.name}/model.onnx`,
                                              { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const feeds = { [m.input]: new ort.Tensor('float32', input, b.shape) };
  const runGraft = () => g.run({ [m.input]: { data: input, shape: b.shape } });
  const runOrt = () => s.run(feeds);
  const runG1 = g1 && (() => g1.run({ [m.input]: { data: input, shape: b.shape } }));
  const gErr = maxAbsErr((await runGraft())[m.output].data, ref);
  const oErr = maxAbsErr((await runOrt())[m.output].data, ref);
  // Warm up both, then size the blocks so that one takes about 50 ms; alternate blocks.
  const probe = Math.max(await timeBlock(runGraft, 5), await timeBlock(runOrt, 5));
  const block = Math.max(3, Math.round(50 / Math.max(probe, 0.005)));
  const tg = [], to = [], t1 = [];
  const deadline = performance.now() + 2 * seconds * 1000;
  while (performance.now() < deadline || tg.length < 7) {
    tg.push(await timeBlock(runGraft, block));
    to.push(await timeBlock(runOrt, block));
    if (runG1) t1.push(await timeBlock(runG1, block));
  }
  const r = {
    model: m.name, batch: b.batch, threads, graft_backend: g.backend, graft_threads: g.threads,
    graft_ms: median(tg), graft_min_ms: Math.min(...tg), ort_ms: median(to), ort_min_ms: Math.min(...to),
    blocks: tg.length, block, graft_err: gErr, ort_err: oErr,
    graft_threads_build_1_ms: runG1 ? median(t1) : null,
  };
  r.ratio = r.graft_ms / r.ort_ms;
  log(`${m.name} b${b.batch} t${threads}: graft ${r.graft_ms.toFixed(4)} ms (${g.backend}, ${g.threads} thr), ` +
      `onnxruntime-web ${r.ort_ms.toFixed(4)} ms, ratio ${r.ratio.toFixed(2)}; max abs err graft ${gErr.toExponential(1)}, ort ${oErr.toExponential(1)}`);
  g.dispose();
  if (g1) g1.dispose();
  await s.release();
  return r;
}

async function main() {
  log(`threads=${threads} crossOriginIsolated=${crossOriginIsolated} cores=${navigator.hardwareConcurrency} ${navigator.userAgent}`);
  const index = await (await fetch('/cases/bench.json')).json();
  const rows = [];
  for (const m of index.models) for (const b of m.batches) rows.push(await row(m, b));
  return { ok: true, rows, lines, userAgent: navigator.userAgent, crossOriginIsolated };
}

main().catch((e) => ({ ok: false, error: String(e && e.stack || e), lines }))
  .then((report) => fetch('/__result', { method: 'POST', body: JSON.stringify(report) }));
