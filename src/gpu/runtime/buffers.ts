// Buffers: typed creation, upload and readback, and an owner that destroys a group of them together.
// Every buffer gets a label `Owner.member`.

export type Storage = GPUBuffer;

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** A storage buffer of `bytes` (rounded up to 4), zero-filled. */
export function createStorage(device: GPUDevice, label: string, bytes: number): Storage {
  return device.createBuffer({ label, size: Math.max(4, align(bytes, 4)), usage: STORAGE() });
}

/** A storage buffer holding `data`. */
export function uploadStorage(device: GPUDevice, label: string, data: Float32Array | Uint32Array | Int32Array): Storage {
  const buffer = createStorage(device, label, data.byteLength);
  device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
  return buffer;
}

/** What a forward, a decoder or a scoring owns: buffers labelled `Owner.name` and anything else with a destroy(), destroyed together. */
export function createOwner(device: GPUDevice, label: string) {
  const owned: { destroy(): void }[] = [];
  const own = <D extends { destroy(): void }>(d: D) => (owned.push(d), d);
  return {
    own,
    buf: (name: string, floats: number) => own(createStorage(device, `${label}.${name}`, floats * 4)),
    upload: (name: string, data: Uint32Array) => own(uploadStorage(device, `${label}.${name}`, data)),
    destroy: () => owned.forEach((d) => d.destroy()),
  };
}

/** A uniform buffer written from the bytes of a struct mirror (see each kernel's `*Params`). */
export function uploadUniform(device: GPUDevice, label: string, bytes: ArrayBuffer): GPUBuffer {
  const buffer = device.createBuffer({
    label,
    size: align(Math.max(16, bytes.byteLength), 16),
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(buffer, 0, bytes);
  return buffer;
}

/** Copy `bytes` of a storage buffer back to the CPU. One await: call it once per step, at the end. */
export async function readBuffer(device: GPUDevice, source: GPUBuffer, bytes = source.size, offset = 0): Promise<ArrayBuffer> {
  const size = align(bytes, 4);
  const staging = device.createBuffer({
    label: `readBuffer.staging(${source.label})`,
    size,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const encoder = device.createCommandEncoder({ label: 'readBuffer.encoder' });
  encoder.copyBufferToBuffer(source, offset, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const copy = staging.getMappedRange().slice(0, bytes);
  staging.unmap();
  staging.destroy();
  return copy;
}

export async function readFloat32(device: GPUDevice, source: GPUBuffer, count?: number): Promise<Float32Array> {
  return new Float32Array(await readBuffer(device, source, count === undefined ? source.size : count * 4));
}

export async function readUint32(device: GPUDevice, source: GPUBuffer, count?: number): Promise<Uint32Array> {
  return new Uint32Array(await readBuffer(device, source, count === undefined ? source.size : count * 4));
}

export function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/**
 * Copies several buffer ranges into one staging buffer inside `encoder` (after the step's pass),
 * so a whole step reads back with a single await: call `read()` after submitting the encoder.
 */
export function stageReadback(
  device: GPUDevice,
  encoder: GPUCommandEncoder,
  sources: readonly { buffer: GPUBuffer; bytes: number }[],
): { read(): Promise<ArrayBuffer[]> } {
  const offsets: number[] = [];
  let total = 0;
  for (const s of sources) {
    offsets.push(total);
    total += align(Math.max(4, s.bytes), 4);
  }
  const staging = device.createBuffer({ label: 'stageReadback.staging', size: Math.max(4, total), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  sources.forEach((s, i) => {
    if (s.bytes > 0) encoder.copyBufferToBuffer(s.buffer, 0, staging, offsets[i], align(s.bytes, 4));
  });
  return {
    async read() {
      await staging.mapAsync(GPUMapMode.READ);
      const all = staging.getMappedRange();
      const out = sources.map((s, i) => all.slice(offsets[i], offsets[i] + s.bytes));
      staging.unmap();
      staging.destroy();
      return out;
    },
  };
}
