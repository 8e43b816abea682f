// Types of graft.mjs, graft's browser runtime (web/README.md).

/** Element types graft takes and returns. */
export type DType = 'float32' | 'int32' | 'int64' | 'uint8' | 'uint16' | 'int8' | 'bool';

export type TypedArray = Float32Array | Int32Array | BigInt64Array | Uint8Array | Uint16Array | Int8Array;

/** An input or output of a model: a null dimension is free: the batch (first), or a size set per run such as a sequence's length (pass {data, shape} then). */
export interface ValueInfo {
  name: string;
  dtype: DType;
  shape: (number | null)[];
}

export interface Tensor {
  data: TypedArray;
  shape: number[];
  dtype: DType;
}

/** A typed array (the input's shape, the batch from its length; the dtype from its type), or a
 *  tensor with its shape and, for bool or to override the array's type, its dtype. */
export type Input = TypedArray | { data: TypedArray; shape?: number[]; dtype?: DType };

export class GraftError extends Error {
  /** "format", "unsupported", "shape", "dtype", "graph", "io", "memory", "error" */
  kind: string;
}

export interface Progress {
  loaded: number;
  total: number;
  file: string;
}

export interface LoadOptions {
  /** Intra-op threads: "auto" (default; one per core where the page is crossOriginIsolated, else 1) or a number. */
  threads?: 'auto' | number;
  onProgress?: (p: Progress) => void;
  /** Where graft-simd.mjs and graft-threads.mjs are; default: beside graft.mjs. */
  baseUrl?: string;
  /** Optimizer level 0-2 (default 2). */
  optLevel?: number;
}

export interface Model {
  readonly name: string;
  readonly inputs: ValueInfo[];
  readonly outputs: ValueInfo[];
  readonly threads: number;
  readonly backend: 'simd' | 'threads';
  run(inputs: Record<string, Input>): Promise<Record<string, Tensor>>;
  dispose(): void;
}

export type DescriptorSource =
  | string
  | URL
  | FileList
  | File[]
  | { graph: string | object | ArrayBuffer | ArrayBufferView | Blob; weights: ArrayBuffer | ArrayBufferView | Blob; name?: string };

export function load(source: DescriptorSource, options?: LoadOptions): Promise<Model>;

export interface BuildInfo {
  version: string;
  threads: boolean;
  max_threads: number;
  simd: boolean;
  plugins: string[];
}

export function buildInfo(options?: { threads?: 'auto' | number; baseUrl?: string }): Promise<BuildInfo>;

export function threadsAvailable(): boolean;
