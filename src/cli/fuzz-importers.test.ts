// `mw import` on bad files of the newer importers (Codex, Gemini's two layouts, OpenHands, SkyRL
// columns, verl): a truncated line and a record of the wrong shape per family. Each refusal exits 2
// with exactly one stderr line naming the file and its line, nothing on stdout, and writes nothing
// (no output file, no `.partial`). One test per family, so a slow family fails alone.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../rollout/importers/testing';
import { mw, tmpDir } from './subprocess.testing';

const TMP = tmpDir('fuzz-importers');
const fixture = (name: string) => readFileSync(fixturePath(name), 'utf8');
const lines = (name: string) => fixture(name).split('\n');

async function refuses(name: string, text: string, from: string, line: RegExp) {
  const input = join(TMP, name);
  writeFileSync(input, text);
  const out = join(TMP, `${name}.out.jsonl`);
  const run = await mw(['import', input, '--from', from, '--out', out]);
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr.endsWith('\n') && run.stderr.indexOf('\n') === run.stderr.length - 1, run.stderr).toBe(true);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stderr.trimEnd()).toMatch(line);
  expect(run.stderr.startsWith(`${input}:`)).toBe(true);
  expect(existsSync(out)).toBe(false);
  expect(readdirSync(TMP).filter((f) => f.endsWith('.partial'))).toEqual([]);
}

describe('mw import refuses bad input of the newer importers with one line naming file and line', () => {
  it('codex: a cut last line; a function output that answers no call', async () => {
    const good = lines('codex-rollout-compacted.jsonl');
    await refuses('cut.jsonl', [...good.slice(0, 8), good[8].slice(0, 50)].join('\n'), 'auto', /:9: invalid JSON/);
    const orphan = JSON.stringify({ timestamp: 't', type: 'response_item', payload: { type: 'function_call_output', call_id: 'call_zz', output: 'x' } });
    await refuses('orphan.jsonl', [good[0], orphan].join('\n'), 'codex', /:2: function_call_output answers call_id "call_zz", which no earlier call has$/);
  }, 60_000);

  it('gemini: a JSON file whose tool calls are not a list; a recording that rewinds to an unknown message', async () => {
    const doc = JSON.parse(fixture('gemini-session.json'));
    doc.messages[1].toolCalls = 'search';
    await refuses('bad-calls.json', JSON.stringify(doc, null, 2), 'gemini', /:17: toolCalls must be a list, got "search"$/);
    const good = lines('gemini-session.jsonl');
    await refuses(
      'rewind.jsonl',
      [...good.slice(0, 3), JSON.stringify({ $rewindTo: 'no-such-id' })].join('\n'),
      'auto',
      /:4: \$rewindTo names message "no-such-id"/,
    );
  }, 60_000);

  it('openhands: a condensation range that names no event; a looping cause', async () => {
    const events = JSON.parse(fixture('openhands-condensation.json'));
    events[11].args = { forgotten_events_start_id: 40, forgotten_events_end_id: 45 };
    await refuses('range.json', JSON.stringify(events, null, 2), 'auto', /:226: event 11: condensation range 40\.\.45 names no earlier event$/);
    events[11].args = { forgotten_event_ids: [1] };
    events[6].cause = 6;
    await refuses('loop.json', JSON.stringify(events, null, 2), 'openhands', /:111: event 6: cause 6 names no earlier event$/);
  }, 60_000);

  it('turns: SkyRL columns whose loss_masks do not fit the response; 1 and "1" as trajectory ids', async () => {
    const columns = {
      prompt_token_ids: [
        [1, 2],
        [1, 3],
      ],
      response_ids: [[4], [5, 6]],
      loss_masks: [[1], [1]],
      rewards: [0, 1],
    };
    await refuses('columns.json', JSON.stringify(columns), 'turns', /:1: row 1: loss_masks must have one 0 or 1 per token of response_ids \(2\)$/);
    const turn = (id: unknown) => JSON.stringify({ prompt_ids: [1], output_ids: [2], trajectory_id: id });
    await refuses(
      'ids.jsonl',
      [turn(1), turn('1')].join('\n'),
      'auto',
      /:2: trajectory ids "1" \(a string\) and 1 \(a number\) \(line 1\) are two trajectories/,
    );
  }, 60_000);

  it('verl: a cut line; a score that is not a number', async () => {
    const good = lines('verl-rollout-data-12.jsonl');
    await refuses('cut-verl.jsonl', [good[0], good[1].slice(0, 40)].join('\n'), 'verl', /:2: invalid JSON/);
    const bad = JSON.parse(good[2]);
    bad.score = 'yes';
    await refuses('score.jsonl', [good[0], good[1], JSON.stringify(bad)].join('\n'), 'auto', /:3: score must be a finite number, got "yes"$/);
  }, 60_000);
});
