// `mw export` and `mw import --from turns` as commands: the streamed file is byte for byte the
// in-memory batch, the summary, invalid input (exit 2, `FILE:LINE: reason`, no output file), and a
// trainer's turn dump going straight into a batch.

import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSafetensorsHeader } from '../util/safetensors';
import { exportBatch } from '../plan/export';
import { generateRandomRollout } from '../rollout/generate-random';
import { parseRolloutFile } from '../rollout/parse';
import { fixturePath } from '../testing/fixtures';
import { deriveTree } from '../tree/derive';
import { main } from './main';

const TMP = mkdtempSync(join(tmpdir(), 'mw-export-'));

async function mw(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

function writeSet(name: string, count: number): string {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify(generateRandomRollout({ seed: 700 + i, size: 'small', id: `s${i}` })));
  const path = join(TMP, name);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

describe('mw export', () => {
  it("writes the worked example's batch and summarises it on stderr (JSON on stdout with --json)", async () => {
    const out = join(TMP, 'worked.safetensors');
    const run = await mw('export', fixturePath('worked-example.json'), '--method', 'packed-4d', '--out', out, '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ method: 'packed-4d', out, rollouts: 1, rows: 21, sequences: 1, targets: 8, pairs: 0, labelCollisions: 0 });
    expect(run.stderr).toBe(`${fixturePath('worked-example.json')}: packed-4d: 1 rollout, 8 targets -> 1 packed sequence, 21 rows\nwrote ${out}\n`);
    expect(readSafetensorsHeader(new Uint8Array(readFileSync(out))).metadata).toMatchObject({ format: 'memorywalker.batch/v1', method: 'packed-4d' });
  });

  it.each(['logit-tree', 'sdcc'] as const)('streams a .jsonl set (%s) to exactly the bytes of the in-memory batch', async (method) => {
    const file = writeSet(`set-${method}.jsonl`, 40);
    const out = join(TMP, `set-${method}.safetensors`);
    const run = await mw('export', file, '--method', method, '--max-tokens', '100', '--out', out);
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toMatch(
      new RegExp(
        `^${file}: ${method}: 40 rollouts, \\d+ targets${method === 'sdcc' ? ', \\d+ KL pairs' : ''} -> \\d+ packed sequences, \\d+ rows \\(at most 100 each\\)\\n`,
      ),
    );
    const trees = parseRolloutFile(readFileSync(file, 'utf8'), file).map(deriveTree);
    expect(Buffer.from(readFileSync(out)).equals(Buffer.from(exportBatch(trees, { method, maxTokens: 100 }).bytes))).toBe(true);
    expect(readdirSync(TMP).filter((f) => f.includes('.partial'))).toEqual([]);
  });

  it('invalid input: exit 2, one line naming the file and line, nothing on stdout, no output file', async () => {
    const file = join(TMP, 'bad.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify(generateRandomRollout({ seed: 1, size: 'small', id: 'a' }))}\n{"format": "memorywalker.rollout/v1", "id": "b", "vocab": 272, "events": [{"op": "jump"}]}\n`,
    );
    const out = join(TMP, 'bad.safetensors');
    const run = await mw('export', file, '--method', 'packed-4d', '--out', out);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(new RegExp(`^${file}:2: event 0: .+\\n$`));
    expect(existsSync(out)).toBe(false);

    const big = await mw('export', fixturePath('worked-example.json'), '--method', 'packed-4d', '--max-tokens', '10', '--out', out);
    expect(big).toMatchObject({ code: 2, stdout: '' });
    expect(big.stderr).toContain('a packed-4d sequence of 21 rows does not fit --max-tokens 10');
    expect(existsSync(out)).toBe(false);
  });

  it('usage errors: exit 1', async () => {
    expect((await mw('export', fixturePath('worked-example.json'), '--out', join(TMP, 'x.safetensors'))).code).toBe(1);
    expect((await mw('export', fixturePath('worked-example.json'), '--method', 'packed-4d')).code).toBe(1);
    expect(
      (await mw('export', fixturePath('worked-example.json'), '--method', 'packed-4d', '--out', join(TMP, 'x.safetensors'), '--max-tokens', '0')).code,
    ).toBe(1);
  });
});

describe('a trainer dump: mw import --from turns, and mw export of the dump itself', () => {
  const dump = join(TMP, 'skyrl.jsonl');
  writeFileSync(
    dump,
    [
      {
        prompt_ids: [10, 11, 12],
        response_ids: [20, 21, 30, 31],
        loss_mask: [1, 1, 0, 0],
        rollout_logprobs: [-1, -0.5, 0, 0],
        trajectory_ids: { instance_id: 'q', repetition_id: 0 },
        is_last_step: false,
      },
      {
        prompt_ids: [10, 11, 12, 20, 21, 30, 31],
        response_ids: [22],
        loss_mask: [1],
        rollout_logprobs: [-0.25],
        trajectory_ids: { instance_id: 'q', repetition_id: 0 },
        is_last_step: false,
      },
      {
        prompt_ids: [10, 11, 40, 41, 22, 32],
        response_ids: [23, 24],
        loss_mask: [1, 1],
        rollout_logprobs: [-2, -0.125],
        trajectory_ids: { instance_id: 'q', repetition_id: 0 },
        is_last_step: true,
        rewards: [0, 1],
      },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );

  it('imports one rollout per trajectory (detected, or named with --from turns) and reports the convention', async () => {
    for (const from of [[], ['--from', 'turns']]) {
      const out = join(TMP, `imported-${from.length}.jsonl`);
      const run = await mw('import', dump, ...from, '--out', out);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe(`${dump}: turns (skyrl fields): 3 records -> 1 rollout (one per trajectory)\nwrote ${out}\n`);
      const [rollout] = parseRolloutFile(readFileSync(out, 'utf8'), out);
      expect(rollout).toMatchObject({ id: 'q_0', group: 'q', reward: 1, vocab: 42 });
      expect(Array.from(deriveTree(rollout).divergingLeaves)).toEqual([7]);
    }
  });

  it('exports the dump directly: an SDCC batch with the surviving output as its KL pair', async () => {
    const out = join(TMP, 'dump.safetensors');
    const run = await mw('export', dump, '--method', 'sdcc', '--out', out, '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rollouts: 1, pairs: 1 });
  });

  it('a bad record: exit 2 naming its line', async () => {
    const bad = join(TMP, 'bad-dump.jsonl');
    writeFileSync(bad, `${readFileSync(dump, 'utf8')}{"prompt_ids": [1], "response_ids": [2, 3], "loss_mask": [1], "trajectory_ids": "r"}\n`);
    const run = await mw('import', bad, '--from', 'turns', '--out', join(TMP, 'never.jsonl'));
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(`${bad}:4: loss_mask must have one 0 or 1 per token of response_ids (2)\n`);
    expect(existsSync(join(TMP, 'never.jsonl'))).toBe(false);
  });
});
