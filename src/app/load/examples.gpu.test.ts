// scripts/examples.mjs writes the built-in examples the app ships: run again here (the demo model on
// the GPU), it gives the same rollouts, token for token, with the same log-probabilities (to 1e-5:
// another adapter may round differently).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXAMPLES } from './examples';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

type Json = Record<string, unknown> & { events: { logprobs?: number[] }[] };

describe('scripts/examples.mjs', () => {
  it('writes the shipped public/examples files', () => {
    const out = mkdtempSync(join(tmpdir(), 'mw-examples-'));
    execFileSync(process.execPath, ['--import', './scripts/register.mjs', 'scripts/examples.mjs', '--out', out], { cwd: ROOT, stdio: 'pipe' });
    const made = EXAMPLES.filter((e) => e.kind === 'file' && e.made);
    expect(made.length).toBe(2);
    for (const example of made) {
      if (example.kind !== 'file') continue;
      const lines = (path: string) =>
        readFileSync(path, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Json);
      const shipped = lines(join(ROOT, 'public', example.path));
      const again = lines(join(out, basename(example.path)));
      const logprobs = (r: Json) => r.events.flatMap((e) => e.logprobs ?? []);
      const withoutLogprobs = (r: Json) => ({ ...r, events: r.events.map(({ logprobs: _, ...e }) => e) });
      expect(again.map(withoutLogprobs), example.name).toEqual(shipped.map(withoutLogprobs));
      again.forEach((r, i) => {
        const a = logprobs(r);
        const b = logprobs(shipped[i]);
        expect(a.length).toBe(b.length);
        expect(Math.max(...a.map((v, j) => Math.abs(v - b[j]))), `${example.name} rollout ${i}`).toBeLessThan(1e-5);
      });
    }
  }, 180_000);
});
