// The tour's steps as data: each names an example that exists, a target of it, glossary entries that
// exist, two or three sentences; the numbers the captions cite are the worked example's, and the
// words they quote are the words at those ids in the worked example in words (the tour's rollout).
import { readFileSync } from 'node:fs';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { loadTokenizers, parseRolloutFile } from '../../rollout';
import { methodViews } from './methodViews';
import { buildViewData } from './viewData';
import { anchorLinks } from '../glossary/glossary';
import { GLOSSARY } from '../glossary/terms';
import { EXAMPLES } from '../load/examples';
import { firstGpuStep, TOUR_EXAMPLE, TOUR_STEPS } from './tourSteps';
import type { DriftData } from './drift';

const file = (name: string) => readFileSync(new URL(`../../../public/examples/${name}`, import.meta.url), 'utf8');
await loadTokenizers(['gpt2']);
const worked = buildViewData(parseRolloutFile(file('worked-words.json'), 'worked-words.json')[0]);
const numbers = buildViewData(parseRolloutFile(file('worked-example.json'), 'worked-example.json')[0]);
/** The words at ids, as the page's context panes read them. */
const words = (ids: number[]) => worked.tokenizer!.decode(ids.map((id) => worked.rollout.tokens[id])).trim();

function sentences(caption: string): number {
  const plain = caption.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1').replace(/\b(?:e\.g|i\.e)\./g, '');
  return plain.split(/(?<=[.!?])\s+(?=[A-Z[])/).length;
}

describe('tour steps', () => {
  it('are about ten, the story of the issue, the GPU steps last', () => {
    expect(TOUR_STEPS).toHaveLength(10);
    expect(firstGpuStep()).toBe(9);
    expect(TOUR_STEPS.slice(0, 8).every((s) => !s.needs)).toBe(true);
    expect(TOUR_STEPS.map((s) => s.setup.method)).toEqual([
      'naive-compressed',
      'naive-compressed',
      'naive-compressed',
      'logit-tree',
      'naive-compressed',
      'naive-full',
      'packed-4d',
      'sdcc',
      'naive-compressed',
      'packed-4d',
    ]);
  });
  it('each show a built-in example and a target it has, with two or three sentences whose links are glossary entries', () => {
    for (const [i, step] of TOUR_STEPS.entries()) {
      expect(
        EXAMPLES.some((e) => e.name === step.setup.example),
        `step ${i + 1}: ${step.setup.example}`,
      ).toBe(true);
      if (step.setup.example === TOUR_EXAMPLE && step.setup.target !== null) expect(worked.rollout.isTarget[step.setup.target], `step ${i + 1}`).toBe(1);
      const n = sentences(step.caption);
      expect(n, `step ${i + 1}: ${step.caption}`).toBeGreaterThanOrEqual(2);
      expect(n, `step ${i + 1}: ${step.caption}`).toBeLessThanOrEqual(3);
      const links = anchorLinks(Lexer.lexInline(step.caption) as Token[]);
      expect(links.length, `step ${i + 1} links no term`).toBeGreaterThan(0);
      for (const id of links) expect(GLOSSARY.entries.has(id), `step ${i + 1}: #${id}`).toBe(true);
      expect(step.highlight.length).toBeGreaterThan(0);
      // Markdown the caption renderer knows: text, links, nothing raw.
      const kinds = new Set((Lexer.lexInline(step.caption) as Tokens.Generic[]).map((t) => t.type));
      for (const kind of kinds) expect(['text', 'link', 'escape', 'strong', 'em', 'codespan']).toContain(kind);
    }
  });
  it('run on the worked example in words: the hand-made example’s tree, ids, roles, segments and log-probabilities, in GPT-2 words', () => {
    expect(TOUR_EXAMPLE).toBe('worked-words');
    expect(worked.rollout.tokenizer).toBe('gpt2');
    expect(worked.tree.figures).toEqual(numbers.tree.figures);
    expect(Array.from(worked.tree.packedOrder)).toEqual(Array.from(numbers.tree.packedOrder));
    expect(Array.from(worked.rollout.roles)).toEqual(Array.from(numbers.rollout.roles));
    expect(Array.from(worked.rollout.segments)).toEqual(Array.from(numbers.rollout.segments));
    expect(Array.from(worked.rollout.logprobs)).toEqual(Array.from(numbers.rollout.logprobs));
    // Every id is one whole word: the story reads aloud cell by cell.
    for (let id = 0; id < worked.rollout.length; id++) expect(words([id]), `id ${id}`).toMatch(/^[A-Za-z]+$/);
    expect(words([0, 1])).toBe('Fix tests');
    expect(words([2, 3, 4, 5, 6])).toBe('run tests parser test fails');
    expect(words([9, 10])).toBe('parser broken');
    expect(words([13, 14])).toBe('add comma');
    expect(words(Array.from(worked.tree.livePrefix(13)))).toBe('Fix tests parser broken open parser missing comma');
    expect(words(Array.from(worked.tree.finalWalk))).toBe('Fix tests parser broken add comma run tests');
    // The quotes of the captions are those words.
    const captions = TOUR_STEPS.slice(0, 8)
      .map((s) => s.caption)
      .join(' ');
    for (const quoted of ['Fix tests', 'run tests', 'parser test fails', 'parser broken', 'add comma', 'open parser', 'missing comma']) {
      expect(captions).toContain(`“${quoted}”`);
    }
    expect(TOUR_STEPS[3].caption).toContain(`“${words(Array.from(worked.tree.livePrefix(13)))}”`);
    expect(words([13])).toBe('add');
    expect(TOUR_STEPS[1].caption).toContain('target 13, the word “add”');
    expect(words([15, 16])).toBe('run tests');
    expect(words([7, 8, 11, 12])).toBe('open parser missing comma');
  });
  it("cite the worked example's own numbers", () => {
    const { figures } = worked.tree;
    expect(figures.K).toBe(2); // step 3: K = 2 edits, 3 branches
    expect(figures.branches).toBe(3);
    expect(figures.divergingLeaves).toBe(2); // step 8: D = 2, targets 13 and 14
    expect(Array.from(worked.tree.divergingLeaves)).toEqual([13, 14]);
    // Step 1: edit 1 evicts ids 2–6 and inserts the summary 9–10.
    expect(Array.from(worked.tree.edits[0].evicted)).toEqual([2, 3, 4, 5, 6]);
    expect(worked.tree.edits[0].inserted).toEqual({ first: 9, count: 2 });
    // Step 4: target 13's live prefix; step 5: its evidence 7 8 11 12, evicted by edit 2 (eviction mass 4).
    expect(Array.from(worked.tree.livePrefix(13))).toEqual([0, 1, 9, 10, 7, 8, 11, 12]);
    expect(Array.from(worked.tree.edits[1].evicted)).toEqual([7, 8, 11, 12]);
    expect(worked.tree.evictionMass[13]).toBe(4);
    // Steps 5 and 8: the final walk drops targets 2, 3, 7, 8 (no final prefix: neither Naive-Compressed nor SDCC trains them);
    // 15 and 16 keep their live prefix, so only 13 and 14 need a teacher.
    const dropped = Array.from(worked.rollout.targets).filter((id) => worked.tree.dropped[id]);
    expect(dropped).toEqual([2, 3, 7, 8]);
    for (const id of dropped) expect(TOUR_STEPS[4].caption + TOUR_STEPS[7].caption).toContain(`${id}`);
    expect(TOUR_STEPS[4].caption).toContain('2, 3, 7 and 8');
    expect(TOUR_STEPS[7].caption).toContain('dropped targets 2, 3, 7 and 8');
    for (const id of [15, 16]) expect(Array.from(worked.tree.livePrefix(id))).toEqual(Array.from(worked.tree.finalPrefix(id)!));
    // Step 6: Naive-Full shows target 15 nine ids the policy no longer had.
    expect(methodViews(worked, 15).find((v) => v.method === 'naive-full')!.stale).toBe(9);
    // Step 7's readout: N_packed 21 over N_final 8.
    expect(TOUR_STEPS[6].readout!(worked, null)).toBe('N_packed = 21, N_final = 8: one forward over 2.63× the final walk, instead of 3 forwards.');
    expect(TOUR_STEPS[0].readout!(worked, null)).toBe('This rollout: 2 edits, 17 tokens created, 8 of them written by the policy.');
    // Step 9 prints the figure its caption talks about: a round-off μ is shown with its digits and read "at the floor".
    const mu = { 'naive-compressed': -2.2175611074154196, 'naive-full': 7.1e-7, 'logit-tree': 0, 'packed-4d': 3.5e-7 } as const;
    const drift = {
      methods: Object.entries(mu).map(([method, m]) => ({ method, error: null, vsLive: { n: 47, logdiff: Math.abs(m), mu: m, negativeShare: 0 } })),
    } as unknown as DriftData;
    const nine = TOUR_STEPS[8].readout!(worked, drift)!;
    expect(nine).toContain('Naive-Compressed −2.22 (below zero)');
    expect(nine).toContain('Naive-Full +7.1e-7 (at the floor)');
    expect(nine).toContain('LogitTree 0 (at the floor)');
    expect(nine).toContain('Packed 4D mask +3.5e-7 (at the floor)');
    expect(nine).not.toContain('0.0000');
    expect(nine).toMatch(/Naive-Compressed \(μ −2\.22, 2\.2e6 floors\) moves .*; Naive-Full stays at the floor/);
    expect(TOUR_STEPS[8].caption).toMatch(/at the floor where it changes nothing measurable/);
  });
});
