// The page's checkpoints are one unit (issue 19, docs/reliability.md): a lane's downloads are its
// weights and the optimizer state bound to them (weights_sha256), read by mw train --ckpt-in's own
// pair reader; a mixed pair in the browser's store is refused on reload with the reason in the page,
// instead of resumed, and a new run replaces it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { checkPair } from '../src/model/checkpoint';
import { optimizerStatePath } from '../src/model/checkpoint-name';
import { readLaneCheckpoint } from '../src/run/files';
import { test, expect } from './fixtures';

const phase = (page: Page) => page.getByTestId('train-status');
const stepCount = async (page: Page) => Number(await page.getByTestId('train-step-count').textContent());

/** The two files a lane's ⤓ ckpt button downloads, with the names the page gives them. */
async function downloadPair(page: Page, testId: string): Promise<{ name: string; bytes: Uint8Array }[]> {
  const files: { name: string; bytes: Uint8Array }[] = [];
  const done = new Promise<void>((resolve) => {
    page.on('download', async (d) => {
      files.push({ name: d.suggestedFilename(), bytes: new Uint8Array(readFileSync((await d.path())!)) });
      if (files.length === 2) resolve();
    });
  });
  await page.getByTestId(testId).click();
  await done;
  return files;
}

test('a lane downloads a bound pair that mw train reads; a mixed pair in IndexedDB is refused in the page', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto('/#preset=tiny&methods=packed-4d&batch=2&lr=0.01&steps=0&seed=3&ckptEvery=2');
  await page.getByTestId('train-start').click();
  await expect.poll(() => stepCount(page), { timeout: 120_000, intervals: [100, 250] }).toBeGreaterThanOrEqual(3);
  await page.getByTestId('train-pause').click();
  await expect(phase(page)).toHaveAttribute('data-phase', 'paused');
  const step = await stepCount(page);
  await expect(page.getByTestId('train-checkpoint')).toContainText(String(step - (step % 2)));

  // The downloads: NAME.safetensors and NAME.optim.safetensors, bound, read as one pair by mw train's reader.
  const files = await downloadPair(page, 'export-checkpoint-packed-4d');
  const weights = files.find((f) => !f.name.endsWith('.optim.safetensors'))!;
  const optimizer = files.find((f) => f.name.endsWith('.optim.safetensors'))!;
  expect(optimizer.name).toBe(optimizerStatePath(weights.name));
  expect(checkPair(weights.bytes, optimizer.bytes)).toEqual({ ok: true, bound: true });
  const dir = mkdtempSync(join(tmpdir(), 'mw-e2e-pair-'));
  writeFileSync(join(dir, weights.name), weights.bytes);
  writeFileSync(join(dir, optimizer.name), optimizer.bytes);
  const pair = readLaneCheckpoint(join(dir, weights.name));
  expect(pair.optimizer!.step).toBe(step);
  expect(pair.metadata).toMatchObject({ step: String(step), method: 'packed-4d' });

  // The stored checkpoint becomes a mixed pair: other weights (one low mantissa bit) beside its optimizer state.
  const stored = await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('memorywalker-train', 1);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const store = db.transaction('lanes', 'readwrite').objectStore('lanes');
    const keys = await new Promise<IDBValidKey[]>((resolve) => (store.getAllKeys().onsuccess = (e) => resolve((e.target as IDBRequest<IDBValidKey[]>).result)));
    const key = keys.find((k) => String(k).endsWith('/packed-4d'))!;
    const lane = await new Promise<{ step: number; weights: Uint8Array }>(
      (resolve) => (store.get(key).onsuccess = (e) => resolve((e.target as IDBRequest).result)),
    );
    lane.weights = lane.weights.slice();
    lane.weights[lane.weights.length - 4] ^= 1;
    await new Promise((resolve) => (store.put(lane, key).onsuccess = resolve));
    db.close();
    return lane.step;
  });

  await page.reload();
  await expect(phase(page)).toHaveAttribute('data-phase', 'refused', { timeout: 60_000 });
  const reason = page.getByTestId('train-reason');
  await expect(reason).toHaveAttribute('data-cause', 'not-restored');
  await expect(reason).toContainText('The stored run was not resumed');
  await expect(reason).toContainText(
    `the packed-4d lane's checkpoint of step ${stored}: checkpoint: the optimizer state (step ${stored}) was saved with other weights`,
  );
  expect(await stepCount(page)).toBe(0);
  await page.screenshot({ path: join(dir, 'not-restored.png') });
  console.log(`screenshot: ${join(dir, 'not-restored.png')}`);

  // A new run replaces it.
  await page.getByTestId('train-start').click();
  await expect.poll(() => stepCount(page), { timeout: 120_000, intervals: [100, 250] }).toBeGreaterThanOrEqual(1);
  await expect(page.getByTestId('train-reason')).toHaveCount(0);
});
