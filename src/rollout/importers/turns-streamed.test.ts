// Turn dumps as trainers write them (docs/importers.md#trainer-turn-dumps): SkyRL's column form with
// loss_masks, every unused field named, trajectory ids exact by type and value, and the streamed
// import's memory bounded by the open trajectories (a 200,000-turn dump read in a few seconds).

import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { formatFileReport } from './report';
import { importTurnsText, turnsRollouts } from './turns';
import { deriveTree } from '../../tree/derive';
import { parseRolloutFile } from '../parse';
import { jsonl, readFixture } from './testing';

const error = (text: string) => {
  try {
    importTurnsText(text, 'dump.jsonl');
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
};

describe('SkyRL column form and loss_masks', () => {
  // A GeneratorOutput of two trajectories: the second's response holds a tool observation (mask 0).
  const columns = {
    prompt_token_ids: [
      [1, 2, 3],
      [1, 2, 9],
    ],
    response_ids: [
      [4, 5],
      [6, 7, 8, 10],
    ],
    rewards: [1.0, 0.0],
    loss_masks: [
      [1, 1],
      [1, 0, 0, 1],
    ],
    stop_reasons: ['stop', 'stop'],
    rollout_metrics: { 'generate/avg_num_tokens': 3 },
    rollout_logprobs: null,
  };

  it('each row is a trajectory; a response token with mask 0 is an observation, never a target', () => {
    const { rollouts, records, unused } = importTurnsText(JSON.stringify(columns, null, 2), 'gen.json');
    expect(records).toBe(2);
    expect(rollouts.map((r) => r.value.id)).toEqual(['turns-row0', 'turns-row1']);
    expect(rollouts[1].value.events).toEqual([
      { op: 'append', role: 'prompt', tokens: [1, 2, 9] },
      { op: 'append', role: 'act', tokens: [6] },
      { op: 'append', role: 'obs', tokens: [7, 8] },
      { op: 'append', role: 'act', tokens: [10] },
    ]);
    expect(rollouts.map((r) => r.value.reward)).toEqual([1, 0]);
    // stop_reasons (a column) and rollout_metrics (the document's) are read by no role: named, with their counts.
    expect(unused).toEqual({ rollout_metrics: 1, stop_reasons: 2 });
    expect(formatFileReport({ kind: 'turns', convention: 'skyrl', records, rollouts: rollouts.length, unused }, 'gen.json')).toBe(
      'gen.json: turns (skyrl fields): 2 records -> 2 rollouts (one per trajectory)\n  fields not used: rollout_metrics (1 record), stop_reasons (2 records)',
    );
  });

  it('the fixture GeneratorOutput: three rows, each 16 targets; the 5 observation tokens inside each response are not targets', () => {
    const [first, ...rest] = parseRolloutFile(readFixture('skyrl-generator-output.json'), 'skyrl-generator-output.json');
    expect(rest).toHaveLength(2);
    const figures = deriveTree(first).figures;
    expect(figures).toMatchObject({ K: 0, targets: 16, physicalLength: 47 });
    expect(first.events.map((e) => (e.op === 'append' ? `${e.role} ${e.count}` : e.op))).toEqual(['prompt 26', 'act 9', 'obs 5', 'act 7']);
    expect([first.reward, rest[1].reward]).toEqual([1, 0]);
  });

  it('records name every field no role reads, verl extra_fields included; loss_masks counts as the mask in records too', () => {
    const text = jsonl([
      {
        prompt_ids: [1, 2],
        response_ids: [3, 4, 5],
        loss_masks: [1, 0, 1],
        env_class: 'gsm8k',
        extra_fields: { turn: 0, trajectory_id: 't', tools_kwargs: {} },
      },
    ]);
    const { rollouts, unused } = importTurnsText(text, 'd.jsonl');
    expect(rollouts[0].value.events.filter((e) => e.op === 'append' && e.role === 'act')).toHaveLength(2);
    expect(unused).toEqual({ env_class: 1, 'extra_fields.tools_kwargs': 1 });
    expect(rollouts[0].value.meta).toMatchObject({ import: { unusedFields: ['env_class', 'extra_fields.tools_kwargs'] } });
  });
});

describe('trajectory identity is exact', () => {
  const turn = (trajectory_ids: unknown, step = 0) => ({ prompt_ids: [1, 2], output_ids: [3 + step], trajectory_ids, step });

  it('1 and "1" are two trajectories: refused, naming both', () => {
    expect(error(jsonl([turn(1), turn('1')]))).toBe(
      'dump.jsonl:2: trajectory ids "1" (a string) and 1 (a number) (line 1) are two trajectories that both name rollout "1"; give them distinct ids',
    );
    // The same id twice is one trajectory.
    expect(importTurnsText(jsonl([turn(1), turn(1, 1)]), 'dump.jsonl').rollouts).toHaveLength(1);
  });

  it('SkyRL {a_b, 0} and {a, "b_0"} do not merge into a_b_0: refused, naming both', () => {
    expect(error(jsonl([turn({ instance_id: 'a_b', repetition_id: 0 }), turn({ instance_id: 'a', repetition_id: 'b_0' })]))).toBe(
      'dump.jsonl:2: trajectory ids {"instance_id":"a","repetition_id":"b_0"} and {"instance_id":"a_b","repetition_id":0} (line 1) are two trajectories that both name rollout "a_b_0"; give them distinct ids',
    );
    // {a, 0} and {a, "0"} are two identities too.
    expect(error(jsonl([turn({ instance_id: 'a', repetition_id: 0 }), turn({ instance_id: 'a', repetition_id: '0' })]))).toMatch(/both name rollout "a_0"/);
    const ok = importTurnsText(
      jsonl([turn({ instance_id: 'a', repetition_id: 0 }), turn({ instance_id: 'a', repetition_id: 1 }), turn({ instance_id: 'a', repetition_id: 0 }, 1)]),
      'd.jsonl',
    );
    expect(ok.rollouts.map((r) => r.value.id)).toEqual(['a_1', 'a_0']);
  });
});

describe('turn dumps streamed', () => {
  /** A dump of `trajectories` × 4 turns, each turn's prompt the last view plus an observation, generated lazily in small chunks. */
  function* dump(trajectories: number) {
    const PROMPT = Array.from({ length: 200 }, (_, i) => i % 10);
    for (let t = 0; t < trajectories; t += 10) {
      const lines: string[] = [];
      for (let u = t; u < Math.min(trajectories, t + 10); u++) {
        let view = PROMPT;
        for (let s = 0; s < 4; s++) {
          const output = [200 + ((u + s) % 50), 201];
          lines.push(JSON.stringify({ trajectory_id: `traj-${u}`, step: s, prompt_ids: view, response_ids: output, rewards: s === 3 ? [0, 1] : [0, 0] }));
          view = [...view, ...output, 7, 8];
        }
      }
      yield `${lines.join('\n')}\n`;
    }
  }

  it('a dump that changes between the two passes is refused, not imported in part', async () => {
    const a = jsonl([
      { prompt_ids: [1], output_ids: [2], trajectory_id: 'a' },
      { prompt_ids: [1], output_ids: [3], trajectory_id: 'b' },
    ]);
    const b = jsonl([
      { prompt_ids: [1], output_ids: [2], trajectory_id: 'a' },
      { prompt_ids: [1], output_ids: [3], trajectory_id: 'c' },
    ]);
    let opened = 0;
    const emitted: string[] = [];
    const read = async () => {
      for await (const { value } of turnsRollouts(() => [opened++ === 0 ? a : b], 'd.jsonl')) emitted.push(value.id);
    };
    await expect(read()).rejects.toThrow('d.jsonl:2: the file changed while it was being imported');
  });

  it('40,000 turns (8.5M token ids): the heap retained while reading stays under 24 MB; all-in-memory grouping holds the ids alone in 68 MB', async () => {
    // Retained memory, measured after a full collection at checkpoints, so garbage not yet collected does not count.
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = 0;
    let rollouts = 0;
    let events = 0;
    let ids = 0;
    const sample = () => {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed - before);
    };
    const started = Date.now();
    const read = turnsRollouts(() => {
      let chunks = 0;
      return (function* () {
        for (const chunk of dump(10_000)) {
          if (++chunks % 100 === 0) sample();
          ids += (chunk.match(/,/g) ?? []).length;
          yield chunk;
        }
      })();
    }, 'big.jsonl');
    let next = await read.next();
    for (; !next.done; next = await read.next()) {
      rollouts++;
      events += next.value.value.events.length;
      if (rollouts % 1000 === 0) sample();
    }
    const summary = next.value;
    expect(summary).toMatchObject({ trajectories: 10_000, records: 40_000, convention: 'skyrl', unused: {} });
    expect(rollouts).toBe(10_000);
    expect(events).toBe(10_000 * 8); // prompt, then act / obs / act / obs / act / obs / act
    // Both passes read 2 × 40,000 records holding about 8.5M ids (counted from the text): 8 bytes each to hold them.
    expect(ids / 2).toBeGreaterThan(8_400_000);
    expect(peak / 2 ** 20).toBeLessThan(24);
    console.log(`40,000 turns streamed in ${Date.now() - started} ms, peak retained heap ${(peak / 2 ** 20).toFixed(1)} MB`);
  }, 120_000);
});
