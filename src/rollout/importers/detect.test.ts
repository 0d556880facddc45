// The newer formats are found by the same detection every command (stream.ts) and the app's loader
// (parse.ts, detect.ts) use: one-line and pretty-printed documents alike, with the importer's report.

import { describe, expect, it } from 'vitest';
import { loadRolloutFile } from '../parse';
import { openRolloutStream } from '../stream';
import { formatFileReport } from './report';
import { textSource } from './lines';
import { readFixture } from './testing';

const CASES: [string, string, number][] = [
  ['codex-rollout-compacted.jsonl', 'codex: 25 records read, 18 imported -> 1 rollout, 18 events (1 compaction)', 1],
  ['gemini-session.json', 'gemini: 7 records read, 5 imported -> 1 rollout, 9 events', 1],
  ['gemini-session.jsonl', 'gemini: 12 records read, 8 imported -> 1 rollout, 13 events (1 compression)', 1],
  ['openhands-condensation.json', 'openhands: 16 records read, 13 imported -> 1 rollout, 16 events (1 condensation)', 1],
  ['verl-rollout-data-12.jsonl', 'turns (verl rollout_data_dir fields): 6 records -> 6 rollouts (one per trajectory)', 6],
  ['skyrl-generator-output.json', 'turns (skyrl fields): 3 records -> 3 rollouts (one per trajectory)', 3],
];

describe('detection of the newer formats', () => {
  it.each(CASES)('%s: the loader (parse.ts) and the commands (stream.ts) read it, with its report', async (name, head, n) => {
    const text = readFixture(name);
    const loaded = await loadRolloutFile(text, name);
    expect(loaded.rollouts).toHaveLength(n);
    expect(formatFileReport(loaded.report, name).split('\n')[0]).toBe(`${name}: ${head}`);
    const stream = await openRolloutStream(textSource(text), name);
    const streamed = [];
    for await (const r of stream.rollouts()) streamed.push(r.id);
    expect(streamed.sort()).toEqual(loaded.rollouts.map((r) => r.id).sort());
  });

  it('a pretty-printed Gemini file and a one-line one are the same session', async () => {
    const pretty = readFixture('gemini-session.json');
    const oneLine = JSON.stringify(JSON.parse(pretty));
    const [a, b] = await Promise.all([loadRolloutFile(pretty, 'a.json'), loadRolloutFile(oneLine, 'b.json')]);
    expect(a.rollouts[0].tokens).toEqual(b.rollouts[0].tokens);
  });
});
