// Every reference of docs/glossary.md to another doc opens a section that exists (the links the
// glossary promises), and the section is that heading's text up to the next heading of its level.
import { readFileSync } from 'node:fs';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { docPath, docSection } from './docs';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

function links(tokens: readonly Token[], out: string[] = []): string[] {
  for (const t of tokens) {
    if (t.type === 'link') out.push((t as Tokens.Link).href);
    for (const key of ['tokens', 'items'] as const) if (key in t && Array.isArray((t as Tokens.Generic)[key])) links((t as Tokens.Generic)[key], out);
    if (t.type === 'table') for (const cell of [...(t as Tokens.Table).header, ...(t as Tokens.Table).rows.flat()]) links(cell.tokens, out);
  }
  return out;
}

describe('glossary references to the docs', () => {
  const refs = links(new Lexer().lex(read('docs/glossary.md'))).filter((h) => docPath(h) !== null);
  it('are many, and each resolves to a doc of the repository with the named section', () => {
    expect(refs.length).toBeGreaterThanOrEqual(20);
    for (const href of refs) {
      const path = docPath(href)!;
      const anchor = href.includes('#') ? href.slice(href.indexOf('#') + 1) : null;
      const section = docSection(read(path), path, anchor);
      expect(section, href).not.toBeNull();
      expect(section!.tokens.length, href).toBeGreaterThan(0);
    }
  });
  it('cut a section at the next heading of its level', () => {
    expect(docPath('tree.md#the-figures')).toBe('docs/tree.md');
    expect(docPath('../README.md')).toBe('README.md');
    expect(docPath('../src/plan/build.ts')).toBeNull();
    const sdcc = docSection(read('docs/methods.md'), 'docs/methods.md', 'sdcc')!;
    expect(sdcc.title).toBe('SDCC');
    const headings = sdcc.tokens.filter((t) => t.type === 'heading') as Tokens.Heading[];
    expect(headings.every((h) => h.depth > 2)).toBe(true); // its own subsections (Teacher layouts), not the next section
    expect(headings.map((h) => h.text)).toContain('Teacher layouts');
    expect(docSection(read('docs/methods.md'), 'docs/methods.md', 'no-such-heading')).toBeNull();
  });
});
