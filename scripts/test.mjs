// `npm test`: every tier in one command — type check, lint (Biome's formatter and linter, and
// knip's unused-export check: `npm run lint`), unit (Vitest), GPU (Vitest on Dawn + SwiftShader),
// Python (pytest on Debian's torch: python/tests), end-to-end (Playwright on Debian's headless
// Chromium against the production build). Ends with the plain line `N passed, N failed` totalled
// over all tiers.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { ensureChromium } from './ensure-chromium.mjs';
import { buildCliBundle } from './cli-bundle.mjs';
import { ensurePython } from './ensure-python.mjs';

const reports = '.reports';
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const env = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp', FORCE_COLOR: '0' };
// The tiers' `mw` subprocesses run one bundle of src/cli built here (scripts/cli-bundle.mjs), not
// bin/mw.js's TypeScript transform at every start; the tests that are about bin/mw.js itself run it.
try {
  env.MW_CLI = await buildCliBundle(`${reports}/mw.mjs`);
} catch (error) {
  console.log(`the mw bundle could not be built (${error.message.split('\n')[0]}): the tiers run bin/mw.js`);
}
const only = process.argv.slice(2); // e.g. `npm test -- unit gpu`
const wanted = (tier) => only.length === 0 || only.includes(tier);

function run(label, command, args, extraEnv = {}) {
  console.log(`\n=== ${label}: ${command} ${args.join(' ')}`);
  const started = Date.now();
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...env, ...extraEnv } });
  console.log(`=== ${label}: exit ${result.status} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result.status ?? 1;
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

const tiers = [];

if (wanted('typecheck')) {
  const status = run('typecheck', 'node', ['node_modules/typescript-native/bin/tsc', '--noEmit', '-p', 'tsconfig.json']);
  tiers.push({ name: 'typecheck', passed: status === 0 ? 1 : 0, failed: status === 0 ? 0 : 1 });
}

// The house rules: each tool is one check, failed when it reports anything (biome.json, knip.json).
if (wanted('lint')) {
  const checks = [run('biome', 'npx', ['biome', 'ci', '--colors=off', '--error-on-warnings', '.']), run('knip', 'npx', ['knip', '--no-progress'])];
  tiers.push({ name: 'lint', passed: checks.filter((s) => s === 0).length, failed: checks.filter((s) => s !== 0).length });
}

for (const tier of ['unit', 'gpu']) {
  if (!wanted(tier)) continue;
  if (tier === 'gpu' && !ensureChromium()) {
    tiers.push({ name: tier, passed: 0, failed: 1, note: 'setup failed' });
    continue;
  }
  const out = `${reports}/${tier}.json`;
  const status = run(tier, 'npx', ['vitest', 'run', '--project', tier, '--reporter=default', '--reporter=json', `--outputFile.json=${out}`]);
  const json = readJson(out);
  if (!json) tiers.push({ name: tier, passed: 0, failed: 1, note: `runner exited ${status} without a report` });
  else {
    const broken = json.testResults?.filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length ?? 0;
    tiers.push({
      name: tier,
      passed: json.numPassedTests,
      failed: json.numFailedTests + broken + (status !== 0 && json.numFailedTests + broken === 0 ? 1 : 0),
    });
  }
}

// Python: the torch proofs of `mw export`'s batches (they run mw score and mw verify, so the GPU setup too).
if (wanted('python')) {
  const python = ensureChromium() ? ensurePython() : undefined;
  if (!python) tiers.push({ name: 'python', passed: 0, failed: 1, note: 'setup failed' });
  else {
    const out = `${reports}/python.xml`;
    const status = run('python', python, ['-m', 'pytest', 'python/tests', '-q', '--color=no', '-p', 'no:cacheprovider', `--junitxml=${out}`], {
      MW_NODE: process.execPath,
      MW_PYTHON_FIGURES: `${reports}/python-figures.json`,
      PYTHONDONTWRITEBYTECODE: '1',
    });
    // pytest's JUnit XML: <testsuite ... errors="E" failures="F" skipped="S" tests="N">.
    const suite = existsSync(out) ? /<testsuite\b[^>]*>/.exec(readFileSync(out, 'utf8'))?.[0] : undefined;
    const count = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite ?? '')?.[1] ?? 0);
    if (!suite) tiers.push({ name: 'python', passed: 0, failed: 1, note: `runner exited ${status} without a report` });
    else {
      const failed = count('failures') + count('errors');
      tiers.push({ name: 'python', passed: count('tests') - failed - count('skipped'), failed: failed + (status !== 0 && failed === 0 ? 1 : 0) });
    }
  }
}

if (wanted('e2e')) {
  if (!ensureChromium()) tiers.push({ name: 'e2e', passed: 0, failed: 1, note: 'setup failed' });
  else if (run('build', 'npx', ['vite', 'build', '--logLevel', 'warn']) !== 0) tiers.push({ name: 'e2e', passed: 0, failed: 1, note: 'build failed' });
  else {
    const out = `${reports}/e2e.json`;
    const status = run('e2e', 'npx', ['playwright', 'test', '--reporter=list,json'], { PLAYWRIGHT_JSON_OUTPUT_NAME: out });
    const json = existsSync(out) ? readJson(out) : undefined;
    if (!json?.stats) tiers.push({ name: 'e2e', passed: 0, failed: 1, note: `runner exited ${status} without a report` });
    else {
      const s = json.stats;
      const failed = s.unexpected + s.flaky + (json.errors?.length ?? 0);
      tiers.push({ name: 'e2e', passed: s.expected, failed: failed + (status !== 0 && failed === 0 ? 1 : 0) });
    }
  }
}

console.log('\n=== summary');
for (const t of tiers) console.log(`${t.name.padEnd(10)} ${t.passed} passed, ${t.failed} failed${t.note ? ` (${t.note})` : ''}`);
const passed = tiers.reduce((n, t) => n + t.passed, 0);
const failed = tiers.reduce((n, t) => n + t.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
