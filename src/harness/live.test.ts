import { describe, expect, it } from 'vitest';
import { byteTokenizer } from '../rollout/tokenizer';
import { actionTokens, obsTokens, promptTokens, readView, summaryTokens } from './framing';
import { applyPlan, createBlock, createLiveView, splitTurns, viewIds } from './live';

describe('framing', () => {
  it('frames harness pieces with their marker and the <act> cue, actions with their stop token', () => {
    expect(byteTokenizer.decode(promptTokens('Q?'))).toBe('<bos><prompt>Q?<act>');
    expect(byteTokenizer.decode(obsTokens('o'))).toBe('<obs>o<act>');
    expect(byteTokenizer.decode(summaryTokens('s'))).toBe('<summary>s<act>');
    expect(summaryTokens([1, 2])).toEqual([261, 1, 2, 260]);
    expect(actionTokens('lookup a', false).at(-1)).toBe(10);
    expect(actionTokens('answer a', true).at(-1)).toBe(257);
  });

  it('reads a view back as blocks; the cue at the end opens no block', () => {
    const view = [...promptTokens('Q?'), ...actionTokens('lookup a', false), ...obsTokens('x'), ...summaryTokens('s'), ...actionTokens('b', false), 260];
    expect(readView(view)).toEqual([
      { role: 'prompt', text: 'Q?' },
      { role: 'act', text: 'lookup a' },
      { role: 'obs', text: 'x' },
      { role: 'summary', text: 's' },
      { role: 'act', text: 'b' },
    ]);
    // An action of just its stop token is an action with empty text.
    expect(readView([...promptTokens('Q?'), 10, ...obsTokens('x')]).map((b) => b.role)).toEqual(['prompt', 'act', 'obs']);
    expect(readView(promptTokens('Q?'))).toEqual([{ role: 'prompt', text: 'Q?' }]);
  });
});

describe('applyPlan', () => {
  // ids: prompt 0..3, act 4..5, obs 6..8, act 9..10, obs 11..13
  const P = createBlock('prompt', 0, [256, 258, 81, 260]);
  const A0 = createBlock('act', 4, [97, 10]);
  const O0 = createBlock('obs', 6, [259, 120, 260], ['n0']);
  const A1 = createBlock('act', 9, [98, 10]);
  const O1 = createBlock('obs', 11, [259, 121, 260], ['n1']);
  const view = createLiveView([P, A0, O0, A1, O1]);

  it('splits turns after the head', () => {
    expect(splitTurns(view)).toEqual({
      head: [P],
      turns: [
        [A0, O0],
        [A1, O1],
      ],
    });
    expect(P.cue && O0.cue && !A0.cue).toBe(true);
  });

  it('merges kept parts adjacent in view and id, creates inserts from nextId, and reports the first change', () => {
    const out = applyPlan(view, [{ keep: P, to: 3 }, { insert: { role: 'summary', tokens: [261, 115, 260], notes: ['n0'] } }, { keep: A1 }, { keep: O1 }], 14);
    expect(out.event).toEqual({ op: 'edit', view: [{ keep: [0, 3] }, { insert: { role: 'summary', tokens: [261, 115, 260] } }, { keep: [9, 14] }] });
    expect(viewIds(out.view)).toEqual([0, 1, 2, 14, 15, 16, 9, 10, 11, 12, 13]);
    expect(out.firstChanged).toBe(3);
    expect(out.nextId).toBe(17);
    expect(out.view.length).toBe(11);
    expect(out.view.blocks[1]).toMatchObject({ role: 'summary', first: 14, cue: true, notes: ['n0'] });
    expect(out.view.blocks[0]).toMatchObject({ role: 'prompt', cue: false });
    // A window: the prompt and the last turn, no insert.
    const window = applyPlan(view, [{ keep: P }, { keep: A1 }, { keep: O1 }], 14);
    expect(window.event.view).toEqual([{ keep: [0, 4] }, { keep: [9, 14] }]);
    expect(window.firstChanged).toBe(4);
    expect(window.nextId).toBe(14);
  });

  it('refuses plans that keep dead blocks, go out of order, keep twice, or change nothing', () => {
    const dead = createBlock('act', 40, [97, 10]);
    expect(() => applyPlan(view, [{ keep: dead }], 14)).toThrow('not live');
    expect(() => applyPlan(view, [{ keep: P }, { keep: A1 }, { keep: A0 }], 14)).toThrow('out of live order or twice');
    expect(() =>
      applyPlan(
        view,
        [
          { keep: P, to: 2 },
          { keep: P, from: 1 },
        ],
        14,
      ),
    ).toThrow('out of live order or twice');
    expect(() => applyPlan(view, [{ keep: P, from: 2, to: 2 }], 14)).toThrow('keeps [2, 2) of a 4-token prompt block');
    expect(() => applyPlan(view, [{ keep: P }, { keep: A0 }, { keep: O0 }, { keep: A1 }, { keep: O1 }], 14)).toThrow('must change the live view');
    expect(() => createBlock('obs', 0, [])).toThrow('empty obs block');
  });
});
