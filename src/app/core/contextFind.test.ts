// Find over a rollout and the panes' jumps: matches as id ranges (checked against the ids the
// importer's text pieces get), the target that shows a place, and next / previous edit,
// observation, diverging target and match on the worked example and the agent session.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../../rollout';
import { importAgentSessionText } from '../../rollout/importers/agentSession';
import { findMatches, inBranch, jumpsOf, matchAt, readerOf, stepJump, stepMatch, targetShowing } from './contextFind';
import { buildViewData } from './viewData';

const worked = buildViewData(
  parseRolloutFile(readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8'), 'worked-example.json')[0],
);
const SESSION_FILE = 'agent-session-two-compactions.jsonl';
const sessionText = readFileSync(new URL(`../../rollout/importers/fixtures/${SESSION_FILE}`, import.meta.url), 'utf8');
const session = buildViewData(parseRolloutFile(sessionText, SESSION_FILE)[0]);

/** Every occurrence of `word` (lowercase) in the imported events' text, as the ids its bytes get: [first, end) per match. */
function oracle(word: string): number[] {
  const { rollout } = importAgentSessionText(sessionText, { file: SESSION_FILE });
  const utf8 = new TextEncoder();
  const out: number[] = [];
  let next = 0;
  const piece = (text: string) => {
    // A text piece is its role marker, then its UTF-8 bytes.
    const start = next + 1;
    const lower = text.toLowerCase();
    for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + word.length)) {
      const before = utf8.encode(text.slice(0, at)).length;
      out.push(start + before, start + before + utf8.encode(text.slice(at, at + word.length)).length);
    }
    next = start + utf8.encode(text).length;
  };
  for (const e of rollout.events) {
    if (e.op === 'append') piece(e.text!);
    else for (const p of e.view) if ('insert' in p) piece(p.insert.text!);
  }
  return out;
}

describe('find', () => {
  it('finds every occurrence of a word in the agent session, as the id ranges of its bytes', () => {
    const m = findMatches(session, 'passed');
    expect(m.count).toBe(5);
    expect(Array.from(m.ranges)).toEqual(oracle('passed'));
    expect(Array.from(m.ranges)).toEqual([594, 600, 1336, 1342, 1521, 1527, 1542, 1548, 1558, 1564]);
    for (const w of ['math.ts', 'subtract()', 'npm test', 'the']) expect(Array.from(findMatches(session, w).ranges), w).toEqual(oracle(w));
  });

  it('ignores case, never matches across messages or special tokens, and finds nothing for an empty query', () => {
    expect(findMatches(session, 'PASSED').ranges).toEqual(findMatches(session, 'passed').ranges);
    // "…it takes." ends one message and "<act>{" starts the next.
    expect(findMatches(session, 'takes.{').count).toBe(0);
    expect(findMatches(session, 'act').count).toBe(oracle('act').length / 2);
    expect(findMatches(session, '').count).toBe(0);
  });

  it('locates the match that holds an id', () => {
    const m = findMatches(session, 'passed');
    expect([matchAt(m, 594), matchAt(m, 599), matchAt(m, 600), matchAt(m, 1560), matchAt(m, 0)]).toEqual([0, 0, -1, 4, -1]);
  });

  it('steps through matches, wrapping, selecting the target whose live prefix shows each', () => {
    const m = findMatches(session, 'passed');
    const first = stepMatch(session, m, -1, 1)!;
    expect(first.index).toBe(0);
    // "add: 1 passed" (ids 594–599) ends the first test run's output; "The test passes now." follows
    // (its marker is id 600): its first token, 601, is the first target that reads the match.
    expect(first.jump).toEqual({ target: 601, first: 594, end: 600 });
    expect(session.rollout.tokens[600]).toBe(260);
    expect(session.tree.livePrefix(first.jump.target)).toContain(594);
    expect(stepMatch(session, m, 4, 1)!.index).toBe(0);
    expect(stepMatch(session, m, 0, -1)!.index).toBe(4);
    // The suite's output (1521…) is read by the first diverging leaf, which stays selected.
    expect(stepMatch(session, m, 1, 1, 1587)!.jump).toEqual({ target: 1587, first: 1521, end: 1527 });
  });
});

describe('the target that shows a place', () => {
  it('is the first later target whose branch holds it (worked example)', () => {
    expect([readerOf(worked, 0), readerOf(worked, 4), readerOf(worked, 9), readerOf(worked, 11), readerOf(worked, 13), readerOf(worked, 16)]).toEqual([
      2, 7, 13, 13, 13, 16,
    ]);
    expect([inBranch(worked, 4, 0), inBranch(worked, 4, 1), inBranch(worked, 9, 1), inBranch(worked, 9, 2), inBranch(worked, 11, 2)]).toEqual([
      true,
      false,
      true,
      true,
      false,
    ]);
  });

  it('keeps the selected target when its live prefix holds the place', () => {
    expect(targetShowing(worked, 14, 11)).toBe(14);
    expect(targetShowing(worked, 15, 11)).toBe(13);
    expect(targetShowing(worked, null, 4)).toBe(7);
  });
});

describe('jumps', () => {
  it('lists edits (their first target, and what they inserted), observations (the target that reads each) and diverging leaves', () => {
    expect(jumpsOf(worked, 'edit')).toEqual([
      { target: 13, first: 9, end: 11 },
      { target: 15, first: 7, end: 8 },
    ]);
    expect(jumpsOf(worked, 'obs')).toEqual([
      { target: 7, first: 4, end: 7 },
      { target: 13, first: 11, end: 13 },
    ]);
    expect(jumpsOf(worked, 'diverging').map((j) => j.target)).toEqual([13, 14]);
    expect(jumpsOf(session, 'edit')).toEqual([
      { target: 892, first: 621, end: 857 },
      { target: 1400, first: 1140, end: 1343 },
      { target: 1704, first: 1623, end: 1657 },
    ]);
    expect(jumpsOf(session, 'obs')).toHaveLength(5);
    expect(jumpsOf(session, 'diverging')).toHaveLength(36);
  });

  it('steps from the selected target: next after it, previous before it, none past the ends', () => {
    const edits = jumpsOf(worked, 'edit');
    expect(stepJump(edits, 2, 1)!.target).toBe(13);
    expect(stepJump(edits, 13, 1)!.target).toBe(15);
    expect(stepJump(edits, 15, 1)).toBeNull();
    expect(stepJump(edits, 15, -1)!.target).toBe(13);
    expect(stepJump(edits, 13, -1)).toBeNull();
    expect(stepJump(edits, null, 1)!.target).toBe(13);
    const diverging = jumpsOf(session, 'diverging');
    expect(stepJump(diverging, 1587, 1)!.target).toBe(1588);
  });
});
