// Regenerates e2e/gpt2-published.reference.json, the float64 reference the published-layout GPT-2
// test of e2e/gpt2.spec.ts compares the page's scores with (src/testing/publishedGpt2Reference.ts).
// The spec fails, naming this command, when the checkpoint or the imported session it was computed
// from changes. ~70 s on one core.
// Run: node --import ./scripts/register.mjs scripts/gpt2-e2e-reference.mjs
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { computePublishedGpt2Reference, publishedGpt2Scene } from '../src/testing/publishedGpt2Reference.ts';

const session = fileURLToPath(new URL('../src/rollout/importers/fixtures/agent-session-two-compactions.jsonl', import.meta.url));
const out = fileURLToPath(new URL('../e2e/gpt2-published.reference.json', import.meta.url));
const started = Date.now();
const reference = computePublishedGpt2Reference(await publishedGpt2Scene(readFileSync(session, 'utf8')));
writeFileSync(out, `${JSON.stringify(reference)}\n`);
// In the house format (biome.json), as the lint tier checks it.
spawnSync('npx', ['biome', 'format', '--write', out], { stdio: 'ignore' });
const targets = Object.values(reference.logprobs).reduce((n, l) => n + l.length, 0);
console.log(`${out}: ${targets} targets, KL ${reference.klSdcc}, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
