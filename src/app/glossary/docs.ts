// The repository's docs as the glossary panel opens them: a reference such as `tree.md#the-figures`
// in docs/glossary.md names a section of another doc, which the panel shows in place (its text is
// bundled, loaded when first opened). Pure parts here: resolving a reference, cutting out a section.
import { Lexer, type Token, type Tokens } from 'marked';
import { anchorOf } from './glossary';

export interface DocSection {
  /** The repository path of the doc, `docs/tree.md`. */
  path: string;
  /** The section's heading, or the doc's title when the reference names no section. */
  title: string;
  tokens: Token[];
}

/** The repository path a doc reference names (relative to `from`, a doc's path), or null when it is not a Markdown doc. */
export function docPath(href: string, from = 'docs/glossary.md'): string | null {
  const [path] = href.split('#');
  if (!path.endsWith('.md') || /^[a-z]+:/i.test(path)) return null;
  return new URL(path, `file:///repo/${from}`).pathname.replace(/^\/repo\//, '');
}

/**
 * The part of a doc a reference opens: from the heading whose GitHub anchor is `anchor` up to the next
 * heading of the same or a higher level; without an anchor the whole doc. Null when no heading has it.
 */
export function docSection(markdown: string, path: string, anchor: string | null): DocSection | null {
  const tokens = new Lexer().lex(markdown) as Token[];
  const headings = tokens.map((t, i) => ({ t, i })).filter(({ t }) => t.type === 'heading') as { t: Tokens.Heading; i: number }[];
  if (!anchor) {
    const title = headings[0]?.t.text ?? path;
    return { path, title, tokens: headings[0] ? tokens.filter((_, i) => i !== headings[0].i) : tokens };
  }
  const at = headings.findIndex(({ t }) => anchorOf(t.text) === anchor);
  if (at < 0) return null;
  const { t: head, i: start } = headings[at];
  const next = headings.slice(at + 1).find(({ t }) => t.depth <= head.depth);
  return { path, title: head.text, tokens: tokens.slice(start + 1, next ? next.i : tokens.length) };
}

const TEXTS = import.meta.glob<string>(['../../../docs/**/*.md', '../../../README.md'], { query: '?raw', import: 'default' });

/** Loads the section a doc reference names; null when the doc is not bundled or has no such heading. */
export async function loadDocSection(href: string, from?: string): Promise<DocSection | null> {
  const path = docPath(href, from);
  if (!path) return null;
  const load = TEXTS[`../../../${path}`];
  if (!load) return null;
  const anchor = href.includes('#') ? href.slice(href.indexOf('#') + 1) : null;
  return docSection(await load(), path, anchor);
}
