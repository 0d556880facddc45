// The import report as the core's file reader gives it (what the app shows beside the summary):
// the same lines `mw import` prints, for a log importer, a turn dump and a file read as it is.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readRolloutFile } from '../parse';
import { formatFileReport } from './report';
import { readFixture } from './testing';

const FILE = 'chat.jsonl';

describe('formatFileReport', () => {
  it('names every skipped line of a chat log with its reason, as mw import prints them', () => {
    const { rollouts, report } = readRolloutFile(readFixture(FILE), FILE);
    expect(rollouts).toHaveLength(3);
    expect(formatFileReport(report, FILE).split('\n')).toEqual([
      'chat.jsonl: chat: 6 records read, 3 imported -> 3 rollouts, 13 events',
      '  skipped 1: malformed (not JSON) [line 4]',
      '  skipped 1: messages not understood [line 5]',
      '  skipped 1: not a chat record (no "messages" array) [line 7]',
      '  chat.jsonl:4: not JSON (Unterminated string in JSON at position 46)',
      '  chat.jsonl:5: messages[0]: role "narrator" is not one of system, developer, user, assistant, tool, function, ipython',
      '  chat.jsonl:7: not a chat record (an object with a "messages" array)',
    ]);
  });

  it('says how many rollouts a file read as it is holds, and how a turn dump was grouped', () => {
    const worked = readFileSync(fileURLToPath(new URL('../../../fixtures/worked-example.json', import.meta.url)), 'utf8');
    expect(formatFileReport(readRolloutFile(worked, 'w.json').report, 'w.json')).toBe('w.json: read by the core: 1 rollout');
    const turns = [
      '{"prompt_ids":[1,2],"output_ids":[3],"output_log_probs":[-0.5]}',
      '{"prompt_ids":[1,2,3,4],"output_ids":[5,6],"output_log_probs":[-0.1,-0.2]}',
    ].join('\n');
    const { report } = readRolloutFile(turns, 't.jsonl');
    expect(report.kind).toBe('turns');
    expect(formatFileReport(report, 't.jsonl')).toMatch(/^t\.jsonl: turns \(trl\/slime fields\): 2 records -> \d+ rollouts? \(one per trajectory\)$/);
  });
});
