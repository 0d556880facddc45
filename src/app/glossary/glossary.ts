// The glossary as data: docs/glossary.md (the one source; the app imports its text) read by marked's
// lexer into sections of entries, each named by its heading's anchor as GitHub writes it, so a link
// `#eviction-mass` means the same entry in the docs and in the app. Rendering is the views' business.
import { Lexer, type Token, type Tokens } from 'marked';

export interface GlossaryEntry {
  /** The heading's anchor: `eviction-mass`, `n_packed`, `about`. */
  id: string;
  /** The heading's text. */
  term: string;
  /** The `##` section it sits in. */
  section: string;
  /** Block tokens of its definition. */
  body: Token[];
  /** The definition as plain text (for tooltips). */
  plain: string;
}

export interface GlossarySection {
  id: string;
  title: string;
  /** Blocks between the section heading and its first entry (the whole body for About). */
  intro: Token[];
  entries: GlossaryEntry[];
}

export interface Glossary {
  title: string;
  /** Blocks before the first section. */
  intro: Token[];
  sections: GlossarySection[];
  /** Every entry by id; a section without entries (About) is an entry of its own. */
  entries: ReadonlyMap<string, GlossaryEntry>;
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces as `-`. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The plain text of inline tokens (links as their text, code as its text). */
export function plainText(tokens: readonly Token[]): string {
  let out = '';
  for (const t of tokens) {
    if ('tokens' in t && Array.isArray(t.tokens) && t.type !== 'codespan') out += plainText(t.tokens);
    else if (t.type === 'codespan' || t.type === 'text' || t.type === 'escape') out += (t as Tokens.Text).text;
    else if (t.type === 'br') out += ' ';
  }
  return out.replace(/\s+/g, ' ').trim();
}

function blocksText(blocks: readonly Token[]): string {
  return blocks
    .filter((b): b is Tokens.Paragraph => b.type === 'paragraph')
    .map((b) => plainText(b.tokens))
    .join(' ');
}

export function parseGlossary(markdown: string): Glossary {
  const tokens = new Lexer().lex(markdown).filter((t) => t.type !== 'space');
  const glossary: Glossary = { title: '', intro: [], sections: [], entries: new Map() };
  const entries = glossary.entries as Map<string, GlossaryEntry>;
  let section: GlossarySection | null = null;
  let entry: GlossaryEntry | null = null;
  const close = () => {
    if (entry) entry.plain = blocksText(entry.body);
    entry = null;
  };
  for (const token of tokens) {
    if (token.type === 'heading') {
      const heading = token as Tokens.Heading;
      const text = plainText(heading.tokens);
      if (heading.depth === 1) {
        glossary.title = text;
        continue;
      }
      close();
      if (heading.depth === 2) {
        section = { id: anchorOf(text), title: text, intro: [], entries: [] };
        glossary.sections.push(section);
        continue;
      }
      if (!section) throw new Error(`glossary: "${text}" stands before any section`);
      entry = { id: anchorOf(text), term: text, section: section.title, body: [], plain: '' };
      if (entries.has(entry.id)) throw new Error(`glossary: two entries named #${entry.id}`);
      entries.set(entry.id, entry);
      section.entries.push(entry);
      continue;
    }
    if (entry) entry.body.push(token);
    else if (section) section.intro.push(token);
    else glossary.intro.push(token);
  }
  close();
  // A section of prose only (About) is linkable as one entry.
  for (const s of glossary.sections) {
    if (s.entries.length === 0 && !entries.has(s.id))
      entries.set(s.id, { id: s.id, term: s.title, section: s.title, body: s.intro, plain: blocksText(s.intro) });
  }
  return glossary;
}

/** Every `#anchor` a token list links to (the doc's own cross-references). */
export function anchorLinks(tokens: readonly Token[]): string[] {
  const out: string[] = [];
  const walk = (list: readonly Token[]) => {
    for (const t of list) {
      if (t.type === 'link' && (t as Tokens.Link).href.startsWith('#')) out.push((t as Tokens.Link).href.slice(1));
      if ('tokens' in t && Array.isArray(t.tokens)) walk(t.tokens);
      if (t.type === 'table') {
        const table = t as Tokens.Table;
        for (const cell of table.header) walk(cell.tokens);
        for (const row of table.rows) for (const cell of row) walk(cell.tokens);
      }
    }
  };
  walk(tokens);
  return out;
}

/** Where a relative link of docs/glossary.md points in the repository (`tree.md` → `docs/tree.md`). */
export function repositoryPath(href: string): string {
  const [path, hash] = href.split('#');
  const resolved = new URL(path, 'file:///repo/docs/').pathname.replace(/^\/repo\//, '');
  return hash ? `${resolved}#${hash}` : resolved;
}
