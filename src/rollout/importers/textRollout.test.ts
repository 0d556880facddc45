// The text-rollout builder: its id arithmetic agrees with the byte tokenizer, its edits are the
// views they claim (checked by the core validator), and a no-op edit emits nothing.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventJson, RolloutJson } from '../format';
import { byteTokenizer } from '../tokenizer';
import { validateRollout } from '../validate';
import { createTextRolloutBuilder, textPieceLength } from './textRollout';

const anyText = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 16 }).map((codes) => String.fromCharCode(...codes));

describe('textPieceLength', () => {
  it('is the number of ids the byte tokenizer makes of a text piece, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, fc.string({ unit: 'grapheme', maxLength: 16 })), (text) => {
        expect(textPieceLength(text)).toBe(byteTokenizer.encodePiece(text, 'obs').length);
      }),
      { numRuns: 500 },
    );
    expect(textPieceLength('')).toBe(1);
    expect(textPieceLength('é😀\ud800')).toBe(1 + 2 + 4 + 3);
  });
});

describe('createTextRolloutBuilder', () => {
  const rolloutOf = (events: EventJson[]): RolloutJson => ({ format: 'memorywalker.rollout/v1', id: 'b', vocab: 272, events });

  it('merges adjacent kept pieces into one keep range and assigns inserted ids after the tape', () => {
    const events: EventJson[] = [];
    const b = createTextRolloutBuilder<string>((e) => events.push(e));
    const [p, a, o] = [b.append('prompt', 'hi', 'p'), b.append('act', 'ok', 'a'), b.append('obs', 'xyz', 'o')];
    expect([p.first, a.first, o.first, b.length]).toEqual([0, 3, 6, 10]);
    expect(b.edit([{ keep: p }, { keep: a }, { insert: { role: 'obs', text: '-' }, tag: 'cleared' }])).toBe(true);
    expect(events[3]).toEqual({ op: 'edit', view: [{ keep: [0, 6] }, { insert: { role: 'obs', text: '-' } }] });
    expect(b.live.map((s) => [s.tag, s.first, s.count, s.inserted])).toEqual([
      ['p', 0, 3, false],
      ['a', 3, 3, false],
      ['cleared', 10, 2, true],
    ]);
    expect(validateRollout(rolloutOf(events), { file: 'b' }).length).toBe(12);
  });

  it('emits nothing for an edit that keeps the whole view, and refuses keeps out of live order', () => {
    const events: EventJson[] = [];
    const b = createTextRolloutBuilder<null>((e) => events.push(e));
    const x = b.append('prompt', 'x', null);
    const y = b.append('act', 'y', null);
    expect(b.edit([{ keep: x }, { keep: y }])).toBe(false);
    expect(events).toHaveLength(2);
    expect(() => b.edit([{ keep: y }, { keep: x }])).toThrow('out of live order');
    expect(b.edit([{ keep: y }])).toBe(true);
    expect(() => b.edit([{ keep: x }])).toThrow('not live');
    expect(b.edits).toBe(1);
  });
});
