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

/**
 * The first tensor of a safetensors file that only the model families (Llama, Qwen2, Qwen3) have, or null
 * (a GPT-2 checkpoint, or not safetensors): their weights need the config.json of their folder, and
 * training reads GPT-2 checkpoints only. Reads the header alone.
 */
export async function familyWeightsName(file: Blob): Promise<string | null> {
  if (file.size < 9) return null;
  const length = new DataView(await file.slice(0, 8).arrayBuffer()).getBigUint64(0, true);
  if (length < 2n || length > BigInt(Math.min(file.size - 8, 100 * 2 ** 20))) return null;
  let header: unknown;
  try {
    header = JSON.parse(await file.slice(8, 8 + Number(length)).text());
  } catch {
    return null;
  }
  if (typeof header !== 'object' || header === null) return null;
  return Object.keys(header).find((name) => name === 'model.embed_tokens.weight' || name.startsWith('model.layers.')) ?? null;
}
