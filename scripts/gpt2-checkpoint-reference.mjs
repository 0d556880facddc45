// Regenerates src/cli/fixtures/gpt2-checkpoint.reference.json, the float64 reference src/cli/gpt2-checkpoint.gpu.test.ts
// compares `mw score` with (src/testing/gpt2CheckpointReference.ts). The test fails, naming this command, when a
// layout's checkpoint or the transcript it was computed from changes. ~20 s on one core.
// Run: node --import ./scripts/register.mjs scripts/gpt2-checkpoint-reference.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTokenizer } from '../src/rollout/tokenizer.ts';
import { validateRollout } from '../src/rollout/validate.ts';
import { computeGpt2CheckpointReference, gpt2Transcript } from '../src/testing/gpt2CheckpointReference.ts';
import { deriveTree } from '../src/tree/derive.ts';

await loadTokenizer('gpt2');
const out = fileURLToPath(new URL('../src/cli/fixtures/gpt2-checkpoint.reference.json', import.meta.url));
const started = Date.now();
const reference = computeGpt2CheckpointReference(deriveTree(validateRollout(gpt2Transcript(), { file: 'transcript.json' })));
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(reference)}\n`);
console.log(`${out}: ${Object.keys(reference.layouts).length} layouts, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
