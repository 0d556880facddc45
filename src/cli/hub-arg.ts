// `--ckpt hf:ORG/NAME[@REV]` and `mw import --tokenizer hf:ORG/NAME[@REV]` (docs/hub.md): the model's snapshot
// folder in the Hub cache, fetched first where it is not whole there, with progress on stderr; the Hub's
// refusals are invalid input in one line (exit 2).

import { HubError, formatHubRef, parseHubRef } from '../model/hub/hub';
import { hubModelFolder } from '../model/hub/hub-node';
import { createProgress } from '../present/progress';
import { ValidationError, quote } from '../rollout/errors';
import { UsageError, type CliIO } from './command';

/** Downloads this large or larger report progress off a terminal too (as a folder's load does). */
const PROGRESS_BYTES = 64 * 2 ** 20;

function size(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  return bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 2 ** 10).toFixed(1)} KiB`;
}

/**
 * `--ckpt hf:ORG/NAME[@REV]` (docs/hub.md): the model's snapshot folder in the Hub cache, downloaded first
 * where it is not whole there ($HF_ENDPOINT, $HF_TOKEN; progress on stderr on a terminal or for a large
 * download). The Hub's refusals (404, 401 / 403), a lost connection and a full disk are one line (exit 2).
 */
export async function hubCheckpointArg(text: string, io: CliIO, command: string, options: { tokenizerOnly?: boolean; flag?: string } = {}): Promise<string> {
  const ref = parseHubRef(text);
  if (!ref) throw new UsageError(`--${options.flag ?? 'ckpt'} ${quote(text)} is not a Hub model id (hf:ORG/NAME or hf:ORG/NAME@REVISION)`);
  const tty = !!process.stderr.isTTY;
  const progress = createProgress((line) => io.err(line), { tty });
  let shown = false;
  try {
    return await hubModelFolder(ref, {
      endpoint: process.env.HF_ENDPOINT || undefined,
      token: process.env.HF_TOKEN || undefined,
      tokenizerOnly: options.tokenizerOnly,
      onProgress: ({ bytes, total, fetched }) => {
        // Bytes found in the cache (a resumed file's first part) are not part of this run's rate.
        const kept = bytes - fetched;
        if (!tty && !shown && total < PROGRESS_BYTES) return;
        shown = true;
        progress(fetched, total - kept, ({ eta }) => `mw ${command}: downloading ${formatHubRef(ref)}: ${size(bytes)} of ${size(total)}, ETA ${eta}`);
      },
    });
  } catch (error) {
    if (error instanceof HubError) throw new ValidationError({ file: formatHubRef(ref) }, error.reason);
    throw error;
  }
}

/** A Hub model's name, as its folder downloaded by hand is named: NAME of `hf:ORG/NAME[@REV]`. */
export function hubModelName(text: string): string | undefined {
  return parseHubRef(text)?.repo.split('/').pop();
}
