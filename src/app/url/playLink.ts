// A playground rollout inside a link: its JSON, deflated (CompressionStream, raw deflate) and written
// as base64url in the `play` field of the URL. A link holds up to PLAY_LINK_LIMIT characters of it;
// a longer rollout is handed out as a file instead (the playground says so).
import type { RolloutJson } from '../../rollout';

/** The most characters of compressed rollout a link carries (a few kilobytes: links stay shareable). */
export const PLAY_LINK_LIMIT = 6000;

async function pipe(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  const out = new Blob([bytes as BlobPart]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('it holds characters a link code does not use');
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** The link code of a rollout (whatever its length: the caller compares it with PLAY_LINK_LIMIT). */
export async function encodePlay(rollout: RolloutJson): Promise<string> {
  return toBase64Url(await pipe(new TextEncoder().encode(JSON.stringify(rollout)), new CompressionStream('deflate-raw')));
}

/** The rollout JSON a link code holds; throws one line when it is not one. */
export async function decodePlay(code: string): Promise<RolloutJson> {
  let text: string;
  try {
    text = new TextDecoder().decode(await pipe(fromBase64Url(code), new DecompressionStream('deflate-raw')));
  } catch (error) {
    throw new Error(`the link's playground rollout does not read (${error instanceof Error ? error.message : String(error)}): was it cut short?`);
  }
  try {
    return JSON.parse(text) as RolloutJson;
  } catch {
    throw new Error("the link's playground rollout is not JSON: was it cut short?");
  }
}
