// The context panes end to end: an agent-CLI session with two compactions read as text (what the
// policy saw, and what Naive-Compressed drops), the panes' token counts against `mw tree
// --per-target` run here, find and the jumps (keys and buttons), one hover across the text, the
// staircase and the tree, and copying a pane as text.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures';

const SESSION = fileURLToPath(new URL('../src/rollout/importers/fixtures/agent-session-two-compactions.jsonl', import.meta.url));
/** The test run's mw: the bundle `npm test` builds (MW_CLI, the same main), else bin/mw.js. */
const MW = process.env.MW_CLI ? resolve(process.env.MW_CLI) : fileURLToPath(new URL('../bin/mw.js', import.meta.url));
/** A sentence of the session's tool output that the microcompaction (edit 3) evicts. */
const EVICTED = 'Tests: 2 passed, 2 total';

interface PerTarget {
  id: number;
  /** Prefix lengths (mw tree --per-target names prefixes by their length in a branch). */
  livePrefix: number;
  finalPrefix: number | null;
}
const perTarget: PerTarget[] = JSON.parse(
  execFileSync('node', [MW, 'tree', SESSION, '--json', '--per-target'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }),
)[0].perTarget;

async function openSession(page: Page) {
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page
    .getByTestId('rollout-file-input')
    .setInputFiles({ name: 'agent-session-two-compactions.jsonl', mimeType: 'application/jsonl', buffer: readFileSync(SESSION) });
  await expect(page.getByTestId('stat-K')).toHaveText('3');
}

/** The panes' token counts equal the CLI's prefix lengths for the selected target (full prefix: all smaller ids). */
async function expectCounts(page: Page, id: number) {
  await expect(page.getByTestId('inspector-target')).toHaveText(String(id));
  const r = perTarget.find((t) => t.id === id)!;
  await expect(page.getByTestId('pane-tokens-live')).toHaveText(String(r.livePrefix));
  await expect(page.getByTestId('pane-tokens-naive-compressed')).toHaveText(String(r.finalPrefix ?? 0));
  await expect(page.getByTestId('pane-tokens-naive-full')).toHaveText(String(id));
}

/** Text of a pane's glyphs in one state (`missing`, `future`, …), in order. */
const glyphText = (page: Page, pane: string, cls: string) =>
  page
    .getByTestId(`pane-${pane}`)
    .locator(`.g.${cls}`)
    .evaluateAll((els) => els.map((e) => e.textContent).join(''));

test('a session with two compactions reads as text: the live prefix holds the evicted sentence, Naive-Compressed shows it missing', async ({ page }) => {
  await openSession(page);
  // The first diverging leaf is selected: the answer after the test suite's output.
  await expect(page.getByTestId('context-target')).toHaveText('id 1587 · “T”');
  await expectCounts(page, 1587);
  await expect(page.getByTestId('pane-live')).toContainText(EVICTED);
  await expect(page.getByTestId('pane-diff-naive-compressed')).toHaveText('97 missing · 34 written later');
  expect(await glyphText(page, 'naive-compressed', 'missing')).toContain(EVICTED);
  expect(await glyphText(page, 'naive-compressed', 'future')).toContain('[Old tool result content cleared]');
  // Roles are headed per message, the edit's insert named as such.
  await expect(page.getByTestId('pane-naive-compressed').locator('.block-head.missing')).toContainText('missing: the policy saw it; evicted by edit 3');
  // The inspector's id list reads as runs.
  await expect(page.getByTestId('method-sequence')).toContainText('384 tokens: ids 1140–1488, 1623–1656, 1586 → 1587');
});

test('find jumps to the next occurrence of a word and the jumps to the next edit, with counts equal to mw tree --per-target', async ({ page }) => {
  await openSession(page);
  await page.keyboard.press('Control+f');
  await expect(page.getByTestId('find-input')).toBeFocused();
  await page.getByTestId('find-input').fill('passed');
  await expect(page.getByTestId('find-count')).toHaveText('– / 5');
  await page.getByTestId('find-input').press('Enter');
  // Match 1, "add: 1 passed" of the first test run, is read by target 601 ("The test passes now.").
  await expect(page.getByTestId('find-count')).toHaveText('1 / 5');
  await expectCounts(page, 601);
  await expect(page.getByTestId('pane-live').locator('.g.match.current')).toHaveText('passed');
  await page.getByTestId('find-input').press('Enter');
  // Match 2 is in the second compaction's summary: the first target after edit 2 sees it.
  await expect(page.getByTestId('find-count')).toHaveText('2 / 5');
  await expectCounts(page, 1400);
  await expect(page.getByTestId('pane-live').locator('.g.match.current')).toHaveText('passed');
  await expect(page.getByTestId('pane-live').locator('.g.match')).toHaveCount(1);
  await page.getByTestId('find-input').press('Shift+Enter');
  await expect(page.getByTestId('find-count')).toHaveText('1 / 5');
  await expectCounts(page, 601);

  // e: the next edit (edit 1, first target 892); its summary is in the live pane, marked as inserted.
  await page.getByTestId('find-input').press('Escape');
  await page.keyboard.press('e');
  await expectCounts(page, 892);
  await expect(page.getByTestId('pane-live').locator('.block-head.role-inserted').first()).toContainText('inserted by edit 1');
  await page.getByTestId('jump-edit-next').click();
  await expectCounts(page, 1400);
  await page.keyboard.press('e');
  await expectCounts(page, 1704);
  await expect(page.getByTestId('pane-live')).toContainText('[Old tool result content cleared]');
  await expect(page.getByTestId('jump-edit-next')).toBeDisabled();
  await page.keyboard.press('Shift+E');
  await expectCounts(page, 1400);
  // d: the next diverging target; o / O: the target that reads the next / previous observation.
  await page.keyboard.press('d');
  await expectCounts(page, 1587);
  await page.getByTestId('jump-diverging-next').click();
  await expectCounts(page, 1588);
  await page.keyboard.press('Shift+O');
  await expectCounts(page, 1587);
  await page.keyboard.press('Shift+O');
  await expectCounts(page, 1111);
  await expect(page.getByTestId('pane-live')).toContainText('The file /home/dev/mathlib/src/math.ts has been updated.');
  // A dropped target: Naive-Compressed does not score it.
  await page.keyboard.press('Home');
  await expect(page.getByTestId('pane-diff-naive-compressed')).toHaveText('not scored: target dropped from the final walk');
  await expectCounts(page, perTarget[0].id);
});

test('one hover: text highlights the staircase and the tree, a staircase cell highlights the text', async ({ page }) => {
  await page.goto('/?src=example:worked-example&target=15');
  await expect(page.getByTestId('context-target')).toHaveText('id 15 · \\x1a control byte');
  // Target 15's live prefix: 0, 1, 9, 10, 13, 14. Id 13 has two trie nodes (b1's and its copy in b2).
  await page.getByTestId('pane-live').locator('.g[data-id="13"]').hover();
  await expect(page.getByTestId('staircase-canvas')).toHaveAttribute('data-hover', '13-14');
  await expect(page.locator('[data-testid=tree-svg] rect[data-mark=hover]')).toHaveCount(2);
  await expect(page.getByTestId('pane-naive-full').locator('.g.hovered')).toHaveAttribute('data-id', '13');
  // A staircase cell: id 9 in the row of target 14 (row 5, above the selected row's lens).
  const canvas = page.getByTestId('staircase-canvas');
  const d = await canvas.evaluate((el) => ({ ...(el as HTMLCanvasElement).dataset }));
  await canvas.hover({ position: { x: Number(d.plotLeft) + 9.5 * Number(d.cellWidth), y: Number(d.plotTop) + 5.5 * Number(d.rowHeight) } });
  await expect(canvas).toHaveAttribute('data-hover', '9-10');
  await expect(page.getByTestId('pane-live').locator('.g.hovered')).toHaveAttribute('data-id', '9');
  await page.mouse.move(0, 0);
  await expect(canvas).toHaveAttribute('data-hover', '');
});

test('hovering a character of running text names its one id to the staircase', async ({ page }) => {
  await openSession(page);
  await page.getByTestId('find-input').fill(EVICTED);
  await page.getByTestId('find-input').press('Enter');
  await expect(page.getByTestId('find-count')).toHaveText('1 / 1');
  const current = page.getByTestId('pane-live').locator('.g.match.current');
  await expect(current).toHaveText(EVICTED);
  const first = Number(await current.getAttribute('data-id'));
  // The pointer on the run's first and last characters: ids first and first + 23 (once the pane
  // has settled where the jump scrolled it).
  let box = (await current.boundingBox())!;
  for (let i = 0; i < 50; i++) {
    await page.waitForTimeout(100);
    const next = (await current.boundingBox())!;
    if (next.y === box.y && next.x === box.x) break;
    box = next;
  }
  const charW = box.width / EVICTED.length;
  await page.mouse.move(box.x + charW * 0.5, box.y + box.height / 2);
  await expect(page.getByTestId('staircase-canvas')).toHaveAttribute('data-hover', `${first}-${first + 1}`);
  await page.mouse.move(box.x + charW * (EVICTED.length - 0.5), box.y + box.height / 2);
  const last = first + EVICTED.length - 1;
  await expect(page.getByTestId('staircase-canvas')).toHaveAttribute('data-hover', `${last}-${last + 1}`);
  await expect(page.getByTestId('pane-naive-compressed').locator('.g.hovered')).toHaveText('l');
});

test('a pane copies as text, the diff in wdiff marks', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openSession(page);
  await page.getByTestId('pane-copy-naive-compressed').click();
  await expect(page.getByTestId('pane-copy-naive-compressed')).toHaveText('copied');
  const text = await page.evaluate(() => navigator.clipboard.readText());
  expect(text.split('\n')[0]).toBe('# Naive-Compressed: 384 tokens before target 1587');
  expect(text).toContain(
    `## observation · ids 1489–1585 · missing: the policy saw it; evicted by edit 3\n[-<obs>PASS src/math.test.ts\n  add: 1 passed\n  subtract: 1 passed\n${EVICTED}\nTime: 0.84 s-]`,
  );
  expect(text).toContain('{+later: <obs>[Old tool result content cleared]+}');
});
