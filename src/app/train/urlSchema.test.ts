import { describe, expect, it } from 'vitest';
import { defaultRunConfig, type RunConfig } from '../../run/config';
import { parseRunFragment, serializeRunFragment } from './urlSchema';

describe('run URL fragment', () => {
  it('round-trips every field, writing only what differs from the preset defaults', () => {
    const config: RunConfig = {
      ...defaultRunConfig('default'),
      checkpoint: 'warm start.safetensors',
      env: 'collect',
      difficulty: 4,
      editor: 'stack',
      budget: 123,
      methods: ['sdcc', 'naive-full', 'logit-tree'],
      lambda: 0.25,
      objective: 'rl',
      lr: 0.0005,
      batch: 3,
      group: 4,
      seed: 4000000000,
      steps: 0,
      checkpointEvery: 7,
    };
    const fragment = serializeRunFragment(config);
    expect(fragment).toContain('methods=naive-full,logit-tree,sdcc');
    expect(parseRunFragment(fragment)).toEqual({ ...config, methods: ['naive-full', 'logit-tree', 'sdcc'] });
    expect(serializeRunFragment(defaultRunConfig('tiny'))).toBe('#preset=tiny&seed=1');
  });

  it('ignores unreadable values and unknown methods; no run fields means no config', () => {
    const parsed = parseRunFragment('#preset=tiny&batch=-3&lr=abc&methods=packed-4d,bogus,packed-4d&editor=window')!;
    expect(parsed.batch).toBe(defaultRunConfig('tiny').batch);
    expect(parsed.lr).toBe(defaultRunConfig('tiny').lr);
    expect(parsed.methods).toEqual(['packed-4d']);
    expect(parsed.editor).toBe('window');
    expect(parseRunFragment('')).toBeNull();
    expect(parseRunFragment('#section-2')).toBeNull();
  });
});
