// `mw` fuzz, issue 31: outputs that are not a regular file of ours, rollouts whose tree would be huge,
// GPT-2 text of one long piece, bad --max-packed (the harness: fuzz.testing.ts).

import { linkSync, readFileSync, symlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { evictingRollout } from '../testing/evicting';
import { WORKED } from './subprocess.testing';
import { type Case, TMP, file, fuzzFamily } from './fuzz.testing';

/**
 * Issue 31: outputs that are not a regular file of ours (a named pipe, the input under another name),
 * rollouts whose tree would be huge (the 2,000-edit rollout, N_packed 4,000,000), GPT-2 text of one
 * long piece, and bad --max-packed values.
 */
function reliabilityCases(): Case[] {
  const input = file('rel-in.json', readFileSync(WORKED));
  const fifo = join(TMP, 'rel-pipe');
  if (spawnSync('mkfifo', [fifo]).status !== 0) throw new Error('mkfifo failed');
  const symlink = join(TMP, 'rel-symlink.json');
  symlinkSync(input, symlink);
  const hardlink = join(TMP, 'rel-hardlink.json');
  linkSync(input, hardlink);
  const evict = file('rel-evict.json', evictingRollout(2000));
  const huge = /rel-evict\.json: rollout "evict": N_packed 4,000,000 is above the limit of 2,000,000 rows/;
  const letters = Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + ((i * 7 + (i >> 4)) % 26))).join('');
  const chat = file(
    'rel-long-line.jsonl',
    `${JSON.stringify({
      messages: [
        { role: 'user', content: letters },
        { role: 'assistant', content: `😀${letters.slice(0, 50_000)}` },
      ],
    })}\n`,
  );
  return [
    {
      family: 'outputs: --out a named pipe',
      args: ['export', input, '--method', 'packed-4d', '--out', fifo],
      code: 1,
      line: /^mw export: --out .* is a named pipe, not a regular file/,
    },
    {
      family: 'outputs: --out a symlink to the input',
      args: ['import', input, '--out', symlink],
      code: 1,
      line: /^mw import: --out .* is the input file .* under another name/,
    },
    { family: 'outputs: --out a hard link to the input', args: ['export', input, '--method', 'sdcc', '--out', hardlink], code: 1, line: /under another name/ },
    {
      family: 'outputs: verify --grad-out a named pipe',
      args: ['verify', input, '--grad-out', fifo],
      code: 1,
      line: /^mw verify: --grad-out .* is a named pipe/,
    },
    {
      family: 'outputs: --ckpt-out a named pipe',
      args: [
        'train',
        '--data',
        input,
        '--method',
        'packed-4d',
        '--objective',
        'sft',
        '--steps',
        '1',
        '--config',
        'tiny',
        '--ckpt-out',
        fifo,
        '--metrics',
        join(TMP, 'rel-m.jsonl'),
      ],
      code: 1,
      line: /is a named pipe/,
    },
    ...(['packed-4d', 'logit-tree', 'sdcc'] as const).map(
      (method): Case => ({
        family: `sizes: export ${method} of the 2,000-edit rollout`,
        args: ['export', evict, '--method', method, '--out', join(TMP, `rel-${method}.safetensors`)],
        code: 2,
        line: huge,
      }),
    ),
    { family: 'sizes: plan of the 2,000-edit rollout', args: ['plan', evict, '--method', 'naive-compressed', '--json'], code: 2, line: huge },
    { family: 'sizes: tree --per-target of the 2,000-edit rollout', args: ['tree', evict, '--per-target', '--json'], code: 2, line: huge },
    {
      family: 'sizes: --max-packed 0',
      args: ['plan', input, '--method', 'packed-4d', '--max-packed', '0'],
      code: 1,
      line: /--max-packed must be an integer ≥ 1/,
    },
    { family: 'sizes: --max-packed 1e9', args: ['tree', input, '--per-target', '--max-packed', '1e9'], code: 1, line: /--max-packed must be an integer ≥ 1/ },
    { family: 'gpt2: 150k characters without a space', args: ['import', chat, '--tokenizer', 'gpt2', '--out', join(TMP, 'rel-long-line.out.jsonl')], code: 0 },
  ];
}

fuzzFamily(
  'outputs, sizes and long GPT-2 text (issue 31)',
  reliabilityCases,
  (f) => f.startsWith('rel-') && /\.(safetensors|out\.jsonl)$/.test(f) && f !== 'rel-long-line.out.jsonl',
);
