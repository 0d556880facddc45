// The drift panel's verdict on a positive Naive-Compressed (docs/metrics.md, "A positive Naive-Compressed on expert
// data"): the app's expert example scored by a checkpoint SFT'd under Naive-Compressed on the expert's demonstrations
// of other prompts. Its first rollout reads +2.50 against the live prefix; the verdict says above zero and why
// (the model was trained on final walks), not stale context and not leakage.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test, expect } from './fixtures';

const CKPT = fileURLToPath(new URL('../fixtures/models/expert-fold-nc.safetensors', import.meta.url));

test('expert example under a model trained on final walks: Naive-Compressed above zero, explained', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page
    .getByTestId('checkpoint-file-input')
    .setInputFiles({ name: 'expert-fold-nc.safetensors', mimeType: 'application/octet-stream', buffer: readFileSync(CKPT) });
  await expect(page.getByTestId('model-info')).toContainText('expert-fold-nc.safetensors');
  await page.getByTestId('example-lookup-fold').click();
  await expect(page.getByTestId('rollout-id')).toHaveText(/lookup-p2442144158-fold-r0/, { timeout: 120_000 });
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 120_000 });

  const mu = Number(await page.getByTestId('drift-mu-naive-compressed').getAttribute('data-value'));
  expect(mu).toBeGreaterThan(2.4);
  expect(mu).toBeLessThan(2.6);
  const line = page.getByTestId('verdict-naive-compressed');
  await expect(line).toHaveAttribute('data-state', 'above');
  await expect(line).toContainText('μ +2.50');
  await expect(line).toContainText('a model trained on final walks');
  await expect(line).toContainText('it is not stale context');
  await expect(line).not.toContainText('stale context: evicted evidence');
  await expect(line).not.toContainText('time-travel leakage: targets scored');
  await expect(page.getByTestId('verdict-logit-tree')).toHaveAttribute('data-state', 'at-floor');
  await expect(page.getByTestId('drift-conclusion')).toContainText('Naive-Compressed (μ +2.50');
});
