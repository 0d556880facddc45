// The command-line form of an environment: `lookup`, `lookup:hops=2,distractors=1`.
import { describe, expect, it } from 'vitest';
import { createEnv, formatEnvSpec, parseEnvSpec } from './index';

describe('parseEnvSpec / formatEnvSpec', () => {
  it('reads an id with optional knobs, and the knobs change the episodes', () => {
    expect(parseEnvSpec('lookup')).toEqual({ id: 'lookup' });
    const spec = parseEnvSpec('lookup:hops=2,distractors=1,filler=0');
    expect(spec).toEqual({ id: 'lookup', hops: 2, distractors: 1, filler: 0 });
    expect(
      createEnv(spec)
        .reset(3)
        .prompt.match(/the boss of/g),
    ).toHaveLength(2);
    expect(
      createEnv('lookup')
        .reset(3)
        .prompt.match(/the boss of/g),
    ).toHaveLength(3);
    expect(parseEnvSpec('collect:pages=2')).toEqual({ id: 'collect', pages: 2 });
  });

  it('refuses unknown ids and knobs, malformed pairs and out-of-range values, naming the choices', () => {
    expect(() => parseEnvSpec('search')).toThrow('unknown environment "search" (one of lookup, collect)');
    expect(() => parseEnvSpec('lookup:hopz=2')).toThrow('lookup has no knob "hopz" (one of hops, distractors, filler, names)');
    expect(() => parseEnvSpec('lookup:hops')).toThrow('is not NAME=INTEGER');
    expect(() => parseEnvSpec('lookup:hops=-1')).toThrow('is not NAME=INTEGER');
    expect(() => parseEnvSpec('lookup:hops=40')).toThrow('hops must be an integer in [1, 16]');
  });

  it('formats back, leaving defaults out', () => {
    expect(formatEnvSpec('lookup')).toBe('lookup');
    expect(formatEnvSpec({ id: 'lookup', hops: 3, filler: 0 })).toBe('lookup:filler=0');
    const text = 'lookup:hops=2,distractors=1,filler=0';
    expect(formatEnvSpec(parseEnvSpec(text))).toBe(text);
  });
});
