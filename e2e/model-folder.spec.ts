// Open models in the page (issue 28): a tiny Qwen3 folder (bf16, tied head, q/k norms; written here by the
// tests' own writer) is picked as the scoring model, its load shown in bytes; its tokenizer and chat
// template become the import choice, so an agent session imported next is tokenized as
// `mw import --tokenizer FOLDER` tokenizes it, and the drift panel fills for all five methods with the
// figures `mw drift --ckpt FOLDER` gives on the same files (SDCC's KL: the family's float64 reference). The
// folder and the session come back after a reload; bad folders dropped are refused in one line and the
// model before stays; the training panel refuses the family's weights in one line.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures';

const SESSION = fileURLToPath(new URL('../src/rollout/importers/fixtures/agent-session-two-compactions.jsonl', import.meta.url));
/** The test run's mw: the bundle `npm test` builds (MW_CLI, the same main), else bin/mw.js. */
const MW = process.env.MW_CLI ? resolve(process.env.MW_CLI) : fileURLToPath(new URL('../bin/mw.js', import.meta.url));
const METHODS = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const;

interface CliDrift {
  methods: Record<string, { scored: number; conditioningDrift: number; conditioningMu: number }>;
  expected: { methods: Record<string, { mu: number }> };
}

const value = async (page: Page, testId: string) => Number(await page.getByTestId(testId).getAttribute('data-value'));

/** Drops files on the window as a file manager does (loose files: a synthetic drag carries no folder entries). */
async function dropFiles(page: Page, files: { name: string; text: string }[]) {
  await page.evaluate((list) => {
    const transfer = new DataTransfer();
    for (const f of list) transfer.items.add(new File([f.text], f.name));
    window.dispatchEvent(new DragEvent('dragenter', { dataTransfer: transfer, cancelable: true }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, cancelable: true }));
  }, files);
}

test('a picked Qwen3 folder scores an agent session imported with its chat template: all five methods as mw drift gives them', async ({ page }) => {
  test.setTimeout(300_000);
  const { writeFamilyFolder } = await import('../src/testing/familyFolders');
  const { familyLogits } = await import('../src/model/family/reference');
  const { forwardKlRow } = await import('../src/gpu/kernels/kl-sdcc/kl-sdcc.reference');
  const { parseRolloutFile } = await import('../src/rollout/parse');
  const { deriveTree } = await import('../src/tree');
  const { buildPlan } = await import('../src/plan');

  const tmp = mkdtempSync(join(tmpdir(), 'mw-e2e-folder-'));
  const folder = writeFamilyFolder(join(tmp, 'qwen3'), 'qwen3', 3);
  const imported = join(tmp, 'imported.jsonl');
  execFileSync('node', [MW, 'import', SESSION, '--tokenizer', folder.dir, '--out', imported], { stdio: 'ignore' });
  const cli: CliDrift = JSON.parse(execFileSync('node', [MW, 'drift', '--ckpt', folder.dir, '--rollouts', imported, '--json'], { encoding: 'utf8' }));
  const [rollout] = parseRolloutFile(readFileSync(imported, 'utf8'), imported);
  expect(rollout.tokenizer).toBe('hf:qwen3');

  // SDCC's KL at the diverging leaves (live prefix vs final prefix), from the family's float64 reference.
  const tree = deriveTree(rollout);
  const weights = { config: folder.config, tensors: folder.tensors };
  const V = folder.config.vocabSize;
  const rows = new Map(['logit-tree', 'naive-compressed'].map((m) => [m, new Map<number, Float64Array>()]));
  for (const method of ['logit-tree', 'naive-compressed'] as const) {
    for (const seq of buildPlan(tree, method).sequences) {
      const leaves = seq.targets.filter((t) => tree.diverging[t.id]);
      if (!leaves.length) continue;
      const logits = familyLogits(
        weights,
        seq,
        leaves.map((t) => t.predictor),
      );
      leaves.forEach((t, i) => rows.get(method)!.set(t.id, logits.slice(i * V, (i + 1) * V)));
    }
  }
  const leaves = Array.from(tree.divergingLeaves);
  const klReference =
    leaves.reduce((s, id) => s + forwardKlRow(rows.get('logit-tree')!.get(id)!, 0, rows.get('naive-compressed')!.get(id)!, 0, V), 0) / leaves.length;

  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  // Picked as a person picks it: the folder through <input webkitdirectory>; the load shown in bytes as it goes.
  await page.evaluate(() => {
    const seen: { bytes: number; total: number }[] = [];
    (window as unknown as { loadSeen: typeof seen }).loadSeen = seen;
    new MutationObserver(() => {
      const bar = document.querySelector<HTMLElement>('[data-testid="model-load-progress"]');
      if (bar) seen.push({ bytes: Number(bar.dataset.bytes), total: Number(bar.dataset.total) });
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await page.getByTestId('model-folder-input').setInputFiles(folder.dir);
  await expect(page.getByTestId('model-info')).toContainText('model qwen3 · Qwen3ForCausalLM qwen3: V 320, C 16, 2 layers, 4 heads (2 kv) of 8');
  await expect(page.getByTestId('model-info')).toContainText('tokenizer hf:qwen3');
  const tensorBytes = [...folder.tensors.values()].reduce((n, t) => n + 2 * t.length, 0); // bf16
  const seen = await page.evaluate(() => (window as unknown as { loadSeen: { bytes: number; total: number }[] }).loadSeen);
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.every((s) => s.total === tensorBytes && s.bytes > 0 && s.bytes <= tensorBytes)).toBe(true);
  // The model's tokenizer is now how logs are imported; the worked example (bytes) is refused by it, saying how to import.
  await expect(page.getByTestId('import-tokenizer')).toHaveValue('hf:qwen3');
  await expect(page.getByTestId('drift-error')).toContainText(
    'rollout "worked-example" is tokenized with byte (vocabulary 272), but the model\'s vocabulary of 320 is the hf:qwen3 tokenizer\'s: import the chat or agent log with "text as: hf:qwen3"',
  );

  await page.getByTestId('rollout-file-input').setInputFiles({ name: 'session.jsonl', mimeType: 'application/jsonl', buffer: readFileSync(SESSION) });
  await expect(page.getByTestId('stat-physicalLength')).toHaveText(String(rollout.length));
  await expect(page.locator('section.summary .hint')).toContainText('tokenizer hf:qwen3');
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 240_000 });

  const figures = async () => {
    for (const m of METHODS) {
      await expect(page.getByTestId(`drift-scored-${m}`), m).toHaveText(String(cli.methods[m].scored));
      expect(Math.abs((await value(page, `drift-logdiff-${m}`)) - cli.methods[m].conditioningDrift), `${m} logdiff`).toBeLessThanOrEqual(2e-4);
      expect(Math.abs((await value(page, `drift-mu-${m}`)) - cli.methods[m].conditioningMu), `${m} μ`).toBeLessThanOrEqual(2e-4);
      expect(Math.abs((await value(page, `drift-expected-${m}`)) - cli.expected.methods[m].mu), `${m} expected μ`).toBeLessThanOrEqual(2e-4);
    }
    // SDCC: its student's figures (Naive-Compressed's) and the KL at the diverging leaves.
    await expect(page.getByTestId('drift-scored-sdcc')).toHaveText(String(cli.methods['naive-compressed'].scored));
    expect(Math.abs((await value(page, 'drift-mu-sdcc')) - cli.methods['naive-compressed'].conditioningMu)).toBeLessThanOrEqual(2e-4);
    await expect(page.getByTestId('drift-kl-sdcc')).toHaveAttribute('data-pairs', String(leaves.length));
    expect(Math.abs((await value(page, 'drift-kl-sdcc')) - klReference), 'KL_SDCC').toBeLessThanOrEqual(2e-4);
  };
  await figures();
  // Not a test that cannot fail: the drift is there to measure.
  expect(cli.methods['naive-full'].conditioningDrift).toBeGreaterThan(0.01);
  expect(klReference).toBeGreaterThan(1e-3);

  // A reload loads the folder kept in this browser, then the session imported with its tokenizer: the same figures.
  await page.reload();
  await expect(page.getByTestId('model-info')).toContainText('kept from your last visit', { timeout: 60_000 });
  await expect(page.getByTestId('model-info')).toContainText('tokenizer hf:qwen3');
  await expect(page.getByTestId('stat-physicalLength')).toHaveText(String(rollout.length));
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 240_000 });
  await figures();

  // Bad folders, dropped as loose files, are refused in one line; the model loaded before stays.
  const config = JSON.parse(readFileSync(join(folder.dir, 'config.json'), 'utf8'));
  await dropFiles(page, [
    { name: 'tokenizer.json', text: readFileSync(join(folder.dir, 'tokenizer.json'), 'utf8') },
    { name: 'model.safetensors.index.json', text: JSON.stringify({ weight_map: { 'model.norm.weight': 'model-00001-of-00002.safetensors' } }) },
  ]);
  await expect(page.getByTestId('drift-error')).toHaveText(
    'model: no config.json (a model folder as the Hub publishes it holds config.json and the safetensors weights)',
  );
  await dropFiles(page, [
    { name: 'config.json', text: JSON.stringify(config) },
    { name: 'model.safetensors.index.json', text: JSON.stringify({ weight_map: { 'model.norm.weight': 'model-00001-of-00002.safetensors' } }) },
  ]);
  await expect(page.getByTestId('drift-error')).toHaveText(
    'model.safetensors.index.json: weight_map names shard model-00001-of-00002.safetensors, not in the folder',
  );
  await dropFiles(page, [
    { name: 'config.json', text: JSON.stringify({ ...config, architectures: ['MistralForCausalLM'], model_type: 'mistral' }) },
    { name: 'model.safetensors', text: '' },
  ]);
  await expect(page.getByTestId('drift-error')).toContainText('config.json: ');
  await expect(page.getByTestId('drift-error')).toContainText('MistralForCausalLM');
  await expect(page.getByTestId('model-info')).toContainText('model qwen3');

  // The training panel takes GPT-2 checkpoints only: the family's weights are refused in one line.
  await page.goto('/#preset=tiny');
  await page.getByTestId('config-import-checkpoint').setInputFiles(join(folder.dir, 'model.safetensors'));
  await expect(page.getByTestId('train-banner').locator('span')).toHaveText(
    'model.safetensors: a Llama / Qwen model (tensor model.embed_tokens.weight): training runs GPT-2 checkpoints only; score with it in the drift panel ("Open model folder…")',
  );
});
