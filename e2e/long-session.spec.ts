// A session longer than the model in the drift panel (docs/methods.md, "Long sessions"): a checkpoint of 16
// positions scores a 30-token rollout as far as it reaches, the panel says how many targets each method could
// not reach, and its window setting scores them all, saying the drift is windowed.
import { test, expect } from './fixtures';

const tokens = (n: number, from: number) => Array.from({ length: n }, (_, i) => (from + 7 * i) % 256);
const act = (n: number, from: number) => ({ op: 'append', role: 'act', tokens: tokens(n, from) });
/** Branch 0 of 14 ids, an edit that keeps 7 and inserts 2, a final branch of 23 live ids: a tape of 30 (src/cli/long-session.gpu.test.ts). */
const LONG = {
  format: 'memorywalker.rollout/v1',
  id: 'long',
  vocab: 272,
  events: [
    { op: 'append', role: 'prompt', tokens: tokens(4, 1) },
    act(3, 2),
    { op: 'append', role: 'obs', tokens: tokens(4, 3) },
    act(3, 4),
    { op: 'edit', view: [{ keep: [0, 4] }, { insert: { role: 'summary', tokens: tokens(2, 5) } }, { keep: [11, 14] }] },
    act(4, 6),
    { op: 'append', role: 'obs', tokens: tokens(3, 7) },
    act(7, 8),
  ],
};

test('a rollout longer than the model: scored as far as it reaches, then on a window', async ({ page }) => {
  const { MODEL_PRESETS } = await import('../src/model/config');
  const { saveCheckpoint } = await import('../src/model/checkpoint');
  const { randomWeights } = await import('../src/model/random-weights');
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page.getByTestId('rollout-file-input').setInputFiles({ name: 'long.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(LONG)) });
  await expect(page.getByTestId('rollout-id')).toHaveText('long');
  const weights = randomWeights({ ...MODEL_PRESETS.tiny, nPositions: 16 }, 5);
  await page
    .getByTestId('checkpoint-file-input')
    .setInputFiles({ name: 'p16.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(saveCheckpoint(weights)) });
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 90_000 });
  const reach = page.getByTestId('drift-reach');
  await expect(reach).toContainText('Naive-Full: 11 of 17 targets need more than 16 positions (not scored; a window scores them)');
  await expect(reach).toContainText('LogitTree: 7 of 17 targets need more than 16 positions');
  await expect(page.getByTestId('drift-scored-logit-tree')).toHaveText('10');
  await expect(page.getByTestId('drift-scored-naive-full')).toHaveText('6');
  await expect(page.getByTestId('drift-logdiff-logit-tree')).toHaveText('0');

  // A window of 6 positions: every target scored, each on its last 5 tokens of context; the exact methods still agree.
  await page.getByTestId('drift-window').fill('6');
  await page.getByTestId('drift-window').press('Enter');
  await expect(reach).toContainText('windowed: the drift is windowed; a target whose context exceeds 5 tokens is scored on its last 5', { timeout: 90_000 });
  await expect(reach).toContainText('LogitTree 15 of 17');
  await expect(page.getByTestId('drift-scored-naive-full')).toHaveText('17');
  expect(Number(await page.getByTestId('drift-logdiff-packed-4d').getAttribute('data-value'))).toBeLessThan(1e-5);

  // A window beyond the model is refused in the field, the last one kept.
  await page.getByTestId('drift-window').fill('17');
  await page.getByTestId('drift-window').press('Enter');
  await expect(page.getByTestId('drift-window-error')).toHaveText('a window is a whole number of positions from 2 to 16');
});
