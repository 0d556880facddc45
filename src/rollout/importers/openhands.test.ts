// OpenHands trajectories (docs/importers.md): the fixture's one condensation (events 5..8 forgotten, a
// summary at offset 2) imports to one edit whose view is exactly the events not forgotten, with the
// summary where OpenHands puts it; bad ids and ranges are one-line errors naming file and line.

import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors';
import { importOpenHandsText, looksLikeOpenHands } from './openhands';
import { describeRollout, readFixture } from './testing';
import { elementLines } from './transcript';

const FIXTURE = 'openhands-condensation.json';

function refused(text: string): string {
  try {
    importOpenHandsText(text, 't.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('OpenHands trajectories', () => {
  it('a condensation is one edit whose view drops exactly the forgotten events and shows the summary at summary_offset', () => {
    const text = readFixture(FIXTURE);
    expect(looksLikeOpenHands([JSON.parse(text)])).toBe(true);
    const { rollout, report } = importOpenHandsText(text, FIXTURE);
    const { events } = describeRollout(rollout);
    expect(events.slice(0, 11)).toEqual([
      ['prompt', expect.stringMatching(/^You are OpenHands agent/)],
      ['prompt', "The date parser in /workspace/dates.py rejects '2024-02-29'. Fix it."],
      ['obs', 'Added workspace context'],
      ['act', 'I will read the parser first.'],
      ['act', expect.stringMatching(/^\{"action":"run","args":\{"command":"cat \/workspace\/dates.py"/)],
      ['obs', expect.stringMatching(/^DAYS = /)],
      ['act', 'Reproduce the failure.'],
      ['act', expect.stringMatching(/^\{"action":"run"/)],
      ['obs', expect.stringMatching(/ValueError: 2024-02-29$/)],
      ['act', expect.stringMatching(/^February is fixed at 28 days/)],
      ['obs', 'Your thought has been logged.'],
    ]);
    // Events 5..8 (appends e3..e8) are forgotten; 0, 1, the recall observation (4) and the think pair (9, 10) stay.
    expect(events[11]).toEqual({ edit: ['e0', 'e1', { insert: 'summary', text: expect.stringMatching(/^Earlier: read/) }, 'e2', 'e9', 'e10'] });
    expect(events.filter((e) => !Array.isArray(e))).toHaveLength(1);
    expect(events).toHaveLength(16);
    expect(report).toMatchObject({ format: 'openhands', records: 16, edits: { condensation: 1 } });
    expect(report.skipped.map((s) => `${s.count} ${s.reason} [${s.lines}]`)).toEqual([
      '1 not model context (action recall) [41]',
      '2 not model context (observation agent_state_changed) [53,310]',
    ]);
  });

  it('a condensation by id list, a later one replacing the summary, and one without a summary keeping it', () => {
    const msg = (id: number, source: string, content: string) => ({ id, source, action: 'message', args: { content } });
    const obs = (id: number, cause: number, content: string) => ({ id, source: 'agent', cause, observation: 'run', content });
    const condense = (id: number, args: object) => ({ id, source: 'agent', action: 'condensation', args });
    const trajectory = [
      msg(0, 'user', 'task'),
      msg(1, 'agent', 'a'),
      obs(2, 1, 'o2'),
      msg(3, 'agent', 'b'),
      condense(4, { forgotten_event_ids: [1, 2], summary: 'S1', summary_offset: 1 }),
      msg(5, 'agent', 'c'),
      condense(6, { forgotten_event_ids: [3], summary: 'S2', summary_offset: 1 }),
      condense(7, { forgotten_event_ids: [5] }),
    ];
    const { events } = describeRollout(importOpenHandsText(JSON.stringify(trajectory), 't.json').rollout);
    expect(events).toEqual([
      ['prompt', 'task'],
      ['act', 'a'],
      ['obs', 'o2'],
      ['act', 'b'],
      { edit: ['e0', { insert: 'summary', text: 'S1' }, 'e3'] },
      ['act', 'c'],
      { edit: ['e0', { insert: 'summary', text: 'S2' }, 'e5'] },
      { edit: ['e0', 'e6.0'] },
    ]);
  });

  it('refuses unknown, repeated and looping ids and a range that names no event, naming the line', () => {
    const lines = (events: object[]) => '[\n' + events.map((e) => JSON.stringify(e)).join(',\n') + '\n]\n';
    const user = { id: 0, source: 'user', action: 'message', args: { content: 'go' } };
    expect(refused(lines([user, { id: 1, source: 'agent', action: 'condensation', args: { forgotten_events_start_id: 7, forgotten_events_end_id: 9 } }]))).toBe(
      't.json:3: event 1: condensation range 7..9 names no earlier event',
    );
    expect(refused(lines([user, { id: 1, source: 'agent', action: 'condensation', args: { forgotten_event_ids: [0, 4] } }]))).toBe(
      't.json:3: event 1: condensation forgets event 4, which is not an earlier event of the trajectory',
    );
    expect(refused(lines([user, { id: 1, source: 'agent', cause: 1, observation: 'run', content: 'x' }]))).toBe(
      't.json:3: event 1: cause 1 names no earlier event',
    );
    expect(refused(lines([user, { ...user }]))).toBe('t.json:3: event 1: id 0 appears twice');
    expect(refused(lines([user, { id: 1, source: 'agent', observation: 'run', content: 5 }]))).toBe(
      't.json:3: event 1: observation content must be a string, got 5',
    );
    expect(refused('[\n' + JSON.stringify(user) + ',\n{"id": 1, "sour')).toMatch(/^t\.json:3: invalid JSON/);
  });

  it('finds the line of every array element, brackets and quotes inside strings included', () => {
    expect(elementLines('[\n {"a": "[x]\\"]"},\n 2,\n\n "s"\n]')).toEqual([2, 3, 5]);
    expect(elementLines('{"x": [1], "messages": [\n {"t": "["},\n {}\n], "y": [3]}', 'messages')).toEqual([2, 3]);
  });
});
