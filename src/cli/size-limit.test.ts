// A rollout whose tree or plans would be huge is refused before they are built, by every command that
// builds them, with the figure and the limit (--max-packed overrides it); `mw tree` without
// --per-target counts its figures from the events and prints them. The 2,000-edit rollout of issue 31
// (N_packed 4,000,000 from 211 KB) is handled within 5 s by each.

import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evictingRollout } from '../testing/evicting';
import { fixturePath } from '../testing/fixtures';
import { main } from './main';

const TMP = mkdtempSync(join(tmpdir(), 'mw-size-'));
const EVICT = join(TMP, 'evict.json');
writeFileSync(EVICT, evictingRollout(2000));

async function mw(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const started = performance.now();
  const code = await main(argv, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
  return { code, stdout, stderr, ms: performance.now() - started };
}

const REFUSED = `${EVICT}: rollout "evict": N_packed 4,000,000 is above the limit of 2,000,000 rows (its tree would hold that many nodes; --max-packed N allows more)\n`;

describe('the 2,000-edit rollout (N_packed 4,000,000)', () => {
  it('mw tree prints its figures, counted from the events, within 5 s', async () => {
    const run = await mw('tree', EVICT, '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: 'evict', K: 2000, physicalLength: 4000, finalWalkLength: 2000, packedLength: 4_000_000 });
    expect(run.ms).toBeLessThan(5000);
  });

  it.each([
    ['tree --per-target', ['tree', EVICT, '--per-target']],
    ['tree --per-target --json', ['tree', EVICT, '--per-target', '--json']],
    ['plan packed-4d', ['plan', EVICT, '--method', 'packed-4d', '--json']],
    ['plan naive-full', ['plan', EVICT, '--method', 'naive-full']],
    ['export logit-tree', ['export', EVICT, '--method', 'logit-tree', '--out', join(TMP, 'evict.safetensors')]],
  ])('mw %s refuses it within 5 s: exit 2, one line naming N_packed and the limit, nothing written', async (_, argv) => {
    const run = await mw(...argv);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: REFUSED });
    expect(run.ms).toBeLessThan(5000);
    expect(readdirSync(TMP)).toEqual(['evict.json']);
  });

  it('the limit is a flag: a plan above it is refused with its rows, one within it is built', async () => {
    const worked = fixturePath('worked-example.json');
    const refused = await mw('plan', worked, '--method', 'logit-tree', '--max-packed', '24');
    expect(refused).toMatchObject({
      code: 2,
      stderr: `${worked}: rollout "worked-example": the logit-tree plan has 27 rows, above the limit of 24 (N_packed 21; --max-packed N allows more)\n`,
    });
    expect((await mw('plan', worked, '--method', 'logit-tree', '--max-packed', '27')).code).toBe(0);
    expect((await mw('export', worked, '--method', 'packed-4d', '--max-packed', '20', '--out', join(TMP, 'w.safetensors'))).code).toBe(2);
    expect(existsSync(join(TMP, 'w.safetensors'))).toBe(false);
    expect(await mw('plan', worked, '--method', 'packed-4d', '--max-packed', '0')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--max-packed must be an integer ≥ 1'),
    });
  });
});
