// The safetensors container, read and written on plain bytes (browser File.arrayBuffer() or Node fs):
// u64 little-endian header length, a JSON header {name: {dtype, shape, data_offsets}, __metadata__},
// then the raw little-endian data, offsets relative to its start. We write F32 and I32 and read
// F32, F16, BF16 and F64 (converted to float32). Every malformed file is a clear error.

export interface TensorEntry {
  name: string;
  dtype: string;
  shape: number[];
  begin: number; // absolute byte offset in the file
  end: number; // absolute, exclusive
}

export interface SafetensorsHeader {
  metadata: Record<string, string> | null;
  entries: Map<string, TensorEntry>; // in header order
}

export interface TensorToWrite {
  name: string;
  shape: readonly number[];
  /** F32 or I32, by the array's type. */
  data: Float32Array | Int32Array;
}

/** A tensor's place in a header written before its data (streamed writers): dtype, shape, no data. */
export interface TensorSpec {
  name: string;
  dtype: 'F32' | 'I32' | 'F16' | 'BF16';
  shape: readonly number[];
}

/** Bytes per element of every safetensors dtype (unknown dtypes make the header invalid). */
const DTYPE_BYTES: Record<string, number> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
};

export const READABLE_DTYPES = ['F32', 'F16', 'BF16', 'F64'] as const;

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function fail(message: string): never {
  throw new Error(`safetensors: ${message}`);
}

function isShape(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((d) => Number.isSafeInteger(d) && d >= 0);
}

/**
 * Where the data start (8 + the header's length), from the file's first 8 bytes: how much of the file
 * a streaming reader fetches before readSafetensorsHeader(prefix, fileSize).
 */
export function safetensorsDataStart(first8: Uint8Array, fileSize = first8.length): number {
  if (first8.length < 8 || fileSize < 8) fail(`truncated file: ${Math.min(first8.length, fileSize)} bytes, but the header length needs bytes 0..8`);
  const view = new DataView(first8.buffer, first8.byteOffset, 8);
  const dataStart = 8 + view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (dataStart > fileSize) fail(`truncated file: the header needs bytes 8..${dataStart}, but the file has ${fileSize} bytes`);
  return dataStart;
}

/**
 * The header of a safetensors file from its bytes, or from a prefix holding at least the header
 * (`fileSize` then is the whole file's size: every tensor's range is checked against it).
 */
export function readSafetensorsHeader(bytes: Uint8Array, fileSize = bytes.length): SafetensorsHeader {
  const dataStart = safetensorsDataStart(bytes, fileSize);
  if (dataStart > bytes.length) fail(`the header needs bytes 8..${dataStart}, but only ${bytes.length} bytes of the file were read`);

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, dataStart)));
  } catch (e) {
    fail(`header (bytes 8..${dataStart}) is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail('header is not a JSON object');

  let metadata: Record<string, string> | null = null;
  const entries = new Map<string, TensorEntry>();
  for (const [name, value] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('__metadata__ is not an object');
      for (const [k, v] of Object.entries(value)) if (typeof v !== 'string') fail(`__metadata__.${k} is not a string`);
      metadata = value as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets: offsets } = (value ?? {}) as Record<string, unknown>;
    if (typeof dtype !== 'string' || !(dtype in DTYPE_BYTES)) fail(`tensor ${name}: unknown dtype ${JSON.stringify(dtype)}`);
    if (!isShape(shape)) fail(`tensor ${name}: shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
    if (!isShape(offsets) || offsets.length !== 2 || offsets[0] > offsets[1]) {
      fail(`tensor ${name}: data_offsets ${JSON.stringify(offsets)} is not [begin, end] with begin <= end`);
    }
    const want = shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
    if (offsets[1] - offsets[0] !== want) {
      fail(
        `tensor ${name}: data_offsets [${offsets[0]}, ${offsets[1]}] hold ${offsets[1] - offsets[0]} bytes, but ${dtype} ${JSON.stringify(shape)} needs ${want}`,
      );
    }
    const begin = dataStart + offsets[0];
    const end = dataStart + offsets[1];
    if (end > fileSize) fail(`truncated file: tensor ${name} needs bytes ${begin}..${end}, but the file has ${fileSize} bytes`);
    entries.set(name, { name, dtype, shape, begin, end });
  }

  const sorted = [...entries.values()].sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < sorted.length; i++) {
    const [a, b] = [sorted[i - 1], sorted[i]];
    if (b.begin < a.end) fail(`tensors ${a.name} (bytes ${a.begin}..${a.end}) and ${b.name} (bytes ${b.begin}..${b.end}) overlap`);
  }
  return { metadata, entries };
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

let halfTable: Float32Array | undefined;

/** Every half value as float32, built once: a 124M-parameter F16 file converts by table lookup. */
function halfToFloatTable(): Float32Array {
  if (!halfTable) {
    halfTable = new Float32Array(0x10000);
    for (let h = 0; h < 0x10000; h++) halfTable[h] = halfToFloat(h);
  }
  return halfTable;
}

/** F16 data as float32 (exact: every half is a float32). */
function readHalfs(bytes: Uint8Array, begin: number, n: number, out: Float32Array): void {
  const table = halfToFloatTable();
  const at = bytes.byteOffset + begin;
  if (LITTLE_ENDIAN_HOST && at % 2 === 0) {
    const halves = new Uint16Array(bytes.buffer, at, n);
    for (let i = 0; i < n; i++) out[i] = table[halves[i]];
    return;
  }
  const view = new DataView(bytes.buffer, at, 2 * n);
  for (let i = 0; i < n; i++) out[i] = table[view.getUint16(2 * i, true)];
}

/** Bytes per element of a dtype (undefined for one safetensors does not define). */
export function dtypeBytes(dtype: string): number | undefined {
  return Object.hasOwn(DTYPE_BYTES, dtype) ? DTYPE_BYTES[dtype] : undefined;
}

/** One tensor's data as float32 (F16, BF16 and F64 are converted). */
export function readTensor(bytes: Uint8Array, entry: TensorEntry): Float32Array {
  const { begin, end, dtype } = entry;
  const n = (end - begin) / DTYPE_BYTES[dtype];
  const out = new Float32Array(n);
  if (dtype === 'F32' && LITTLE_ENDIAN_HOST) {
    new Uint8Array(out.buffer).set(bytes.subarray(begin, end)); // copy: the source may be unaligned
    return out;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + begin, end - begin);
  switch (dtype) {
    case 'F32':
      for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case 'F64':
      for (let i = 0; i < n; i++) out[i] = view.getFloat64(8 * i, true);
      break;
    case 'F16':
      readHalfs(bytes, begin, n, out);
      break;
    case 'BF16': {
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) bits[i] = view.getUint16(2 * i, true) << 16;
      break;
    }
    default:
      fail(`tensor ${entry.name}: unsupported dtype ${dtype} (readable: ${READABLE_DTYPES.join(', ')})`);
  }
  return out;
}

/** One I32 tensor's data (what batch files hold besides F32). */
export function readInt32Tensor(bytes: Uint8Array, entry: TensorEntry): Int32Array {
  if (entry.dtype !== 'I32') fail(`tensor ${entry.name}: dtype ${entry.dtype}, expected I32`);
  const n = (entry.end - entry.begin) / 4;
  const out = new Int32Array(n);
  const view = new DataView(bytes.buffer, bytes.byteOffset + entry.begin, entry.end - entry.begin);
  for (let i = 0; i < n; i++) out[i] = view.getInt32(4 * i, true);
  return out;
}

/**
 * The file's head for tensors whose data follow it in the given order, back to back: the 8-byte
 * length and the JSON header, padded so the data start 8-byte aligned. Lets a writer stream the
 * data after it (safetensorsHeader + each tensor's little-endian bytes = writeSafetensors).
 */
export function safetensorsHeader(tensors: readonly TensorSpec[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const { name, dtype, shape } of tensors) {
    if (name === '__metadata__' || name in header) fail(`cannot write tensor name ${name} twice or as __metadata__`);
    const bytes = shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
    header[name] = { dtype, shape: [...shape], data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((new TextEncoder().encode(json).length + 8) % 8)) % 8); // spaces, as the reference writer pads
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, headerBytes.length, true);
  view.setUint32(4, Math.floor(headerBytes.length / 2 ** 32), true);
  out.set(headerBytes, 8);
  return out;
}

/** A tensor's data as little-endian bytes (a view of the array itself on little-endian hosts). */
export function tensorBytes(data: Float32Array | Int32Array): Uint8Array {
  if (LITTLE_ENDIAN_HOST) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = new Uint8Array(data.byteLength);
  const view = new DataView(out.buffer);
  if (data instanceof Float32Array) for (let i = 0; i < data.length; i++) view.setFloat32(4 * i, data[i], true);
  else for (let i = 0; i < data.length; i++) view.setInt32(4 * i, data[i], true);
  return out;
}

/** A safetensors file of F32 and I32 tensors, in the given order, data 8-byte aligned. */
export function writeSafetensors(tensors: readonly TensorToWrite[], metadata?: Record<string, string>): Uint8Array {
  const specs = tensors.map(({ name, shape, data }): TensorSpec => {
    const size = shape.reduce((a, b) => a * b, 1);
    if (size !== data.length) fail(`tensor ${name}: shape ${JSON.stringify(shape)} holds ${size} values, data has ${data.length}`);
    return { name, dtype: data instanceof Int32Array ? 'I32' : 'F32', shape };
  });
  const head = safetensorsHeader(specs, metadata);
  const out = new Uint8Array(head.length + tensors.reduce((n, t) => n + t.data.byteLength, 0));
  out.set(head);
  let at = head.length;
  for (const { data } of tensors) {
    out.set(tensorBytes(data), at);
    at += data.byteLength;
  }
  return out;
}
