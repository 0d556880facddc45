// A model from the Hub by id (issue 29), against a stand-in Hub on 127.0.0.1 (src/testing/hubServer.ts) serving a
// tiny Qwen3-family folder in the Hub's URL layout: the page downloads it with progress in bytes and opens it
// as the scoring model; after a reload it comes back from the page's cache with no request at all; a download cut
// mid-file ends in one line, and the next load fetches only the rest (a Range request); bytes that do not hash to
// the Hub's sha256 are one line and deleted.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { writeFamilyFolder } from '../src/testing/familyFolders';
import { type HubServer, startHubServer } from '../src/testing/hubServer';
import { test, expect } from './fixtures';

const TMP = mkdtempSync(join(tmpdir(), 'mw-e2e-hub-'));
const FOLDER = join(TMP, 'qwen3');
let hub: HubServer;

test.beforeAll(async () => {
  writeFamilyFolder(FOLDER, 'qwen3', 3);
  hub = await startHubServer({ 'tiny/qwen3': { dir: FOLDER } });
});
test.afterAll(async () => {
  await hub.close();
  rmSync(TMP, { recursive: true, force: true });
});

async function loadById(page: Page, id: string) {
  await page.getByTestId('hub-model-id').fill(id);
  await page.getByTestId('hub-load').click();
}

/** The browser reports the optional files' 404s, the unknown model's 401 and the cut connection on its console: expected here, nothing else is. */
function dropExpectedConsoleErrors(errors: string[]) {
  const kept = errors.filter((e) => !/Failed to load resource: (the server responded with a status of 40[14]|net::ERR_)/.test(e));
  errors.splice(0, errors.length, ...kept);
}

test('load a model by id with progress; bytes with a wrong hash are refused; a reload loads it from the cache with no request; a cut download resumes', async ({
  page,
  guards,
}) => {
  const whole = statSync(join(FOLDER, 'model.safetensors')).size;
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page.locator('details.hub-settings summary').click();
  await page.getByTestId('hub-endpoint').fill(hub.endpoint);
  await page.getByTestId('hub-endpoint').blur();

  // The first load's weights arrive with one byte changed: they do not hash to the Hub's sha256, one line, deleted.
  hub.corruptNext('model.safetensors');
  await loadById(page, 'tiny/qwen3');
  await expect(page.getByTestId('hub-error')).toHaveText(
    /^hf:tiny\/qwen3: model\.safetensors: the bytes that arrived hash to sha256 [0-9a-f]{64}, the Hub gives [0-9a-f]{64}; deleted, load again$/,
  );
  await expect(page.getByTestId('model-info').filter({ hasText: 'qwen3' })).toHaveCount(0);

  // The next load is cut 1,000 bytes into the weights: one line, the part kept.
  hub.cutNext('model.safetensors', 1000);
  await loadById(page, 'tiny/qwen3');
  await expect(page.getByTestId('hub-error')).toHaveText(
    `hf:tiny/qwen3: connection lost after 1000 of ${whole} bytes of model.safetensors; the part that arrived is kept: load again to resume`,
  );

  // Loaded again: only the rest of the weights is fetched, with progress in bytes, then the model opens.
  const before = hub.log.length;
  const progress: number[] = [];
  await page.exposeFunction('hubProgressSeen', (bytes: number) => progress.push(bytes));
  await page.evaluate(() => {
    new MutationObserver(() => {
      const el = document.querySelector('[data-testid="hub-progress"]') as HTMLElement | null;
      if (el) (window as unknown as { hubProgressSeen(b: number): void }).hubProgressSeen(Number(el.dataset.bytes));
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await loadById(page, 'tiny/qwen3');
  await expect(page.getByTestId('model-info')).toContainText('qwen3');
  await expect(page.getByTestId('model-info')).toContainText('tokenizer hf:qwen3');
  const weights = hub.log.slice(before).filter((r) => r.method === 'GET' && r.path.endsWith('/model.safetensors'));
  expect(weights.map((r) => [r.range, r.status, r.bytes])).toEqual([['bytes=1000-', 206, whole - 1000]]);
  expect(progress.length).toBeGreaterThan(0);
  expect(Math.max(...progress)).toBeGreaterThan(1000);
  await expect(page.getByTestId('hub-cache')).toContainText('KiB');

  // A reload: the model comes back from the page's cache on start, and again when loaded by its id (remembered
  // in the field), with not one request to the Hub.
  const cached = hub.log.length;
  await page.reload();
  await expect(page.getByTestId('model-info')).toContainText('kept from your last visit');
  await expect(page.getByTestId('model-info')).toContainText('tokenizer hf:qwen3');
  await expect(page.getByTestId('hub-model-id')).toHaveValue('tiny/qwen3');
  await page.getByTestId('hub-load').click();
  await expect(page.getByTestId('model-info')).not.toContainText('kept from your last visit');
  await expect(page.getByTestId('model-info')).toContainText('tokenizer hf:qwen3');
  expect(hub.log.length).toBe(cached);

  // The cache's size, and the button that clears it: the next load asks the Hub again.
  await expect(page.getByTestId('hub-cache')).not.toHaveText('cache 0.0 KiB');
  await page.locator('details.hub-settings summary').click();
  await page.getByTestId('hub-clear-cache').click();
  await expect(page.getByTestId('hub-cache')).toHaveText('cache 0.0 KiB');

  // A model the Hub does not have is one line.
  await loadById(page, 'tiny/nothing');
  await expect(page.getByTestId('hub-error')).toHaveText(
    `hf:tiny/nothing: no such model on ${hub.endpoint}, or it is private (401): check the id, or enter an access token that can read it`,
  );
  dropExpectedConsoleErrors(guards.consoleErrors);
});
