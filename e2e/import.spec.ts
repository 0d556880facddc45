// Real agent transcripts through the page: an agent-CLI session log (two compactions, one
// microcompaction, a sidechain, a meta record, a resumed branch) is detected by
// content, imported and shown with one junction per compaction.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test, expect } from './fixtures';

const SESSION = fileURLToPath(new URL('../src/rollout/importers/fixtures/agent-session-two-compactions.jsonl', import.meta.url));

test('an agent-CLI session with two compactions and a microcompaction loads with K = 3', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page.getByTestId('rollout-file-input').setInputFiles({
    name: 'agent-session-two-compactions.jsonl',
    mimeType: 'application/jsonl',
    buffer: readFileSync(SESSION),
  });
  await expect(page.getByTestId('stat-K')).toHaveText('3');
  await expect(page.getByTestId('stat-branches')).toHaveText('4');
  await expect(page.getByTestId('stat-physicalLength')).toHaveText('1761');
  await expect(page.getByTestId('stat-divergingLeaves')).toHaveText('36');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
});
