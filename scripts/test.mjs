// `npm test`: every tier in one command — type check, lint (Biome's formatter and linter, and
// knip's unused-export check: `npm run lint`), unit (Vitest), GPU (Vitest on Dawn + SwiftShader),
// Python (pytest on Debian's torch: python/tests), end-to-end (Playwright on Debian's headless
// Chromium against the production build). Ends with the plain line `N passed, N failed` totalled
// over all tiers.
//
// What runs side by side (the machine this is sized for has 2 cores): the type check and the two
// linters; the Python tier beside the unit tier (pytest runs one test at a time, mostly waiting on an
// `mw` subprocess or on torch's small products, so it takes about one core for its minute while the
// unit tier's two files at a time leave a share of the other idle); the production build beside the
// GPU tier. The GPU tier's files already run two at a time. The end-to-end tier runs after everything
// else, two spec files at a time, then alone the specs whose figures are rates and durations in the page
// (E2E_ALONE: main-thread task bounds, live messages a second), which work beside them would change.
// A command run beside others prints its output whole when it ends.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

/** Starts a command beside what runs next; its output is kept and printed whole, with its exit status, when awaited. */
function start(label, command, args, extraEnv = {}) {
  const started = Date.now();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, ...extraEnv } });
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  const ended = new Promise((resolve) => {
    child.on('error', (error) => resolve({ status: 1, error }));
    child.on('close', (status) => resolve({ status: status ?? 1 }));
  });
  return async () => {
    const { status, error } = await ended;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`\n=== ${label} (run beside the tiers around it): ${command} ${args.join(' ')}`);
    process.stdout.write(Buffer.concat(output));
    if (error) console.log(String(error));
    console.log(`=== ${label}: exit ${status} in ${seconds} s`);
    return status;
  };
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Each tier's counts, by name; the summary lists them in this order. */
const ORDER = ['typecheck', 'lint', 'unit', 'gpu', 'python', 'e2e'];
const tiers = new Map();
const record = (name, passed, failed, note) => tiers.set(name, { name, passed, failed, note });

// The type check and the linters side by side. The house rules: each tool is one check, failed when it
// reports anything (biome.json, knip.json).
const typecheck = wanted('typecheck') ? start('typecheck', 'node', ['node_modules/typescript-native/bin/tsc', '--noEmit', '-p', 'tsconfig.json']) : undefined;
const linters = wanted('lint')
  ? [start('biome', 'npx', ['biome', 'ci', '--colors=off', '--error-on-warnings', '.']), start('knip', 'npx', ['knip', '--no-progress'])]
  : [];
if (typecheck) {
  const status = await typecheck();
  record('typecheck', status === 0 ? 1 : 0, status === 0 ? 0 : 1);
}
if (linters.length > 0) {
  const checks = [];
  for (const linter of linters) checks.push(await linter());
  record('lint', checks.filter((s) => s === 0).length, checks.filter((s) => s !== 0).length);
}

// Python: the torch proofs of `mw export`'s batches (they run mw score and mw verify, so the GPU setup too),
// beside the unit tier. Its `mw` runs read the matmul variant from the tests' cache directory, as the GPU
// tier's do: settled first by the GPU tier's own global setup (src/testing/gpuGlobalSetup.ts), so no two
// processes measure it at once.
let python;
if (wanted('python')) {
  const interpreter = ensureChromium() ? ensurePython() : undefined;
  if (!interpreter) record('python', 0, 1, 'setup failed');
  else {
    run('matmul variant', 'node', ['--import', './scripts/register.mjs', 'src/testing/gpuGlobalSetup.ts']);
    const out = `${reports}/python.xml`;
    const ended = start('python', interpreter, ['-m', 'pytest', 'python/tests', '-q', '--color=no', '-p', 'no:cacheprovider', `--junitxml=${out}`], {
      MW_NODE: process.execPath,
      MW_PYTHON_FIGURES: `${reports}/python-figures.json`,
      PYTHONDONTWRITEBYTECODE: '1',
    });
    python = async () => {
      const status = await ended();
      // pytest's JUnit XML: <testsuite ... errors="E" failures="F" skipped="S" tests="N">.
      const suite = existsSync(out) ? /<testsuite\b[^>]*>/.exec(readFileSync(out, 'utf8'))?.[0] : undefined;
      const count = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite ?? '')?.[1] ?? 0);
      if (!suite) return record('python', 0, 1, `runner exited ${status} without a report`);
      const failed = count('failures') + count('errors');
      record('python', count('tests') - failed - count('skipped'), failed + (status !== 0 && failed === 0 ? 1 : 0));
    };
  }
}

function vitestTier(tier) {
  const out = `${reports}/${tier}.json`;
  const status = run(tier, 'npx', ['vitest', 'run', '--project', tier, '--reporter=default', '--reporter=json', `--outputFile.json=${out}`]);
  const json = readJson(out);
  if (!json) return record(tier, 0, 1, `runner exited ${status} without a report`);
  const broken = json.testResults?.filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length ?? 0;
  record(tier, json.numPassedTests, json.numFailedTests + broken + (status !== 0 && json.numFailedTests + broken === 0 ? 1 : 0));
}

if (wanted('unit')) vitestTier('unit');
await python?.();

// The production build for the end-to-end tier, beside the GPU tier.
const e2eReady = wanted('e2e') && ensureChromium();
if (wanted('e2e') && !e2eReady) record('e2e', 0, 1, 'setup failed');
const build = e2eReady ? start('build', 'npx', ['vite', 'build', '--logLevel', 'warn']) : undefined;

if (wanted('gpu')) {
  if (!ensureChromium()) record('gpu', 0, 1, 'setup failed');
  else vitestTier('gpu');
}

// End-to-end: two spec files at a time, then, alone, the specs whose figures are rates and durations in the page
// (main-thread task bounds, live messages a second, view updates a second apart), which work beside them would change.
const E2E_ALONE = ['e2e/size-limit.spec.ts', 'e2e/training.spec.ts'];

/** One Playwright run over `files`; its passed and failed counts. */
function playwright(label, files, workers) {
  const out = `${reports}/e2e-${workers}.json`;
  const status = run(`e2e (${label})`, 'npx', ['playwright', 'test', `--workers=${workers}`, ...files, '--reporter=list,json'], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: out,
  });
  const json = existsSync(out) ? readJson(out) : undefined;
  if (!json?.stats) return { passed: 0, failed: 1, note: `${label}: runner exited ${status} without a report` };
  const s = json.stats;
  const failed = s.unexpected + s.flaky + (json.errors?.length ?? 0);
  return { passed: s.expected, failed: failed + (status !== 0 && failed === 0 ? 1 : 0) };
}

if (build) {
  if ((await build()) !== 0) record('e2e', 0, 1, 'build failed');
  else {
    const specs = readdirSync('e2e')
      .filter((f) => f.endsWith('.spec.ts'))
      .map((f) => `e2e/${f}`);
    const runs = [
      playwright(
        'two files at a time',
        specs.filter((f) => !E2E_ALONE.includes(f)),
        2,
      ),
      playwright('alone', E2E_ALONE, 1),
    ];
    const notes = runs.flatMap((r) => (r.note ? [r.note] : []));
    record(
      'e2e',
      runs.reduce((n, r) => n + r.passed, 0),
      runs.reduce((n, r) => n + r.failed, 0),
      notes.join('; ') || undefined,
    );
  }
}

console.log('\n=== summary');
const results = ORDER.filter((name) => tiers.has(name)).map((name) => tiers.get(name));
for (const t of results) console.log(`${t.name.padEnd(10)} ${t.passed} passed, ${t.failed} failed${t.note ? ` (${t.note})` : ''}`);
const passed = results.reduce((n, t) => n + t.passed, 0);
const failed = results.reduce((n, t) => n + t.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
