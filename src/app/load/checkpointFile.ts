// Whether a dropped file is a checkpoint (safetensors) rather than rollouts: by its name, else by its
// first bytes. A safetensors file opens with its header's length (8 bytes, little-endian) and then the
// header's JSON; a rollout file opens with JSON (or a BOM) at byte 0.

const HEADER_START = 0x7b; // '{'

export async function isCheckpointFile(file: Blob & { name?: string }): Promise<boolean> {
  if (file.name && /\.safetensors$/i.test(file.name)) return true;
  if (file.size < 9) return false;
  const head = new Uint8Array(await file.slice(0, 9).arrayBuffer());
  const length = new DataView(head.buffer).getBigUint64(0, true);
  return head[8] === HEADER_START && length > 1n && length < BigInt(file.size) && head[0] !== HEADER_START;
}
