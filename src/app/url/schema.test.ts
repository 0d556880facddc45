import { describe, expect, it } from 'vitest';
import { defaultUrlState, hasUrlState, parseUrlState, serializeUrlState, URL_SCHEMA } from './schema';

describe('URL state schema', () => {
  it('writes only what differs from the defaults', () => {
    expect(serializeUrlState(defaultUrlState())).toBe('');
    expect(serializeUrlState({ ...defaultUrlState(), source: 'example:worked-example', target: 13 })).toBe('?src=example%3Aworked-example&target=13');
  });
  it('round-trips every field', () => {
    const state = { source: 'file:my set.jsonl', rollout: 'r-7', target: 0, method: 'sdcc' as const, rows: 'segment' as const, color: 'drift' as const };
    expect(parseUrlState(serializeUrlState(state))).toEqual(state);
  });
  it('reads ?target=ID and ignores what it cannot read', () => {
    expect(parseUrlState('?target=13').target).toBe(13);
    const junk = parseUrlState('?target=-1&method=bogus&rows=&src=&extra=1');
    expect(junk).toEqual(defaultUrlState());
    expect(parseUrlState('target=4x').target).toBeNull();
  });
  it('knows which query strings carry state', () => {
    expect(hasUrlState('?utm=1')).toBe(false);
    expect(hasUrlState('?rows=segment')).toBe(true);
  });
  it('declares a key, a default and help for every field', () => {
    for (const field of Object.values(URL_SCHEMA)) {
      expect(field.key).toMatch(/^[a-z]+$/);
      expect(field.help.length).toBeGreaterThan(10);
    }
  });
});
