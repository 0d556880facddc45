// The inspection views end to end: loading (file input, drop, examples, JSONL sets, calls/v1),
// the summary figures of docs/tree.md, target selection (URL, clicks in both views, keyboard), the
// validator's message for a malformed file, and the view coming back after a reload.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const WORKED = fixture('worked-example.json');
const CALLS = fixture('calls-example.json');

const WORKED_FIGURES = {
  K: '2',
  branches: '3',
  physicalLength: '17',
  finalWalkLength: '8',
  packedLength: '21',
  targets: '8',
  droppedTargets: '4',
  divergingLeaves: '2',
};

async function expectFigures(page: Page, figures: Record<string, string>) {
  for (const [key, value] of Object.entries(figures)) await expect(page.getByTestId(`stat-${key}`), key).toHaveText(value);
}

/** The page after start-up: some rollout shown (the built-in example on a first visit). */
async function open(page: Page, path = '/') {
  await page.goto(path);
  await expect(page.getByTestId('rollout-id')).toBeVisible();
}

async function loadFile(page: Page, name: string, content: string | Buffer) {
  await page.getByTestId('rollout-file-input').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(content) });
}

/** Clicks the staircase cell of (row, id); rows up to the selected one are not shifted by its lens. */
async function clickStaircaseCell(page: Page, row: number, id: number) {
  const canvas = page.getByTestId('staircase-canvas');
  const d = await canvas.evaluate((el) => ({ ...(el as HTMLCanvasElement).dataset }));
  const cw = Number(d.cellWidth);
  const rh = Number(d.rowHeight);
  await canvas.click({ position: { x: Number(d.plotLeft) + (id + 0.5) * cw, y: Number(d.plotTop) + (row + 0.5) * rh } });
}

test('a first visit opens on the worked example, never on an empty page', async ({ page }) => {
  await open(page);
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await expect(page.getByTestId('source')).toContainText('example');
  await expectFigures(page, WORKED_FIGURES);
  // The first diverging leaf is selected and the URL says so.
  await expect(page.getByTestId('inspector-target')).toHaveText('13');
  await expect(page).toHaveURL(/[?&]target=13\b/);
  await expect(page).toHaveURL(/src=example%3Aworked-example/);
});

test('the worked example loaded through the file input shows every section-3 figure', async ({ page }) => {
  await open(page);
  // Start from another rollout so that the figures below can only come from the file.
  await loadFile(page, 'calls-example.json', readFileSync(CALLS));
  await expect(page.getByTestId('rollout-id')).toHaveText('calls-example');
  await expectFigures(page, {
    K: '1',
    branches: '2',
    physicalLength: '13',
    finalWalkLength: '8',
    packedLength: '14',
    targets: '5',
    droppedTargets: '2',
    divergingLeaves: '1',
  });
  await expect(page.getByTestId('inspector-target')).toHaveText('7');
  await expect(page.getByTestId('inspector-evictionMass')).toHaveText('5');

  await loadFile(page, 'worked-example.json', readFileSync(WORKED));
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await expect(page.getByTestId('source')).toContainText('file worked-example.json');
  await expectFigures(page, WORKED_FIGURES);
  await expect(page.getByTestId('stat-evictionMassTotal')).toHaveText('8');
  await expect(page.getByTestId('stat-reward')).toHaveText('1');
  await expect(page.getByTestId('staircase-canvas')).toHaveAttribute('data-rows', '8');
  await expect(page.getByTestId('staircase-canvas')).toHaveAttribute('data-columns', '17');
});

test('target 13: eviction mass 4, diverging, and what each method shows it', async ({ page }) => {
  await open(page, '/?target=13');
  await expect(page.getByTestId('inspector-target')).toHaveText('13');
  await expect(page.getByTestId('inspector-evictionMass')).toHaveText('4');
  await expect(page.getByTestId('inspector-diverging')).toHaveText('yes');
  await expect(page.getByTestId('inspector-scoringNode')).toHaveText('15');
  const row = (m: string) => page.locator(`[data-testid=method-table] tr[data-method=${m}] td`);
  // Columns: method, prefix length, missing, stale, future, verdict.
  await expect(row('naive-compressed')).toHaveText(['Naive-Compressed', '4', '4', '0', '0', 'time-travel']);
  await expect(row('naive-full')).toHaveText(['Naive-Full', '13', '0', '5', '0', 'stale context']);
  await expect(row('logit-tree')).toHaveText(['LogitTree', '8', '0', '0', '0', 'exact']);
  await expect(row('packed-4d')).toHaveText(['Packed 4D mask', '8', '0', '0', '0', 'exact']);
  await expect(row('sdcc')).toHaveText(['SDCC', '4', '4', '0', '0', '+ KL to live']);
  await expect(page.getByTestId('method-sequence')).toContainText('4 tokens: ids 0–1, 9–10 → 13');
  // Picking a method shows its sequence; SDCC adds the teacher's live prefix.
  await page.locator('[data-testid=method-table] tr[data-method=sdcc] button').click();
  await expect(page).toHaveURL(/method=sdcc/);
  await expect(page.getByTestId('method-sequence')).toContainText('teacher (stop-gradient) sees 8 tokens: ids 0–1, 9–10, 7–8, 11–12');
});

test('clicks in either view select a target', async ({ page }) => {
  await open(page, '/?target=13');
  // Tree: the node of target 16 (ids are drawn in the cells of a small tree).
  await page.locator('[data-testid=tree-svg] rect[data-id="16"]').click();
  await expect(page.getByTestId('inspector-target')).toHaveText('16');
  await expect(page.getByTestId('inspector-diverging')).toHaveText('no');
  await expect(page.getByTestId('inspector-evictionMass')).toHaveText('0');
  // Staircase: the row of target 2 (decode step 0), a dropped target.
  await clickStaircaseCell(page, 0, 0);
  await expect(page.getByTestId('inspector-target')).toHaveText('2');
  await expect(page.getByTestId('inspector-dropped')).toHaveText('yes');
  await expect(page.getByTestId('inspector-evictionMass')).toHaveText('—');
  await expect(page).toHaveURL(/[?&]target=2\b/);
  // Hover names the token.
  await page.getByTestId('staircase-canvas').hover({ position: { x: 5, y: 5 } });
  const d = await page.getByTestId('staircase-canvas').evaluate((el) => ({ ...(el as HTMLCanvasElement).dataset }));
  await page
    .getByTestId('staircase-canvas')
    .hover({ position: { x: Number(d.plotLeft) + 1.5 * Number(d.cellWidth), y: Number(d.plotTop) + 0.5 * Number(d.rowHeight) } });
  await expect(page.getByTestId('staircase-tooltip')).toContainText('id 1');
  await expect(page.getByTestId('staircase-tooltip')).toContainText('prompt');
  await expect(page.getByTestId('staircase-tooltip')).toContainText('segment 0');
});

test('keyboard arrows move the selection through the targets', async ({ page }) => {
  await open(page, '/?target=13');
  await expect(page.getByTestId('inspector-target')).toHaveText('13');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('inspector-target')).toHaveText('14');
  await expect(page.getByTestId('inspector-evictionMass')).toHaveText('4');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('inspector-target')).toHaveText('15');
  await expect(page.getByTestId('inspector-diverging')).toHaveText('no');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await expect(page.getByTestId('inspector-target')).toHaveText('8');
  await page.keyboard.press('End');
  await expect(page.getByTestId('inspector-target')).toHaveText('16');
  await page.keyboard.press('Home');
  await expect(page.getByTestId('inspector-target')).toHaveText('2');
  await expect(page).toHaveURL(/[?&]target=2\b/);
});

test('a malformed file shows the validator message and the previous rollout stays', async ({ page }) => {
  await open(page);
  await loadFile(page, 'worked-example.json', readFileSync(WORKED));
  await expect(page.getByTestId('source')).toContainText('file worked-example.json');
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('inspector-target')).toHaveText('14');

  const bad = JSON.parse(readFileSync(WORKED, 'utf8'));
  bad.events[7].view[0].keep = [4, 6]; // ids 4, 5 were evicted by edit 1: not live at edit 2
  await loadFile(page, 'bad.json', JSON.stringify(bad));
  const error = page.getByTestId('load-error');
  await expect(error).toBeVisible();
  await expect(error).toHaveText(/^bad\.json: event 7: .*id 4 is not live/);
  // Nothing of the bad file was loaded: same rollout, same figures, same selection, same URL source.
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await expect(page.getByTestId('source')).toContainText('file worked-example.json');
  await expectFigures(page, WORKED_FIGURES);
  await expect(page.getByTestId('inspector-target')).toHaveText('14');
  await expect(page).toHaveURL(/src=file%3Aworked-example\.json/);

  // JSONL: the message names the line.
  const good = readFileSync(WORKED, 'utf8').replace(/\s*\n\s*/g, ' ');
  const line2 = JSON.stringify({ ...JSON.parse(good), id: 'second', events: [{ op: 'append', role: 'act', tokens: [1] }] });
  await loadFile(page, 'set.jsonl', `${good}\n${line2}\n`);
  await expect(error).toHaveText(/^set\.jsonl:2: event 0: /);
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');

  // A non-JSON file.
  await loadFile(page, 'notes.json', 'this is not json');
  await expect(error).toHaveText(/^notes\.json: /);
  await expectFigures(page, WORKED_FIGURES);
});

test('a reload brings the same view back from the URL and IndexedDB', async ({ page }) => {
  await open(page);
  await loadFile(page, 'worked-example.json', readFileSync(WORKED));
  await expect(page.getByTestId('source')).toContainText('file worked-example.json');
  await page.keyboard.press('ArrowRight');
  await page.getByTestId('rows-segment').click();
  await page.locator('[data-testid=method-table] tr[data-method=naive-full] button').click();
  await expect(page).toHaveURL(/target=14/);
  await expect(page).toHaveURL(/method=naive-full/);
  await expect(page).toHaveURL(/rows=segment/);
  const url = page.url();

  await page.reload();
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await expect(page.getByTestId('source')).toContainText('file worked-example.json');
  await expect(page.getByTestId('inspector-target')).toHaveText('14');
  await expect(page.getByTestId('rows-segment')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('staircase-canvas')).toHaveAttribute('data-rows', '3');
  await expect(page.locator('[data-testid=method-table] tr.active')).toHaveAttribute('data-method', 'naive-full');
  await expectFigures(page, WORKED_FIGURES);
  expect(page.url()).toBe(url);

  // Without any URL state the last opened set comes back from IndexedDB.
  await page.goto('/');
  await expect(page.getByTestId('source')).toContainText('file worked-example.json');
  await expectFigures(page, WORKED_FIGURES);
});

test('a JSONL set: pick a rollout, and the link reproduces the pick', async ({ page }) => {
  await open(page);
  const worked = readFileSync(WORKED, 'utf8').replace(/\s*\n\s*/g, ' ');
  const calls = readFileSync(CALLS, 'utf8').replace(/\s*\n\s*/g, ' ');
  await loadFile(page, 'pair.jsonl', `${worked}\n${calls}\n`);
  await expect(page.getByTestId('source')).toContainText('2 rollouts');
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await page.getByTestId('rollout-picker').selectOption({ label: 'calls-example · L 13 · K 1' });
  await expect(page.getByTestId('rollout-id')).toHaveText('calls-example');
  await expect(page.getByTestId('stat-divergingLeaves')).toHaveText('1');
  await expect(page).toHaveURL(/rollout=calls-example/);
  await page.reload();
  await expect(page.getByTestId('rollout-id')).toHaveText('calls-example');
  await expect(page.getByTestId('stat-packedLength')).toHaveText('14');
});

test('a file dropped anywhere on the page opens', async ({ page }) => {
  await open(page);
  const text = readFileSync(CALLS, 'utf8');
  const dataTransfer = await page.evaluateHandle((content) => {
    const dt = new DataTransfer();
    dt.items.add(new File([content], 'dropped-calls.json', { type: 'application/json' }));
    return dt;
  }, text);
  await page.dispatchEvent('main', 'dragenter', { dataTransfer });
  await expect(page.getByTestId('drop-overlay')).toBeVisible();
  await page.dispatchEvent('main', 'drop', { dataTransfer });
  await expect(page.getByTestId('drop-overlay')).toBeHidden();
  await expect(page.getByTestId('rollout-id')).toHaveText('calls-example');
  await expect(page.getByTestId('source')).toContainText('file dropped-calls.json');
});

test('exports: each view as SVG and PNG, the per-target table as CSV', async ({ page }) => {
  await open(page, '/?target=13');
  const save = async (testId: string) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
    const path = await download.path();
    return { name: download.suggestedFilename(), bytes: readFileSync(path) };
  };
  const csv = await save('export-targets-csv');
  expect(csv.name).toBe('worked-example-targets.csv');
  const lines = csv.bytes.toString('utf8').trim().split('\n');
  expect(lines).toHaveLength(9);
  const header = lines[0].split(',');
  const row13 = Object.fromEntries(
    lines
      .find((l) => l.startsWith('13,'))!
      .split(',')
      .map((v, i) => [header[i], v]),
  );
  expect(row13).toMatchObject({
    id: '13',
    segment: '1',
    dropped: 'false',
    diverging: 'true',
    evictionMass: '4',
    livePrefixLength: '8',
    finalPrefixLength: '4',
  });
  expect(row13['naive-full.prefixLength']).toBe('13');
  expect(row13['sdcc.teacherPrefixLength']).toBe('8');

  const treeSvg = await save('export-tree-svg');
  expect(treeSvg.name).toBe('worked-example-tree.svg');
  expect(treeSvg.bytes.toString('utf8')).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  expect(treeSvg.bytes.toString('utf8')).toContain('final walk');
  const stairSvg = await save('export-staircase-svg');
  expect(stairSvg.bytes.toString('utf8')).toContain('decode step (target id)');
  for (const id of ['export-tree-png', 'export-staircase-png']) {
    const png = await save(id);
    expect(png.bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.bytes.length).toBeGreaterThan(5000);
  }
});

test('a data set the demo model played is one click away (shipped under public/examples)', async ({ page }) => {
  const { parseRolloutFile } = await import('../src/rollout');
  const { deriveTree } = await import('../src/tree');
  const { EXAMPLES } = await import('../src/app/load/examples');
  const example = EXAMPLES.find((e) => e.name === 'demo-compact')!;
  if (example.kind !== 'file') throw new Error('demo-compact is a shipped file');
  // The same file, read and derived here in Node: the page must show the same figures.
  const rollouts = parseRolloutFile(readFileSync(fileURLToPath(new URL(`../public/${example.path}`, import.meta.url)), 'utf8'), example.path);
  const figures = rollouts.map((r) => deriveTree(r).figures);

  await open(page);
  await page.getByTestId('example-demo-compact').click();
  await expect(page.getByTestId('rollout-id')).toHaveText(rollouts[0].id);
  await expect(page.getByTestId('source')).toContainText(`${rollouts.length} rollouts`);
  const asText = (f: (typeof figures)[number]) => Object.fromEntries(Object.keys(WORKED_FIGURES).map((k) => [k, String(f[k as keyof typeof f])]));
  await expectFigures(page, asText(figures[0]));
  expect(figures[0].K).toBeGreaterThan(0);
  await page.getByTestId('rollout-picker').selectOption({ index: 2 });
  await expect(page.getByTestId('rollout-id')).toHaveText(rollouts[2].id);
  await expectFigures(page, asText(figures[2]));
  await expect(page).toHaveURL(/src=example%3Ademo-compact/);
});

test('drift: a GPT-2 checkpoint scores every target under each method on WebGPU', async ({ page }) => {
  const { MODEL_PRESETS } = await import('../src/model/config');
  const { saveCheckpoint } = await import('../src/model/checkpoint');
  const { randomWeights } = await import('../src/model/random-weights');
  const { referenceForward, referenceLogprobs } = await import('../src/model/reference/model');
  const { expectedTargetDrift } = await import('../src/metrics/expected-drift');
  const { parseRolloutFile } = await import('../src/rollout');
  const { deriveTree } = await import('../src/tree');
  const { buildPlan } = await import('../src/plan');
  const weights = randomWeights({ ...MODEL_PRESETS.tiny, nPositions: 512 }, 7);
  // The float64 CPU reference's score of target 13 under its live prefix and under its final prefix.
  const tree = deriveTree(parseRolloutFile(readFileSync(WORKED, 'utf8'), 'worked-example.json')[0]);
  const cpuScore = (method: 'logit-tree' | 'naive-compressed', id: number) => {
    for (const seq of buildPlan(tree, method).sequences) {
      const i = seq.targets.findIndex((t) => t.id === id);
      if (i >= 0) return referenceLogprobs(weights, seq, seq.targets)[i];
    }
    throw new Error(`${method} does not score ${id}`);
  };
  const live13 = cpuScore('logit-tree', 13);
  const final13 = cpuScore('naive-compressed', 13);
  expect(Math.abs(live13 - final13)).toBeGreaterThan(0.01);

  await open(page, '/?target=13');
  await page
    .getByTestId('checkpoint-file-input')
    .setInputFiles({ name: 'tiny.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(saveCheckpoint(weights)) });
  await expect(page.getByTestId('model-info')).toContainText('tiny.safetensors');
  await expect(page.getByTestId('model-info')).toContainText('C 32, 2 layers, 2 heads');
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 90_000 });
  // Exact methods: no conditioning drift (Theorem 1); the naive ones drift.
  // (the figures keep significant digits: LogitTree is the reference, exactly 0; the 4D mask is round-off)
  await expect(page.getByTestId('drift-logdiff-logit-tree')).toHaveText('0');
  expect(Number(await page.getByTestId('drift-logdiff-packed-4d').getAttribute('data-value'))).toBeLessThan(1e-5);
  expect(Number(await page.getByTestId('drift-logdiff-naive-compressed').textContent())).toBeGreaterThan(0.001);
  expect(Number(await page.getByTestId('drift-logdiff-naive-full').textContent())).toBeGreaterThan(0.001);
  // A histogram per scored method and SDCC's KL at the diverging leaves.
  await expect(page.locator('.histogram-card[data-testid^=histogram-]')).toHaveCount(5);

  // Target 13's scores match the CPU reference.
  const read = async (id: string) => Number(await page.getByTestId(id).textContent());
  expect(Math.abs((await read('inspector-logprob-live')) - live13)).toBeLessThan(1e-3);
  expect(Math.abs((await read('inspector-logprob-naive-compressed')) - final13)).toBeLessThan(1e-3);
  await expect(page.getByTestId('inspector-delta-logit-tree')).toHaveText('0');

  // The drift a sampler should expect, against the reference rows: none for the exact methods; at
  // temperature 1 a loss for the naive ones (−KL); greedy, what the live mode gains or loses.
  const rows = (method: 'logit-tree' | 'naive-compressed') => {
    const out = new Map<number, Float64Array>();
    const V = weights.config.vocabSize;
    for (const seq of buildPlan(tree, method).sequences) {
      const { logits } = referenceForward(weights, seq);
      for (const t of seq.targets) out.set(t.id, logits.slice(t.predictor * V, (t.predictor + 1) * V));
    }
    return out;
  };
  const liveRows = rows('logit-tree');
  const cpuExpected = (temperature: number) => {
    const final = [...rows('naive-compressed')];
    return final.reduce((s, [id, row]) => s + expectedTargetDrift(liveRows.get(id)!, row, { temperature }), 0) / final.length;
  };
  const expectedValue = async (method: string) => Number(await page.getByTestId(`drift-expected-${method}`).getAttribute('data-value'));
  expect(Math.abs(await expectedValue('logit-tree'))).toBeLessThan(1e-6);
  const atOne = await expectedValue('naive-compressed');
  expect(atOne).toBeLessThan(0);
  expect(Math.abs(atOne - cpuExpected(1))).toBeLessThan(1e-4 + 1e-3 * Math.abs(atOne));
  await page.getByTestId('sampler-temperature').fill('0');
  await expect(page).toHaveURL(/sampler=0%2C0%2C1/);
  await expect.poll(() => expectedValue('naive-compressed')).not.toBe(atOne);
  expect(Math.abs((await expectedValue('naive-compressed')) - cpuExpected(0))).toBeLessThan(1e-4 + 1e-3 * Math.abs(cpuExpected(0)));
  await page.getByTestId('sampler-topP').fill('0');
  await expect(page.getByTestId('sampler-error')).toContainText('top-p');
  await expect(page).toHaveURL(/sampler=0%2C0%2C1/); // the last valid sampler stays

  // Targets coloured by drift: a view option the URL keeps.
  await page.getByTestId('color-drift').click();
  await expect(page).toHaveURL(/color=drift/);
  // Another rollout is scored when shown.
  await page.keyboard.press('ArrowRight');
  await page.getByTestId('example-demo-window').click();
  await expect(page.getByTestId('rollout-id')).toContainText('window');
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 90_000 });
  await expect(page.getByTestId('drift-logdiff-logit-tree')).toHaveText('0'); // LogitTree is the live score: exactly 0, in significant digits
});
