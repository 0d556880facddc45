// The mask view and the glossary end to end (issue 18): the packed 4D mask of the worked example
// shows exactly the visible pairs of its plan's end[] and the selected target's row; a 2,000-token
// packed sequence draws; every figure label that names a glossary term links to an entry that exists.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { buildPlan, visibleKeys } from '../src/plan';
import { parseRolloutFile } from '../src/rollout';
import { generateRandomRollout } from '../src/rollout/generate-random';
import { deriveTree } from '../src/tree';
import { TERM_FORMS } from '../src/app/glossary/forms';
import { test, expect } from './fixtures';

const WORKED = readFileSync(fileURLToPath(new URL('../fixtures/worked-example.json', import.meta.url)), 'utf8');

/** Reads the colour at the centre of every cell of a mask canvas: rows of '#rrggbb'. */
async function cellColors(page: Page, method: string, n: number): Promise<string[][]> {
  return page.getByTestId(`mask-canvas-${method}`).evaluate((el, n) => {
    const canvas = el as HTMLCanvasElement;
    const dpr = canvas.width / canvas.getBoundingClientRect().width;
    const { plotLeft, plotTop, cell } = canvas.dataset;
    const ctx = canvas.getContext('2d')!;
    const rows: string[][] = [];
    for (let i = 0; i < n; i++) {
      const row: string[] = [];
      for (let k = 0; k < n; k++) {
        const x = (Number(plotLeft) + (k + 0.5) * Number(cell)) * dpr;
        const y = (Number(plotTop) + (i + 0.5) * Number(cell)) * dpr;
        const [r, g, b] = ctx.getImageData(Math.floor(x), Math.floor(y), 1, 1).data;
        row.push(`#${[r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('')}`);
      }
      rows.push(row);
    }
    return rows;
  }, n);
}

test('the packed 4D mask of the worked example shows exactly the visible pairs of its end[], and target 13’s row', async ({ page }) => {
  const tree = deriveTree(parseRolloutFile(WORKED, 'worked-example.json')[0]);
  const { end } = buildPlan(tree, 'packed-4d').sequences[0];
  const n = end.length;
  let pairs = 0;
  for (let k = 0; k < n; k++) pairs += end[k] - k;
  expect(pairs).toBe(123);

  await page.goto('/?target=13');
  const canvas = page.getByTestId('mask-canvas-packed-4d');
  await canvas.scrollIntoViewIfNeeded();
  await expect(canvas).toHaveAttribute('data-n', String(n));
  await expect(canvas).toHaveAttribute('data-visible-pairs', String(pairs));
  await expect(canvas).toHaveAttribute('data-selected-row', String(tree.scoringNode[13]));
  await page.waitForFunction(() => performance.getEntriesByName('mw:mask-packed-4d-drawn').length > 0);
  const colors = await cellColors(page, 'packed-4d', n);
  const hidden = '#141c24'; // the plot's background: a pair no query sees
  let filled = 0;
  for (let i = 0; i < n; i++) {
    const seen = new Set(visibleKeys(end, i));
    for (let k = 0; k < n; k++) {
      expect(colors[i][k] !== hidden, `query ${i}, key ${k}`).toBe(seen.has(k));
      if (colors[i][k] !== hidden) filled++;
    }
  }
  expect(filled).toBe(pairs);
  // The selected target's row: white exactly on the keys it sees (its live prefix and itself).
  const row = tree.scoringNode[13];
  const white = colors[row].flatMap((c, k) => (c === '#ffffff' ? [k] : []));
  expect(white).toEqual(visibleKeys(end, row));
  expect(white.map((k) => tree.packedOrder[k])).toEqual([...tree.livePrefix(13), 13]);

  // The causal masks beside it: 8 missing keys in the final walk, 28 stale cells on the tape.
  await expect(page.getByTestId('mask-note-naive-compressed')).toContainText('36 visible pairs · 8 missing keys, 0 future cells in 4 target rows');
  await expect(page.getByTestId('mask-note-naive-full')).toContainText('153 visible pairs · 28 stale cells in 8 target rows');
  const tape = await cellColors(page, 'naive-full', 17);
  const stale = tape[13].flatMap((c, k) => (c === '#ffb347' ? [k] : []));
  expect(stale).toEqual([2, 3, 4, 5, 6]);

  // A click on a target's row selects that target.
  const d = await canvas.evaluate((el) => ({ ...(el as HTMLCanvasElement).dataset }));
  await canvas.click({ position: { x: Number(d.plotLeft) + 2 * Number(d.cell), y: Number(d.plotTop) + (tree.scoringNode[15] + 0.5) * Number(d.cell) } });
  await expect(page.getByTestId('inspector-target')).toHaveText('15');
});

test('a rollout of about 2,000 packed tokens draws its mask, and the masks export as SVG', async ({ page }) => {
  const rollout = generateRandomRollout({ seed: 11, tokens: 1200, edits: 8, textRate: 0, id: 'generated-2k' });
  const tree = deriveTree(parseRolloutFile(JSON.stringify(rollout), 'generated-2k.json')[0]);
  expect(tree.figures.packedLength).toBeGreaterThan(2000);
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page
    .getByTestId('rollout-file-input')
    .setInputFiles({ name: 'generated-2k.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(rollout)) });
  await expect(page.getByTestId('rollout-id')).toHaveText('generated-2k');
  const canvas = page.getByTestId('mask-canvas-packed-4d');
  await expect(canvas).toHaveAttribute('data-n', String(tree.figures.packedLength));
  await canvas.scrollIntoViewIfNeeded();
  const painted = await canvas.evaluate((el) => {
    const c = el as HTMLCanvasElement;
    const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let lit = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] + data[i + 1] + data[i + 2] > 150) lit++;
    return lit / (data.length / 4);
  });
  expect(painted).toBeGreaterThan(0.05);
  const download = page.waitForEvent('download');
  await page.getByTestId('export-masks-svg').click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('generated-2k-masks.svg');
});

/** Label elements: panel titles, stat and fact names, table heads, legends, chart titles and notes, captions. */
const LABELS = [
  '.panel-head h2',
  '.panel h3',
  '.stat dt',
  '.facts dt',
  'th',
  '.legend li',
  '.train-chart .title',
  '.train-chart .note',
  '.mask-figure figcaption',
  '.tour-caption',
];

test('every figure label that names a glossary term links to its entry, and every link names an entry', async ({ page }) => {
  await page.goto('/?target=13');
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await expect(page.getByTestId('mask-canvas-packed-4d')).toBeAttached();
  // The training panel starts as one line: open it, so its charts' and lanes' labels count too.
  await page.getByTestId('train-panel-toggle').click();
  await expect(page.getByTestId('train-panel')).toHaveAttribute('data-open', 'true');
  const forms = Object.entries(TERM_FORMS).flatMap(([id, list]) => list.map((form) => ({ id, form })));
  const report = await page.evaluate(
    ({ selectors, forms }) => {
      const exact = (f: string) => /[A-Z]|[^\x00-\x7f]/.test(f);
      const unlinked: string[] = [];
      const labels = Array.from(document.querySelectorAll<HTMLElement>(selectors.join(',')));
      for (const label of labels) {
        const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if ((node.parentElement as HTMLElement).closest('a[data-term]')) continue;
          const text = node.textContent ?? '';
          for (const { id, form } of forms) {
            const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}_])`, exact(form) ? 'u' : 'iu');
            if (pattern.test(text)) unlinked.push(`${id}: "${text.trim()}" in ${label.tagName.toLowerCase()}.${label.className}`);
          }
        }
      }
      const terms = [...new Set(Array.from(document.querySelectorAll<HTMLElement>('a[data-term]'), (a) => a.dataset.term!))];
      return { labels: labels.length, unlinked, terms };
    },
    { selectors: LABELS, forms },
  );
  expect(report.labels).toBeGreaterThan(40);
  expect(report.unlinked).toEqual([]);
  // The terms found on the page, each with its entry in the glossary panel.
  for (const id of [
    'k',
    'branch',
    'physical-tape',
    'final-walk',
    'n_packed',
    'd',
    'eviction-mass',
    'conditioning-tree',
    'junction',
    'live-prefix',
    'n_final',
  ]) {
    expect(report.terms, id).toContain(id);
  }
  await page.getByTestId('glossary-open').click();
  const panel = page.getByTestId('glossary');
  for (const id of report.terms) await expect(panel.locator(`[data-entry="${id}"]`), id).toHaveCount(1);
  await page.getByTestId('glossary-close').click();

  // A term opens its entry; the URL names it; Escape closes the panel.
  await page.locator('.stat a[data-term="eviction-mass"]').click();
  await expect(panel.locator('[data-entry="eviction-mass"]')).toHaveClass(/current/);
  await expect(panel.locator('[data-entry="eviction-mass"]')).toContainText('the number of ids in its live prefix that are absent from its final prefix');
  await expect(page).toHaveURL(/[?&]glossary=eviction-mass\b/);
  // Its reference to where it is defined in full is a link: it opens that section of tree.md here, and Back returns.
  await panel.locator('[data-entry="eviction-mass"] a[data-doc="tree.md#eviction-mass-diverging-leaves-and-d"]').click();
  await expect(page.getByTestId('glossary-doc-title')).toHaveText('Eviction mass, diverging leaves and D');
  await expect(page.getByTestId('glossary-doc')).toContainText('dropped');
  await page.getByTestId('glossary-back').click();
  await expect(panel.locator('[data-entry="eviction-mass"]')).toHaveClass(/current/);
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  await expect(page).not.toHaveURL(/glossary=/);

  // The About entry: the paper and how the workbench maps to it.
  await page.goto('/?glossary=about');
  await expect(panel.locator('[data-entry="about"]')).toContainText('MemoryWalker: Stop Training Agents on Contexts They Never Saw');
  await expect(panel.locator('[data-entry="about"]')).toContainText('2609.00865');
  await expect(panel.locator('[data-entry="about"] table')).toBeVisible();
});
