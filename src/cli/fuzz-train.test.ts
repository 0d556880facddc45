// `mw` fuzz, train: bad --checkpoint-every and --ckpt-in pairs that must not be resumed (the harness: fuzz.testing.ts).

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { saveCheckpointPair, saveOptimizerState, type OptimizerState } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { initWeights, parameterShapes } from '../model/params';
import { WORKED } from './subprocess.testing';
import { type Case, TINY, TMP, aFolder, file, fuzzFamily, nanWeightsFile } from './fuzz.testing';

function adamState(config: ModelConfig, step: number, fill: number): OptimizerState {
  const state: OptimizerState = { step, m: new Map(), v: new Map() };
  for (const { name, shape } of parameterShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    state.m.set(name, new Float32Array(n).fill(fill));
    state.v.set(name, new Float32Array(n).fill(fill * fill));
  }
  return state;
}

/** `mw train`: bad --checkpoint-every values, and --ckpt-in pairs that must not be resumed (all refused before the GPU starts). */
function trainCases(): Case[] {
  // Each case its own --ckpt-out: the cases run two at a time, and one checkpoint name has one writer (its lock).
  let runs = 0;
  const train = (...extra: string[]) => [
    'train',
    '--data',
    WORKED,
    '--method',
    'packed-4d',
    '--objective',
    'sft',
    '--steps',
    '2',
    '--ckpt-out',
    join(TMP, `trained-${++runs}.safetensors`),
    '--metrics',
    join(TMP, `trained-${runs}.jsonl`),
    ...extra,
  ];
  const cases: Case[] = ['0', 'abc', '1.5', '1e400', '=-1'].map((k) => ({
    family: `train --checkpoint-every ${k}`,
    args: train(...(k.startsWith('=') ? [`--checkpoint-every${k}`] : ['--checkpoint-every', k])),
    code: 1,
    line: /^mw train: --checkpoint-every must be an integer ≥ 1/,
  }));
  cases.push({
    family: 'train --checkpoint-every -1',
    args: train('--checkpoint-every', '-1'),
    code: 1,
    line: /argument is ambiguous\. .* use '--checkpoint-every=-XYZ'/,
  });
  cases.push({
    family: 'train --checkpoint-every without a value',
    args: train('--checkpoint-every'),
    code: 1,
    line: /^mw train: Option '--checkpoint-every <value>' argument missing/,
  });

  // Checkpoint pairs: NAME.safetensors with NAME.optim.safetensors beside it.
  const weights = initWeights(TINY, 4);
  const pair = (name: string, files: { weights: Uint8Array; optimizer: Uint8Array | string | null }) => {
    const path = file(`${name}.safetensors`, files.weights);
    if (typeof files.optimizer === 'string') mkdirSync(join(TMP, `${name}.optim.safetensors`), { recursive: true });
    else if (files.optimizer) file(`${name}.optim.safetensors`, files.optimizer);
    return path;
  };
  const good = saveCheckpointPair(weights, adamState(TINY, 4, 0.1));
  const other = saveCheckpointPair(initWeights(TINY, 5), adamState(TINY, 3, 0.2));
  const nanMoment = adamState(TINY, 4, 0.1);
  nanMoment.v.get('h.0.attn.c_proj.weight')![3] = NaN;
  const refused: [string, { weights: Uint8Array; optimizer: Uint8Array | string | null }, RegExp][] = [
    [
      'mixed',
      { weights: good.weights, optimizer: other.optimizer },
      /mixed\.optim\.safetensors: checkpoint: the optimizer state \(step 3\) was saved with other weights \(weights_sha256 differs\): a mixed pair/,
    ],
    [
      'mixed-legacy',
      { weights: good.weights, optimizer: saveOptimizerState(TINY, adamState(TINY, 3, 0.1)) },
      /mixed-legacy\.optim\.safetensors: checkpoint: the optimizer state is at step 3, the weights at step 4: a mixed pair/,
    ],
    ['optimizer-folder', { weights: good.weights, optimizer: 'folder' }, /optimizer-folder\.optim\.safetensors: not a file$/],
    [
      'optimizer-truncated',
      { weights: good.weights, optimizer: good.optimizer.subarray(0, good.optimizer.length - 100) },
      /optimizer-truncated\.optim\.safetensors: .*truncated/,
    ],
    [
      'optimizer-nan',
      saveCheckpointPair(weights, nanMoment),
      /optimizer-nan\.optim\.safetensors: checkpoint: tensor v\.transformer\.h\.0\.attn\.c_proj\.weight holds NaN at index 3/,
    ],
    [
      'weights-nan',
      { weights: new Uint8Array(readFileSync(nanWeightsFile())), optimizer: good.optimizer },
      /weights-nan\.safetensors: checkpoint: tensor transformer\.wte\.weight holds NaN/,
    ],
  ];
  for (const [name, files, line] of refused)
    cases.push({ family: `train --ckpt-in: ${name} pair`, args: train('--ckpt-in', pair(name, files)), code: 2, line });
  cases.push({
    family: 'train --ckpt-in: missing',
    args: train('--ckpt-in', join(TMP, 'none.safetensors')),
    code: 2,
    line: /none\.safetensors: no such file$/,
  });
  cases.push({ family: 'train --ckpt-in: a folder', args: train('--ckpt-in', aFolder()), code: 2, line: /a-folder: not a file$/ });
  cases.push({
    family: 'train --ckpt-in with --config',
    args: train('--ckpt-in', join(TMP, 'mixed.safetensors'), '--config', 'tiny'),
    code: 1,
    line: /--config does not go with --ckpt-in/,
  });
  return cases;
}

fuzzFamily('train', trainCases, (f) => /^trained-\d+\.safetensors$/.test(f));
