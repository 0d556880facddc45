// The playground's changes: typed pieces and hand-made edits build the worked example in words from
// nothing (the same events, ids and tree as the shipped file), and every change the format cannot
// express is refused with its reason, the rollout left as it was.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTokenizers, validateRollout, type RolloutJson } from '../../rollout';
import { deriveTree } from '../../tree';
import {
  appendPiece,
  describeEvents,
  emptyRollout,
  evictSpan,
  foldLatestObservation,
  liveIds,
  setCarriesLoss,
  slideWindow,
  summarizeSpan,
  type PlayOutcome,
} from './playground';

await loadTokenizers(['gpt2']);
const words = JSON.parse(readFileSync(new URL('../../../public/examples/worked-words.json', import.meta.url), 'utf8')) as RolloutJson;

function ok(outcome: PlayOutcome): RolloutJson {
  if (!outcome.ok) throw new Error(outcome.reason);
  return outcome.rollout;
}
const refused = (outcome: PlayOutcome) => (outcome.ok ? 'accepted' : outcome.reason);

/** The worked example in words, typed and clicked as the e2e does it. */
function buildWorked(): RolloutJson {
  let r = emptyRollout('gpt2');
  r = ok(appendPiece(r, 'prompt', 'Fix tests'));
  r = ok(appendPiece(r, 'act', 'run tests'));
  r = ok(appendPiece(r, 'obs', 'parser test fails'));
  r = ok(appendPiece(r, 'act', 'open parser'));
  r = ok(summarizeSpan(r, { from: 2, to: 6 }, 'parser broken'));
  r = ok(appendPiece(r, 'obs', 'missing comma'));
  r = ok(appendPiece(r, 'act', 'add comma'));
  expect(liveIds(r)).toEqual([0, 1, 9, 10, 7, 8, 11, 12, 13, 14]);
  r = ok(evictSpan(r, { from: 4, to: 7 }));
  return ok(appendPiece(r, 'act', 'run tests'));
}

describe('the playground', () => {
  it('builds the worked example in words from nothing: the same events (no log-probabilities) and the same tree', () => {
    const built = buildWorked();
    const expected = words.events.map((e) => (e.op === 'append' ? { op: e.op, role: e.role, tokens: e.tokens } : e));
    expect(built.events).toEqual(expected);
    const figures = deriveTree(validateRollout(built, { file: 'p' })).figures;
    expect(figures).toEqual(deriveTree(validateRollout(words, { file: 'w' })).figures);
    expect(figures).toMatchObject({ K: 2, branches: 3, physicalLength: 17, finalWalkLength: 8, packedLength: 21, divergingLeaves: 2, droppedTargets: 4 });
    expect(liveIds(built)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
  });

  it('tells the events back in words', () => {
    const gpt2 = (ids: number[]) => ids.map(String).join(',');
    const lines = describeEvents(buildWorked(), gpt2);
    expect(lines[0]).toBe('prompt (ids 0–1): 22743,5254');
    expect(lines[4]).toBe('edit 1: evicts 2–6; inserts summary (ids 9–10): 30751,5445');
    expect(lines[7]).toBe('edit 2: evicts 7–8, 11–12');
  });

  it('slides the window, folds the latest observation, moves the loss between action and observation', () => {
    let r = buildWorked();
    const slid = ok(slideWindow(r, 3));
    expect(liveIds(slid)).toEqual([14, 15, 16]);
    r = ok(appendPiece(r, 'obs', 'tests pass'));
    const folded = ok(foldLatestObservation(r, 'green'));
    expect(folded.events.at(-1)).toEqual({
      op: 'edit',
      view: [{ keep: [0, 2] }, { keep: [9, 11] }, { keep: [13, 17] }, { insert: { role: 'summary', tokens: [4077] } }],
    });
    const noLoss = ok(setCarriesLoss(r, 8, false));
    expect(validateRollout(noLoss, { file: 'p' }).targets).toHaveLength(6);
    expect(validateRollout(ok(setCarriesLoss(noLoss, 8, true)), { file: 'p' }).targets).toHaveLength(8);
  });

  it('refuses, with the reason, what the format cannot express', () => {
    const r = buildWorked();
    expect(refused(appendPiece(r, 'act', '   '))).toBe('type some text first');
    expect(refused(evictSpan(r, null))).toMatch(/^select the tokens first/);
    expect(refused(evictSpan(r, { from: 0, to: 7 }))).toMatch(/context empty/);
    expect(refused(summarizeSpan(r, { from: 1, to: 2 }, ''))).toBe('type the summary first');
    expect(refused(slideWindow(r, 8))).toBe('the context holds 8 tokens: a window of 8 would evict nothing');
    expect(refused(foldLatestObservation(r, 'x'))).toBe('no observation is left in the context to fold');
    expect(refused(setCarriesLoss(r, 0, true))).toMatch(/a prompt is the task/);
    // Bytes are taken as typed; a rollout of another tokenizer cannot take typed text.
    const bytes = ok(appendPiece(emptyRollout('byte'), 'prompt', 'ab'));
    expect(bytes.events[0]).toEqual({ op: 'append', role: 'prompt', tokens: [97, 98] });
    expect(refused(appendPiece({ ...bytes, tokenizer: 'hf:llama' }, 'act', 'c'))).toMatch(/byte or GPT-2 tokenizer/);
  });
});
