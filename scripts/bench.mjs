// `npm run bench`: runs every benchmark script in bench/ and every kernel's beside it
// (src/gpu/kernels/<name>/<name>.bench.ts), or those named (`npm run bench -- matmul`), each in its
// own Node process with TypeScript and the ?raw shader hook registered. Benchmarks print ratios
// measured in one run; absolute times on SwiftShader are not GPU times.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { ensureChromium } from './ensure-chromium.mjs';

if (!ensureChromium()) process.exit(1);
const names = process.argv.slice(2);
const KERNELS = 'src/gpu/kernels';
const scripts = [
  ...readdirSync('bench')
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('_'))
    .map((f) => ({ name: f.replace(/\.ts$/, ''), path: `bench/${f}` })),
  ...readdirSync(KERNELS)
    .filter((k) => existsSync(`${KERNELS}/${k}/${k}.bench.ts`))
    .map((k) => ({ name: k, path: `${KERNELS}/${k}/${k}.bench.ts` })),
]
  .filter(({ name }) => names.length === 0 || names.includes(name))
  .sort((a, b) => a.name.localeCompare(b.name));
const env = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' };
let failed = 0;
for (const { path } of scripts) {
  console.log(`\n##### ${path}`);
  const started = Date.now();
  const result = spawnSync('node', ['--expose-gc', '--import', './scripts/register.mjs', path], { stdio: 'inherit', env });
  console.log(`##### ${path}: exit ${result.status} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
