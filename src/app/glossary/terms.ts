// The app's glossary: docs/glossary.md, imported as text and parsed once (the one source of every
// definition the page shows), and the label forms that link into it (./forms.ts).
import text from '../../../docs/glossary.md?raw';
import { parseGlossary, type GlossaryEntry } from './glossary';

export const GLOSSARY = parseGlossary(text);

export function glossaryEntry(id: string): GlossaryEntry | undefined {
  return GLOSSARY.entries.get(id);
}

export { splitTerms, TERM_FORMS } from './forms';
