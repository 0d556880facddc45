// The run controls' words and numbers: the status pill while the engine starts, the ETA between
// progress reports, and the question Reset asks before it throws a run away.
import { describe, expect, it } from 'vitest';
import { DEMO_MODEL, PAPER_CLAIM, defaultRunConfig, startingPointSettings } from '../../run/config';
import { etaNow, phaseText, resetQuestion } from './Controls';

describe('run controls', () => {
  it('say "starting…", not "ready", until the engine answers', () => {
    expect(phaseText('idle', 'probing')).toEqual({ text: 'starting…', kind: 'preparing' });
    expect(phaseText('idle', 'ready')).toEqual({ text: 'ready', kind: 'idle' });
    expect(phaseText('running', 'ready').text).toBe('running');
  });
  it('count the ETA down between reports while the run plays, and hold it while paused', () => {
    expect(etaNow(90, 25, true)).toBe(65);
    expect(etaNow(10, 25, true)).toBe(0);
    expect(etaNow(90, 25, false)).toBe(90);
    expect(etaNow(null, 5, true)).toBeNull();
  });
  it('ask before Reset ends a run that made steps, and not otherwise', () => {
    expect(resetQuestion(true, 7, 20)).toBe('End this run at step 7 of 20 and forget it? Its charts and stored checkpoints are deleted.');
    expect(resetQuestion(true, 7, 0)).toMatch(/^End this run at step 7 and/);
    expect(resetQuestion(true, 0, 20)).toBeNull();
    expect(resetQuestion(false, 0, 20)).toBeNull();
  });
  it('a starting point sets every setting: Demo model after Paper claim leaves none of its methods, steps, batch or editor', () => {
    const afterPaperClaim = { ...defaultRunConfig(), ...startingPointSettings(PAPER_CLAIM) };
    expect(afterPaperClaim).toMatchObject({ editor: 'window', steps: 20, batch: 4, methods: ['naive-compressed', 'naive-full', 'packed-4d', 'sdcc'] });
    const demo = { ...afterPaperClaim, ...startingPointSettings(DEMO_MODEL.task) };
    const { preset: _, checkpoint: __, ...defaults } = defaultRunConfig();
    expect(demo).toEqual({ ...afterPaperClaim, ...defaults, ...DEMO_MODEL.task });
    expect(demo).toMatchObject({ editor: 'compact', steps: 200, batch: 2, methods: ['naive-compressed', 'packed-4d'], lr: 3e-4, env: 'collect' });
  });
});
