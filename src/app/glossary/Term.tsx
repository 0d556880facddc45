// Links into the glossary: <Term id="eviction-mass">eviction mass</Term> names one entry of
// docs/glossary.md (its definition as the tooltip, a click opens the glossary panel there);
// <TermText text="N_packed / N_final" /> links every term a label's text uses (terms.ts's forms).
import { memo, type MouseEvent, type ReactNode } from 'react';
import { useWorkbench } from '../store';
import { glossaryEntry, splitTerms } from './terms';

export function Term({ id, children }: { id: string; children: ReactNode }) {
  const open = useWorkbench((s) => s.openGlossary);
  const entry = glossaryEntry(id);
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // a new tab opens the entry by its URL
    e.preventDefault();
    e.stopPropagation();
    open(id);
  };
  return (
    <a className="term" href={`?glossary=${encodeURIComponent(id)}`} data-term={id} title={entry?.plain} onClick={onClick}>
      {children}
    </a>
  );
}

/** Renders again only when its text changes (the views redraw their labels on every edit). */
export const TermText = memo(function TermText({ text }: { text: string }) {
  // One element, so that a flex container (a legend item) does not space its pieces apart.
  return (
    <span className="term-text">
      {splitTerms(text).map((piece, i) =>
        typeof piece === 'string' ? (
          piece
        ) : (
          <Term key={i} id={piece.id}>
            {piece.text}
          </Term>
        ),
      )}
    </span>
  );
});
