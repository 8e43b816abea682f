// graft.mjs - graft's browser runtime: load a graft descriptor (graph.json + weights.bin, written on
// the host by `graft convert`) and run it in WebAssembly.
//
//   import * as graft from './graft.mjs';
//   const model = await graft.load('models/mnist/');             // a descriptor's URL
//   const out = await model.run({ input_1: pixels });            // Float32Array, or {data, shape}
//   console.log(out.dense_2.data, out.dense_2.shape);
//   model.dispose();
//
// Two builds sit beside this file: graft-simd.mjs (WebAssembly SIMD128, one thread) and
// graft-threads.mjs (SIMD128 + a pool of worker threads). The threaded one needs a page that is
// crossOriginIsolated (served with `Cross-Origin-Opener-Policy: same-origin` and
// `Cross-Origin-Embedder-Policy: require-corp`); elsewhere graft uses the single-threaded one.
// Failures reject with a GraftError whose message is the one graft's command line prints.

/** An error from graft: `kind` is "format", "unsupported", "shape", "dtype", "io", ... */
export class GraftError extends Error {
  constructor(message, kind = 'error') {
    super(message);
    this.name = 'GraftError';
    this.kind = kind;
  }
}

const TYPED = {
  float32: Float32Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array,
  uint16: Uint16Array, int8: Int8Array, bool: Uint8Array,
};

// graft::DType's values, in order (web/src/bindings.cpp takes and gives these codes).
const DTYPE_CODES = ['float32', 'int32', 'int64', 'uint8', 'uint16', 'int8', 'bool'];

/** The WebAssembly memory's current buffer (a worker thread may have grown it since the module's
 *  HEAP views were made). */
function heap(m) {
  return (m.wasmMemory || m.asm?.memory)?.buffer ?? m.HEAPU8.buffer;
}

function dtypeOf(data) {
  for (const [name, T] of Object.entries(TYPED)) if (name !== 'bool' && data instanceof T) return name;
  return null;
}

/** Whether the threaded build can run here: the page is crossOriginIsolated. */
export function threadsAvailable() {
  return typeof SharedArrayBuffer !== 'undefined' && globalThis.crossOriginIsolated === true;
}

const modules = new Map();  // variant -> Promise of the instantiated module

function instantiate(variant, baseUrl) {
  const key = `${variant} ${baseUrl}`;
  if (!modules.has(key)) {
    const url = new URL(`graft-${variant}.mjs`, baseUrl).href;
    modules.set(key, (async () => {
      const { default: create } = await import(url);
      const m = await create({ locateFile: (file) => new URL(file, baseUrl).href });
      const at = m._graft_web_build_info();
      check(m, at !== 0);
      const info = JSON.parse(m.UTF8ToString(at));
      return { m, info, variant };
    })().catch((e) => {
      modules.delete(key);
      if (e instanceof GraftError) throw e;
      throw new GraftError(`cannot start graft's ${variant} WebAssembly build from ${url}: ${e.message || e}`, 'io');
    }));
  }
  return modules.get(key);
}

function check(m, ok) {
  if (ok) return;
  throw new GraftError(m.UTF8ToString(m._graft_web_error()), m.UTF8ToString(m._graft_web_error_kind()) || 'error');
}

/** fetch(), with a network failure as a GraftError naming the URL. */
async function get(url) {
  try {
    return await fetch(url);
  } catch (e) {
    throw new GraftError(`cannot fetch ${url}: ${e.message || e}`, 'io');
  }
}

async function readBody(response, what, onProgress, loadedBefore, totalHint) {
  if (!response.ok) throw new GraftError(`cannot fetch ${what}: HTTP ${response.status} ${response.statusText}`, 'io');
  const total = Number(response.headers.get('Content-Length')) || 0;
  if (!onProgress || !response.body) {
    try {
      return new Uint8Array(await response.arrayBuffer());
    } catch (e) {
      throw new GraftError(`cannot read ${what}: ${e.message || e}`, 'io');
    }
  }
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw new GraftError(`cannot read ${what}: ${e.message || e} (after ${loaded} bytes)`, 'io');
    }
    const { done, value } = chunk;
    if (done) break;
    parts.push(value);
    loaded += value.length;
    onProgress({ loaded: loadedBefore + loaded, total: totalHint(total), file: what });
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  if (!parts.length) onProgress({ loaded: loadedBefore, total: loadedBefore, file: what });  // an empty file
  return out;
}

async function bytesOf(x, what) {
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (typeof Blob !== 'undefined' && x instanceof Blob) return new Uint8Array(await x.arrayBuffer());
  if (typeof x === 'string') return new TextEncoder().encode(x);
  if (x && typeof x === 'object') return new TextEncoder().encode(JSON.stringify(x));
  throw new GraftError(`${what}: expected a string, an ArrayBuffer, a typed array or a Blob`, 'io');
}

/** Reads a descriptor's two parts from where `source` says (see load). */
async function fetchDescriptor(source, onProgress) {
  if (typeof source === 'string' || source instanceof URL) {
    let base = String(source);
    if (base.endsWith('graph.json')) base = base.slice(0, -'graph.json'.length);
    if (!base.endsWith('/')) base += '/';
    const graphUrl = new URL('graph.json', new URL(base, globalThis.location?.href)).href;
    const weightsUrl = new URL('weights.bin', graphUrl).href;
    const graph = await readBody(await get(graphUrl), graphUrl, null, 0, () => 0);
    let weightBytes = 0;
    try { weightBytes = JSON.parse(new TextDecoder().decode(graph)).weights.bytes || 0; } catch { /* graft reports it */ }
    const weights = await readBody(await get(weightsUrl), weightsUrl, onProgress, 0,
                                   (total) => total || weightBytes);
    return { graph, weights, name: base.replace(/\/$/, '') };
  }
  let graph, weights, name = 'descriptor';
  const files = typeof FileList !== 'undefined' && source instanceof FileList ? Array.from(source)
    : Array.isArray(source) ? source : null;
  if (files) {
    graph = files.find((f) => f.name === 'graph.json');
    weights = files.find((f) => f.name === 'weights.bin');
    if (!graph || !weights) throw new GraftError('the files given should include graph.json and weights.bin', 'io');
  } else if (source && typeof source === 'object') {
    ({ graph, weights } = source);
    name = source.name || name;
    if (graph === undefined || weights === undefined) throw new GraftError('load({graph, weights}): both are needed', 'io');
  } else {
    throw new GraftError('load(): give a descriptor URL, {graph, weights}, or the files graph.json and weights.bin', 'io');
  }
  const g = await bytesOf(graph, 'graph.json');
  const w = await bytesOf(weights, 'weights.bin');
  if (onProgress) onProgress({ loaded: w.length, total: w.length, file: 'weights.bin' });
  return { graph: g, weights: w, name };
}

/** A loaded model. Its methods must not be called after dispose(). */
class Model {
  constructor(rt, handle, signature, source) {
    this._rt = rt;
    this._h = handle;
    this._meta = rt.m._malloc(34 * 4);  // shapes in, dtype + rank + shape out
    /** [{name, dtype, shape}]: a null dimension is free: the batch, or a size set per run (a sequence's length). */
    this.inputs = signature.inputs;
    this.outputs = signature.outputs;
    /** Intra-op threads the model runs with. */
    this.threads = signature.threads;
    /** Which build runs it: "simd" or "threads". */
    this.backend = rt.variant;
    this.name = source;
  }

  _live() {
    if (!this._h) throw new GraftError(`model ${this.name} was disposed`, 'error');
    return this._rt.m;
  }

  /**
   * Runs the model. `inputs` maps each input's name to a typed array (its dtype from the array's
   * type; the shape is the input's, with the batch from the length) or to {data, shape, dtype?}.
   * Resolves to {name: {data, shape, dtype}} for every output; the arrays are copies.
   */
  async run(inputs) {
    const m = this._live();
    if (!inputs || typeof inputs !== 'object') throw new GraftError('run(): give an object {inputName: data}', 'shape');
    for (const name of Object.keys(inputs))
      if (!this.inputs.some((i) => i.name === name))
        throw new GraftError(`the model has no input named '${name}' (it has ${this.inputs.map((i) => `'${i.name}'`).join(', ')})`, 'shape');
    const meta = this._meta;
    this.inputs.forEach((spec, index) => {
      const given = inputs[spec.name];
      if (given === undefined) throw new GraftError(`input '${spec.name}' is missing`, 'shape');
      const data = ArrayBuffer.isView(given) ? given : given.data;
      if (!ArrayBuffer.isView(data)) throw new GraftError(`input '${spec.name}': expected a typed array or {data, shape}`, 'shape');
      const dtype = (!ArrayBuffer.isView(given) && given.dtype) || dtypeOf(data);
      if (!dtype || !(dtype in TYPED)) throw new GraftError(`input '${spec.name}': ${data.constructor.name} is not a dtype graft takes`, 'dtype');
      let shape = ArrayBuffer.isView(given) ? null : given.shape;
      if (!shape) {
        if (spec.shape.slice(1).includes(null))
          throw new GraftError(`input '${spec.name}' has free sizes other than the batch ([${spec.shape.map((d) => d ?? '?').join(', ')}]): pass {data, shape}`, 'shape');
        const fixed = spec.shape.reduce((a, d) => a * (d === null ? 1 : d), 1);
        const batch = fixed ? data.length / fixed : 0;
        if (!Number.isInteger(batch))
          throw new GraftError(`input '${spec.name}': ${data.length} values do not fill a whole batch of shape [${spec.shape.map((d) => d ?? '?').join(', ')}]`, 'shape');
        shape = spec.shape.map((d) => (d === null ? batch : d));
      }
      if (shape.length > 32) throw new GraftError(`input '${spec.name}': rank ${shape.length} is more than 32`, 'shape');
      const count = shape.reduce((a, d) => a * d, 1);
      if (count !== data.length)
        throw new GraftError(`input '${spec.name}': shape [${shape.join(', ')}] holds ${count} values, ${data.length} given`, 'shape');
      new Int32Array(heap(m), meta, shape.length).set(shape);
      const at = m._graft_web_input(this._h, index, DTYPE_CODES.indexOf(dtype), meta, shape.length);
      check(m, at !== 0);
      new Uint8Array(heap(m), at, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    });
    check(m, m._graft_web_run(this._h) >= 0);
    const out = {};
    this.outputs.forEach((spec, i) => {
      const at = m._graft_web_output(this._h, i, meta);
      const info = new Int32Array(heap(m), meta, 34);
      const dtype = DTYPE_CODES[info[0]];
      const shape = Array.from(info.subarray(2, 2 + info[1]));
      const T = TYPED[dtype];
      const count = shape.reduce((a, d) => a * d, 1);
      const bytes = new Uint8Array(heap(m), at, count * T.BYTES_PER_ELEMENT).slice();
      out[spec.name] = { data: new T(bytes.buffer), shape, dtype };
    });
    return out;
  }

  /** Frees the model's memory in the WebAssembly heap. */
  dispose() {
    if (this._h) {
      this._rt.m._graft_web_free(this._h);
      this._rt.m._free(this._meta);
    }
    this._h = 0;
  }
}

/**
 * Loads a graft descriptor. `source` is its URL (a directory holding graph.json and weights.bin,
 * or graph.json's own URL), {graph, weights[, name]} (strings, ArrayBuffers, typed arrays or
 * Blobs), or the two Files (a FileList from an <input type=file multiple>).
 *
 * options.threads: intra-op threads; "auto" (default) is one per core, at most the pool's size,
 *   where the page is crossOriginIsolated and 1 elsewhere; 1 uses the single-threaded build.
 * options.build: "auto" (default: as threads says), "simd" or "threads" (its pool, even for 1 thread).
 * options.onProgress({loaded, total, file}): called as weights.bin arrives.
 * options.baseUrl: where graft-simd.mjs and graft-threads.mjs are (default: beside this file).
 * options.optLevel: the optimizer level, 0 to 2 (default 2).
 */
export async function load(source, options = {}) {
  const baseUrl = new URL(options.baseUrl || './', import.meta.url).href;
  const wanted = options.threads ?? 'auto';
  if (wanted !== 'auto' && !(Number.isInteger(wanted) && wanted >= 1))
    throw new GraftError(`options.threads should be "auto" or a whole number >= 1, not ${wanted}`, 'error');
  const rt = await instantiate(chooseBuild(options), baseUrl);
  const { m } = rt;
  let threads = 1;
  if (rt.variant === 'threads') {
    const cores = globalThis.navigator?.hardwareConcurrency || 1;
    threads = Math.min(wanted === 'auto' ? cores : wanted, rt.info.max_threads || cores);
  }
  const { graph, weights, name } = await fetchDescriptor(source, options.onProgress);
  const g = m._malloc(graph.length + 1);
  const w = m._malloc(Math.max(weights.length, 1));
  const namePtr = m._malloc(m.lengthBytesUTF8(name) + 1);
  let handle = 0;
  try {
    new Uint8Array(heap(m)).set(graph, g);
    new Uint8Array(heap(m)).set(weights, w);
    m.stringToUTF8(name, namePtr, m.lengthBytesUTF8(name) + 1);
    handle = m._graft_web_load(g, graph.length, w, weights.length, namePtr, threads, options.optLevel ?? 2);
    check(m, handle !== 0);
  } finally {
    m._free(g);
    m._free(w);
    m._free(namePtr);
  }
  const signature = JSON.parse(m.UTF8ToString(m._graft_web_signature(handle)));
  return new Model(rt, handle, signature, name);
}

/** Which build load() takes for these options: "threads" or "simd". */
function chooseBuild(options) {
  const build = options.build ?? 'auto';
  if (build === 'simd') return 'simd';
  if (build === 'threads') {
    if (!threadsAvailable())
      throw new GraftError('the threaded build needs a crossOriginIsolated page: serve it with the headers ' +
                           'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp', 'error');
    return 'threads';
  }
  if (build !== 'auto') throw new GraftError(`options.build should be "auto", "simd" or "threads", not ${build}`, 'error');
  return (options.threads ?? 'auto') !== 1 && threadsAvailable() ? 'threads' : 'simd';
}

/** What the build chosen for these options is: {version, threads, simd, plugins, max_threads}. */
export async function buildInfo(options = {}) {
  const baseUrl = new URL(options.baseUrl || './', import.meta.url).href;
  return (await instantiate(chooseBuild(options), baseUrl)).info;
}
