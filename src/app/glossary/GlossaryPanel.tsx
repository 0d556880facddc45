// The glossary panel: docs/glossary.md as the page shows it, beside the views (which stay live),
// scrolled to the entry a <Term> link named. Escape or × closes it. A reference to another doc
// (tree.md#the-figures) opens that section in the panel, with a way back to the entry.
import { useEffect, useRef, useState } from 'react';
import { useWorkbench } from '../store';
import { loadDocSection, type DocSection } from './docs';
import { Blocks } from './Markdown';
import { GLOSSARY } from './terms';
import './glossary.css';

export function GlossaryPanel() {
  const term = useWorkbench((s) => s.glossaryTerm);
  const close = useWorkbench((s) => s.closeGlossary);
  const doc = useWorkbench((s) => s.glossaryDoc);
  const openDoc = useWorkbench((s) => s.openDoc);
  const bodyRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (term === null || doc !== null) return;
    const body = bodyRef.current;
    const target = term === 'all' ? null : body?.querySelector<HTMLElement>(`[data-entry="${CSS.escape(term)}"]`);
    if (body) body.scrollTop = target ? target.offsetTop - 8 : 0;
    target?.focus({ preventScroll: true });
  }, [term, doc]);

  useEffect(() => {
    if (term === null) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopImmediatePropagation(); // the tour closes on the next Escape, not this one
      close();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [term, close]);

  if (term === null) return null;
  if (doc !== null) return <DocView href={doc} onBack={() => openDoc(null)} onClose={close} />;
  const known = term === 'all' || GLOSSARY.entries.has(term);
  return (
    <aside className="glossary-panel" aria-label="Glossary" data-testid="glossary" data-tour="glossary">
      <header>
        <h2>{GLOSSARY.title}</h2>
        <span className="muted">docs/glossary.md</span>
        <button type="button" className="close" onClick={close} aria-label="Close the glossary" data-testid="glossary-close">
          ×
        </button>
      </header>
      <div className="glossary-body" ref={bodyRef}>
        {!known && <p className="error-text">No glossary entry is named “{term}”.</p>}
        <Blocks tokens={GLOSSARY.intro} />
        {GLOSSARY.sections.map((section) => (
          <section
            key={section.id}
            data-entry={section.entries.length ? undefined : section.id}
            tabIndex={-1}
            className={term === section.id ? 'current' : undefined}
          >
            <h3>{section.title}</h3>
            <Blocks tokens={section.intro} />
            <dl>
              {section.entries.map((entry) => (
                <div key={entry.id} data-entry={entry.id} tabIndex={-1} className={entry.id === term ? 'entry current' : 'entry'} id={`glossary-${entry.id}`}>
                  <dt>{entry.term}</dt>
                  <dd>
                    <Blocks tokens={entry.body} />
                  </dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
      </div>
    </aside>
  );
}

/** One section of another doc, loaded when opened; Back returns to the glossary entry it was opened from. */
function DocView({ href, onBack, onClose }: { href: string; onBack(): void; onClose(): void }) {
  const [section, setSection] = useState<DocSection | null | 'loading'>('loading');
  useEffect(() => {
    let live = true;
    setSection('loading');
    loadDocSection(href).then(
      (s) => live && setSection(s),
      () => live && setSection(null),
    );
    return () => {
      live = false;
    };
  }, [href]);
  return (
    <aside className="glossary-panel" aria-label="Glossary" data-testid="glossary" data-doc-open={href}>
      <header>
        <button type="button" className="button" onClick={onBack} data-testid="glossary-back">
          ← Glossary
        </button>
        <span className="muted">{section && section !== 'loading' ? section.path : href}</span>
        <button type="button" className="close" onClick={onClose} aria-label="Close the glossary" data-testid="glossary-close">
          ×
        </button>
      </header>
      <div className="glossary-body" data-testid="glossary-doc">
        {section === 'loading' ? (
          <p className="muted">opening {href}…</p>
        ) : section === null ? (
          <p className="error-text">{href}: no such section in the repository&apos;s docs.</p>
        ) : (
          <section>
            <h3 data-testid="glossary-doc-title">{section.title}</h3>
            <Blocks tokens={section.tokens} />
          </section>
        )}
      </div>
    </aside>
  );
}
