// Regenerates the built-in examples the demo model played (public/examples/*.jsonl): runs the `mw`
// command each example names in src/app/load/examples.ts (`made`), greedy decoding of
// public/models/demo.safetensors with its log-probabilities recorded. GPU (SwiftShader) ~15 s each.
// Run: node --import ./scripts/register.mjs scripts/examples.mjs [--out DIR]
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLES } from '../src/app/load/examples.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : join(root, 'public/examples');
mkdirSync(out, { recursive: true });

for (const example of EXAMPLES) {
  if (example.kind !== 'file' || !example.made) continue;
  const file = join(out, basename(example.path));
  const run = spawnSync(process.execPath, [join(root, 'bin/mw.js'), ...example.made, '--out', file], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
  console.log(`${example.name}: ${file}`);
}
