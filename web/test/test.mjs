// graft's browser test page (run_browser_tests.py serves and opens it): every prepared case's
// descriptor loaded with graft.mjs, run on its inputs and compared with its reference within the
// case's atol + rtol * |reference|; then the broken descriptors, each of which must be refused
// with a GraftError of the expected kind holding the expected words. The report is POSTed to
// /__result; progress lines to /__log.
import * as graft from '/dist/graft.mjs';

const mode = new URLSearchParams(location.search).get('mode');
const lines = [];
let failures = 0;

function log(line) {
  lines.push(line);
  document.getElementById('log').textContent += line + '\n';
  fetch('/__log', { method: 'POST', body: line }).catch(() => {});
}
function fail(line) {
  failures += 1;
  log('FAIL ' + line);
}

const TYPED = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array,
                uint16: Uint16Array, int8: Int8Array, bool: Uint8Array };

async function array(caseName, v) {
  const r = await fetch(`/cases/${caseName}/${v.file}`);
  if (!r.ok) throw new Error(`cannot fetch ${v.file}: ${r.status}`);
  return new TYPED[v.dtype](await r.arrayBuffer());
}

function compare(got, ref, atol, rtol) {
  let off = 0, first = -1, worst = 0;
  for (let i = 0; i < ref.length; i++) {
    const g = Number(got[i]), r = Number(ref[i]);
    const err = Math.abs(g - r);
    if (Number.isNaN(r) ? !Number.isNaN(g) : !(err <= atol + rtol * Math.abs(r))) {
      off += 1;
      if (first < 0) first = i;
    }
    if (err > worst) worst = err;
  }
  return { off, first, worst };
}

const options = mode === 'simd' ? { threads: 1 } : { threads: 'auto' };
const expectBackend = mode === 'threads' ? 'threads' : 'simd';

async function runCase(c) {
  const progress = [];
  const model = await graft.load(`/cases/${c.name}/descriptor/`, { ...options, onProgress: (p) => progress.push(p) });
  try {
    if (model.backend !== expectBackend) fail(`${c.name}: ran on the ${model.backend} build, expected ${expectBackend}`);
    if (mode === 'threads' && navigator.hardwareConcurrency > 1 && model.threads < 2)
      fail(`${c.name}: the threaded build runs with ${model.threads} thread(s) on ${navigator.hardwareConcurrency} cores`);
    if (mode !== 'threads' && model.threads !== 1) fail(`${c.name}: ${model.threads} threads without crossOriginIsolated`);
    if (progress.length === 0 || progress[progress.length - 1].loaded !== progress[progress.length - 1].total)
      fail(`${c.name}: load progress did not reach the total: ${JSON.stringify(progress.slice(-1))}`);
    // The fixture's run, then (a model with free sizes) the same model at its other sizes.
    let worst = 0;
    const free = model.inputs.find((i) => i.shape.slice(1).includes(null));
    if (free)  // a bare typed array cannot say a free size other than the batch
      await expectError(`${c.name}: a bare array for free sizes`, 'shape', [free.name, 'pass {data, shape}'],
                        () => model.run({ [free.name]: new Float32Array(c.inputs[0].shape.reduce((a, d) => a * d, 1)) }));
    for (const run of [c, ...(c.more_runs || [])]) {
      const inputs = {};
      for (const v of run.inputs) inputs[v.name] = { data: await array(c.name, v), shape: v.shape, dtype: v.dtype };
      const outputs = await model.run(inputs);
      for (const v of run.outputs) {
        const got = outputs[v.name];
        if (!got) { fail(`${c.name}: no output '${v.name}' (got ${Object.keys(outputs).join(', ')})`); continue; }
        if (JSON.stringify(got.shape) !== JSON.stringify(v.shape)) {
          fail(`${c.name}: output '${v.name}' has shape [${got.shape}], the reference [${v.shape}]`);
          continue;
        }
        const r = compare(got.data, await array(c.name, v), c.atol, c.rtol);
        if (r.off) fail(`${c.name}: output '${v.name}': ${r.off} values off, first at flat index ${r.first}, max abs err ${r.worst}`);
        worst = Math.max(worst, r.worst);
      }
    }
    return worst;
  } finally {
    model.dispose();
  }
}

async function runBad(b) {
  try {
    const model = await graft.load(`/cases/bad/${b.name}/`, options);
    model.dispose();
    fail(`bad/${b.name}: loaded, expected a ${b.kind} error`);
  } catch (e) {
    if (!(e instanceof graft.GraftError)) return fail(`bad/${b.name}: threw ${e && e.constructor && e.constructor.name} ${e}, not a GraftError`);
    const missing = b.words.filter((w) => !e.message.includes(w));
    if (e.kind !== b.kind || missing.length) fail(`bad/${b.name}: ${e.kind} error "${e.message}", expected ${b.kind} naming ${JSON.stringify(b.words)}`);
    else log(`ok   bad/${b.name}: ${e.message}`);
  }
}

async function expectError(what, kind, words, fn) {
  try {
    await fn();
    fail(`${what}: no error, expected a ${kind} GraftError`);
  } catch (e) {
    const missing = words.filter((w) => !String(e && e.message).includes(w));
    if (!(e instanceof graft.GraftError) || e.kind !== kind || missing.length)
      fail(`${what}: ${e && e.name} (${e && e.kind}) "${e && e.message}", expected a ${kind} GraftError naming ${JSON.stringify(words)}`);
    else log(`ok   ${what}: ${e.message}`);
  }
}

/** Wrong inputs and a disposed model are GraftErrors, and the model keeps working after them. */
async function misuse(c) {
  const model = await graft.load(`/cases/${c.name}/descriptor/`, options);
  const spec = model.inputs[0];
  const good = { data: await array(c.name, c.inputs[0]), shape: c.inputs[0].shape, dtype: c.inputs[0].dtype };
  const others = Object.fromEntries(await Promise.all(c.inputs.slice(1).map(async (v) => [v.name, { data: await array(c.name, v), shape: v.shape, dtype: v.dtype }])));
  await expectError('an input the model lacks', 'shape', ['no input named \'nope\''],
                    () => model.run({ ...others, [spec.name]: good, nope: good }));
  await expectError('a missing input', 'shape', [`'${spec.name}' is missing`], () => model.run(others));
  await expectError('a shape that does not hold the data', 'shape', [spec.name, 'holds'],
                    () => model.run({ ...others, [spec.name]: { data: good.data, shape: [good.data.length + 1] } }));
  await expectError('the wrong rank', 'shape', [], () => model.run({ ...others, [spec.name]: { data: good.data, shape: [good.data.length] } }));
  const out = await model.run({ ...others, [spec.name]: good });
  if (!out[c.outputs[0].name]) fail('the model does not run after refused inputs');
  model.dispose();
  await expectError('a disposed model', 'error', ['disposed'], () => model.run({ ...others, [spec.name]: good }));
  await expectError('a descriptor that is not there', 'io', ['HTTP 404'], () => graft.load('/cases/no-such-model/', options));
}

async function main() {
  log(`mode ${mode}: crossOriginIsolated=${globalThis.crossOriginIsolated}, cores=${navigator.hardwareConcurrency}`);
  const index = await (await fetch('/cases/index.json')).json();
  const info = await graft.buildInfo(options);
  log(`graft ${info.version}, build ${info.threads ? 'threads' : 'simd'} (simd128=${info.simd}), plugins ${info.plugins.join(', ')}`);
  if (mode === 'fallback' && info.threads) fail('without COOP/COEP graft chose the threaded build');
  if (mode === 'threads' && !info.threads) fail('with COOP/COEP graft did not choose the threaded build');
  let passed = 0;
  for (const c of index.cases) {
    try {
      const before = failures;
      const started = performance.now();
      const worst = await runCase(c);
      if (failures === before) { passed += 1; log(`ok   ${c.name} max_abs_err=${worst.toExponential(2)} (${(performance.now() - started).toFixed(0)} ms)`); }
    } catch (e) {
      fail(`${c.name}: ${e && e.name}: ${e && e.message}`);
    }
  }
  for (const b of index.bad) await runBad(b);
  await misuse(index.cases.find((c) => c.name === 'iris') || index.cases[0]);
  log(`${passed} of ${index.cases.length} cases match their references; ${failures} failure(s)`);
  return { ok: failures === 0 && index.cases.length > 0, mode, passed, total: index.cases.length, failures, lines };
}

main().catch((e) => {
  fail(`the test page itself failed: ${e && e.stack || e}`);
  return { ok: false, mode, lines };
}).then((report) => fetch('/__result', { method: 'POST', body: JSON.stringify(report) }));
