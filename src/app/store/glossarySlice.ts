// Glossary slice: which entry of docs/glossary.md the glossary panel shows (null: closed). Every
// <Term> link opens it; the URL carries it, so a link can name an entry.
import type { GlossarySlice, Slice } from './types';

export const createGlossarySlice: Slice<GlossarySlice> = (set) => ({
  glossaryTerm: null,
  glossaryDoc: null,
  openGlossary(id = 'all') {
    set({ glossaryTerm: id, glossaryDoc: null });
  },
  openDoc(href) {
    set((s) => ({ glossaryDoc: href, glossaryTerm: s.glossaryTerm ?? 'all' }));
  },
  closeGlossary() {
    set({ glossaryTerm: null, glossaryDoc: null });
  },
});
