// `mw` fuzz, experiment: refused before the GPU starts (the harness: fuzz.testing.ts).

import { join } from 'node:path';
import { WORKED } from './subprocess.testing';
import { type Case, TMP, absurdCheckpoint, fuzzFamily, nanWeightsFile } from './fuzz.testing';

/** `mw experiment`: refused before the GPU starts. */
function experimentCases(): Case[] {
  const matrix = (...extra: string[]) => ['experiment', 'matrix', '--out', join(TMP, 'matrix'), '--quick', ...extra];
  return [
    { family: 'experiment without a subcommand', args: ['experiment'], code: 1, line: /^mw experiment: missing subcommand \(matrix, learning\)/ },
    { family: 'experiment bogus', args: ['experiment', 'bogus', '--out', join(TMP, 'matrix')], code: 1, line: /^mw experiment: unknown subcommand "bogus"/ },
    {
      family: 'experiment --out onto a file',
      args: ['experiment', 'matrix', '--out', WORKED, '--quick'],
      code: 1,
      line: /^mw experiment: --out .* is a file; give a folder/,
    },
    {
      family: 'experiment --out below a file',
      args: ['experiment', 'matrix', '--out', join(WORKED, 'sub'), '--quick'],
      code: 1,
      line: /^mw experiment: --out .*: a folder on its path is a file/,
    },
    { family: 'experiment --steps 0', args: matrix('--steps', '0'), code: 1, line: /--steps must be an integer ≥ 1/ },
    { family: 'experiment --editors bogus', args: matrix('--editors', 'none,bogus'), code: 1, line: /unknown --editors entry "bogus"/ },
    { family: 'experiment --methods bogus', args: matrix('--methods', 'bogus'), code: 1, line: /unknown --methods entry "bogus"/ },
    { family: 'experiment --env bogus', args: matrix('--env', 'bogus'), code: 1, line: /--env: unknown environment "bogus"/ },
    { family: 'experiment --lr NaN', args: matrix('--lr', 'NaN'), code: 1, line: /--lr must be a number ≥ 0/ },
    { family: 'experiment --top-p 2', args: matrix('--top-p', '2'), code: 1, line: /--top-p must be a number in \[0, 1\]/ },
    { family: 'experiment --ckpt missing', args: matrix('--ckpt', join(TMP, 'none.safetensors')), code: 2, line: /none\.safetensors: no such file$/ },
    { family: 'experiment --ckpt NaN weights', args: matrix('--ckpt', nanWeightsFile()), code: 2, line: /holds NaN/ },
    {
      family: 'experiment --ckpt absurd metadata',
      args: matrix('--ckpt', absurdCheckpoint('n_layer', { nLayer: 10 ** 8 })),
      code: 2,
      line: /checkpoint: config out of bounds: n_layer/,
    },
  ];
}

fuzzFamily('experiment', experimentCases, (f) => f === 'matrix');
