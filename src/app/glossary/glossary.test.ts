// The app's glossary is docs/glossary.md: every term the issue names is an entry, the doc's own
// links resolve to entries, the label forms and every <Term id> in the app's sources name entries,
// and labels are cut at the forms they use.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { anchorLinks, anchorOf, parseGlossary, plainText, repositoryPath } from './glossary';
import { GLOSSARY, splitTerms, TERM_FORMS } from './terms';

const APP = new URL('..', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('the glossary parsed from docs/glossary.md', () => {
  it('has an entry, with a definition, for every term of the issue and an About with the paper', () => {
    const wanted = [
      'conditioning-tree',
      'live-view',
      'edit',
      'junction',
      'branch',
      'final-walk',
      'physical-tape',
      'n_packed',
      'n_final',
      'eviction-mass',
      'diverging-leaf',
      'd',
      'logdiff',
      'signed-drift',
      'expected-drift',
      'conditioning-drift',
      'kl_sdcc',
      'about',
    ];
    for (const id of wanted) {
      const entry = GLOSSARY.entries.get(id);
      expect(entry, id).toBeDefined();
      expect(entry!.plain.length, id).toBeGreaterThan(40);
    }
    expect(GLOSSARY.entries.get('signed-drift')!.plain).toMatch(/Negative means the method scores the tokens lower/);
    const about = GLOSSARY.entries.get('about')!;
    expect(about.plain).toContain('MemoryWalker: Stop Training Agents on Contexts They Never Saw');
    expect(about.plain).toContain('2609.00865');
    expect(about.body.some((b) => b.type === 'table')).toBe(true);
    expect(GLOSSARY.sections.map((s) => s.title)).toEqual(['Structure', 'Metrics', 'Methods and their failures', 'About']);
  });
  it("resolves every #anchor the doc links to (the doc's anchors are the app's ids)", () => {
    const all = [...GLOSSARY.intro, ...GLOSSARY.sections.flatMap((s) => [...s.intro, ...s.entries.flatMap((e) => e.body)])];
    const links = anchorLinks(all);
    expect(links.length).toBeGreaterThan(30);
    for (const id of links) expect(GLOSSARY.entries.has(id), `#${id}`).toBe(true);
  });
  it('names entries by GitHub anchors', () => {
    expect(anchorOf('N_packed')).toBe('n_packed');
    expect(anchorOf('packed 4D mask')).toBe('packed-4d-mask');
    expect(anchorOf('Naive-Compressed')).toBe('naive-compressed');
    expect(anchorOf('KL_SDCC')).toBe('kl_sdcc');
  });
  it('reads sections, entries and plain text from any text of that shape, and refuses duplicates', () => {
    const g = parseGlossary('# G\n\nIntro **bold**.\n\n## A\n\n### x y\n\nSee [z](#z) and `code`.\n\n### z\n\nZed.\n\n## About\n\nPaper.\n');
    expect([...g.entries.keys()]).toEqual(['x-y', 'z', 'about']);
    expect(g.entries.get('x-y')!.plain).toBe('See z and code.');
    expect(plainText((g.intro[0] as Tokens.Paragraph).tokens)).toBe('Intro bold.');
    expect(() => parseGlossary('## A\n\n### x\n\n1\n\n### x\n\n2\n')).toThrow(/two entries named #x/);
  });
  it('resolves relative links to repository paths', () => {
    expect(repositoryPath('tree.md')).toBe('docs/tree.md');
    expect(repositoryPath('../src/tree/')).toBe('src/tree/');
    expect(repositoryPath('metrics.md#kl_sdcc')).toBe('docs/metrics.md#kl_sdcc');
  });
});

describe('label forms', () => {
  it('name entries that exist', () => {
    for (const id of Object.keys(TERM_FORMS)) expect(GLOSSARY.entries.has(id), id).toBe(true);
  });
  it('cut labels at the terms they use, longest form first, capitals exact', () => {
    expect(splitTerms('K edits')).toEqual([{ id: 'k', text: 'K' }, ' ', { id: 'edit', text: 'edits' }]);
    expect(splitTerms('expected μ')).toEqual([{ id: 'expected-drift', text: 'expected μ' }]);
    expect(splitTerms('μ vs live')).toEqual([{ id: 'signed-drift', text: 'μ' }, ' vs live']);
    expect(splitTerms('N_packed / N_final')).toEqual([{ id: 'n_packed', text: 'N_packed' }, ' / ', { id: 'n_final', text: 'N_final' }]);
    expect(splitTerms('Eviction mass')).toEqual([{ id: 'eviction-mass', text: 'Eviction mass' }]);
    expect(splitTerms('D diverging')).toEqual([{ id: 'd', text: 'D' }, ' ', { id: 'diverging-leaf', text: 'diverging' }]);
    // No match inside words: 4D, KL_SDCC's SDCC, a lower-case k.
    expect(splitTerms('the 4D forward')).toEqual(['the 4D forward']);
    expect(splitTerms('KL_SDCC')).toEqual([{ id: 'kl_sdcc', text: 'KL_SDCC' }]);
    expect(splitTerms('top-k')).toEqual(['top-k']);
    expect(splitTerms('Packed 4D mask')).toEqual([{ id: 'packed-4d-mask', text: 'Packed 4D mask' }]);
  });
});

describe("the app's <Term id> links", () => {
  it('name entries that exist', () => {
    const ids: string[] = [];
    for (const file of sources(APP)) {
      for (const m of readFileSync(file, 'utf8').matchAll(/<Term\s+id="([^"]+)"/g)) ids.push(m[1]);
    }
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(GLOSSARY.entries.has(id), id).toBe(true);
  });
});
