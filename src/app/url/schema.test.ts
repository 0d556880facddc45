import { describe, expect, it } from 'vitest';
import { defaultUrlState, formatSampler, hasUrlState, parseSampler, parseUrlState, serializeUrlState, URL_SCHEMA } from './schema';

describe('URL state schema', () => {
  it('writes only what differs from the defaults', () => {
    expect(serializeUrlState(defaultUrlState())).toBe('');
    expect(serializeUrlState({ ...defaultUrlState(), source: 'example:worked-example', target: 13 })).toBe('?src=example%3Aworked-example&target=13');
  });
  it('round-trips every field', () => {
    const state = {
      source: 'file:my set.jsonl',
      rollout: 'r-7',
      target: 0,
      method: 'sdcc' as const,
      rows: 'segment' as const,
      color: 'drift' as const,
      sampler: '0.7,20,0.8',
      tour: 5,
      glossary: 'eviction-mass',
      play: 'y0sq-dGhlAQ_',
    };
    expect(parseUrlState(serializeUrlState(state))).toEqual(state);
  });
  it('reads ?target=ID and ignores what it cannot read', () => {
    expect(parseUrlState('?target=13').target).toBe(13);
    const junk = parseUrlState('?target=-1&method=bogus&rows=&src=&extra=1');
    expect(junk).toEqual(defaultUrlState());
    expect(parseUrlState('target=4x').target).toBeNull();
  });
  it('reads a sampler as temperature,top-k,top-p and writes none for temperature 1', () => {
    expect(parseSampler('0.7,20,0.8')).toEqual({ temperature: 0.7, topK: 20, topP: 0.8 });
    expect(formatSampler({ temperature: 0.7, topK: 20, topP: 0.8 })).toBe('0.7,20,0.8');
    expect(formatSampler({ temperature: 1, topK: 0, topP: 1 })).toBeNull();
    for (const bad of ['0.7,20', '-1,0,1', '1,1.5,1', '1,0,0', '1,0,2', 'hot,0,1', '1,,1']) expect(parseSampler(bad), bad).toBeNull();
    expect(parseSampler(null)).toBeNull();
  });
  it('reads ?tour=N within the tour and ?glossary=ENTRY', () => {
    expect(parseUrlState('?tour=5').tour).toBe(5);
    expect(parseUrlState('?tour=0').tour).toBeNull();
    expect(serializeUrlState({ ...defaultUrlState(), tour: 1, glossary: 'n_packed' })).toBe('?tour=1&glossary=n_packed');
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
