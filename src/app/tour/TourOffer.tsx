// The first-visit line under the title: the tour offered in one sentence, dismissed for good by ×
// or by taking (or ending) a tour, from anywhere (the store remembers it); and the top bar's Tour and Glossary buttons, always there.
import { useWorkbench } from '../store';
import { TOUR_STEPS } from '../core/tourSteps';

export function TourOffer() {
  const offered = useWorkbench((s) => s.tourOffer);
  const touring = useWorkbench((s) => s.tourStep !== null);
  const tourGo = useWorkbench((s) => s.tourGo);
  const dismiss = useWorkbench((s) => s.dismissTourOffer);
  const openGlossary = useWorkbench((s) => s.openGlossary);
  if (!offered || touring) return null;
  return (
    <div className="tour-offer" role="note" data-testid="tour-offer">
      <span>
        New here? A {TOUR_STEPS.length}-step guided tour shows, on these live views, how a memory editor turns an agent’s rollout into a tree, and what each
        training method makes of it.
      </span>
      <button type="button" className="button primary" data-testid="tour-offer-start" onClick={() => void tourGo(1)}>
        Take the tour
      </button>
      <button type="button" className="button" onClick={() => openGlossary()}>
        Glossary
      </button>
      <button type="button" className="dismiss" onClick={dismiss} aria-label="Dismiss the tour offer" data-testid="tour-offer-dismiss">
        ×
      </button>
    </div>
  );
}

export function TeachButtons() {
  const tourGo = useWorkbench((s) => s.tourGo);
  const touring = useWorkbench((s) => s.tourStep !== null);
  const openGlossary = useWorkbench((s) => s.openGlossary);
  return (
    <div className="teach-buttons">
      <button
        type="button"
        className="button"
        onClick={() => void tourGo(1)}
        disabled={touring}
        data-testid="tour-open"
        title="A guided tour of the paper on these views"
      >
        Tour
      </button>
      <button type="button" className="button" onClick={() => openGlossary()} data-testid="glossary-open" title="Every term the views use (docs/glossary.md)">
        Glossary
      </button>
    </div>
  );
}
