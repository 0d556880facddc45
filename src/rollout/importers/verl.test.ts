// verl's rollout_data_dir dump (docs/importers.md): one rollout per line, the decoded prompt and
// response tokenized with the import's tokenizer, the score as reward, samples of one prompt grouped;
// reward extra infos named in the report; bad lines are one-line errors naming file and line.

import { describe, expect, it } from 'vitest';
import { loadTokenizer } from '../tokenizer';
import { validateRollout } from '../validate';
import { formatFileReport } from './report';
import { jsonl, readFixture } from './testing';
import { importVerlText, looksLikeVerlDump, verlImporter } from './verl';
import { sampleRecords } from './lines';

const FIXTURE = 'verl-rollout-data-12.jsonl';

describe("verl's rollout_data_dir dump", () => {
  it('one rollout per sample: prompt text, response text as targets, score as reward, grouped by prompt', () => {
    const text = readFixture(FIXTURE);
    expect(looksLikeVerlDump(sampleRecords(text))).toBe(true);
    const { rollouts, records, unused } = importVerlText(text, FIXTURE);
    expect(records).toBe(6);
    expect(rollouts.map((r) => [r.value.id, r.value.group, r.value.reward])).toEqual([
      ['step12-line1', 'step12-prompt0', 1],
      ['step12-line2', 'step12-prompt0', 1],
      ['step12-line3', 'step12-prompt0', 0],
      ['step12-line4', 'step12-prompt1', 1],
      ['step12-line5', 'step12-prompt1', 1],
      ['step12-line6', 'step12-prompt1', 0],
    ]);
    const first = validateRollout(rollouts[0].value, { file: FIXTURE, line: 1 });
    // byte tokenizer: <prompt> and the input's 210 bytes, then <act> and the output's 88 bytes (its targets).
    expect(first.events.map((e) => (e.op === 'append' ? [e.role, e.count] : e.op))).toEqual([
      ['prompt', 1 + 210],
      ['act', 1 + 88],
    ]);
    expect(rollouts[0].value.meta).toMatchObject({ source: 'verl', step: 12, gts: '75', fields: { acc: true, pred: '75' } });
    expect(unused).toEqual({ acc: 6, pred: 6 });
    const { report } = verlImporter.readText(text, FIXTURE);
    expect(formatFileReport(report, FIXTURE)).toBe(
      `${FIXTURE}: turns (verl rollout_data_dir fields): 6 records -> 6 rollouts (one per trajectory)\n  fields not used: acc (6 records), pred (6 records)`,
    );
  });

  it('--tokenizer gpt2 tokenizes the text as GPT-2 word pieces', async () => {
    await loadTokenizer('gpt2');
    const { rollouts } = importVerlText(readFixture(FIXTURE), FIXTURE, { tokenizer: 'gpt2' });
    const rollout = validateRollout(rollouts[0].value, { file: FIXTURE, line: 1 });
    expect([rollout.tokenizer, rollout.vocab]).toEqual(['gpt2', 50257]);
    expect(rollout.tokens.length).toBeLessThan(120);
  });

  it('uid groups exactly: 7 and "7" are refused as two groups with one name', () => {
    const row = (uid: unknown) => ({ input: 'q', output: 'a', score: 0, step: 1, uid });
    expect(() => importVerlText(jsonl([row(7), row('7')]), 'd.jsonl')).toThrow(
      'd.jsonl:2: uid "7" and 7 (line 1) are two groups that both name group "7"; give them distinct uids',
    );
    expect(importVerlText(jsonl([row(7), row(7)]), 'd.jsonl').rollouts.map((r) => r.value.group)).toEqual(['7', '7']);
  });

  it('refuses bad lines naming the file and line', () => {
    const good = readFixture(FIXTURE).split('\n');
    const refused = (text: string) => {
      try {
        importVerlText(text, 'd.jsonl');
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(refused([good[0], good[1].slice(0, 30)].join('\n'))).toMatch(/^d\.jsonl:2: invalid JSON/);
    expect(refused(jsonl([{ input: 'q', output: 3, score: 0, step: 1 }]))).toBe('d.jsonl:1: output must be a string, got 3');
    expect(refused(jsonl([{ input: 'q', output: 'a', score: 'high', step: 1 }]))).toBe('d.jsonl:1: score must be a finite number, got "high"');
    expect(refused(jsonl([{ input: 'q', output: 'a', score: 1, step: 1.5 }]))).toBe('d.jsonl:1: step must be an integer, got 1.5');
  });
});
