// Find and jump: a search box over the rollout's text, and buttons (and keys) that move to the
// next or previous match, edit, observation or diverging target. Every jump selects the target
// whose panes show the place and scrolls the panes to it.
import { useEffect, useRef } from 'react';
import { findMatches, jumpsOf, type JumpKind } from '../../core/contextFind';
import { useWorkbench } from '../../store';

/** Keys, as the help line lists them. */
export const KEY_HELP =
  '/ or Ctrl+F find · Enter / Shift+Enter next / previous match (n / N outside the box) · e / E edit · o / O observation · d / D diverging target · ← / → target';

const JUMP_KEYS: Record<string, JumpKind> = { e: 'edit', o: 'obs', d: 'diverging' };

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName));
}

const JUMPS: { kind: JumpKind; label: string; title: string }[] = [
  { kind: 'edit', label: 'edit', title: 'the first target after an edit (e / E)' },
  { kind: 'obs', label: 'observation', title: 'the target that reads an observation, e.g. a tool result (o / O)' },
  { kind: 'diverging', label: 'diverging', title: 'a target whose final prefix differs from its live prefix (d / D)' },
];

export function FindBar() {
  const view = useWorkbench((s) => s.view);
  const query = useWorkbench((s) => s.findQuery);
  const index = useWorkbench((s) => (s.findView === s.view ? s.findIndex : -1));
  const selected = useWorkbench((s) => s.selectedTarget);
  const setFindQuery = useWorkbench((s) => s.setFindQuery);
  const stepFind = useWorkbench((s) => s.stepFind);
  const jump = useWorkbench((s) => s.jump);
  const input = useRef<HTMLInputElement>(null);
  const matches = view ? findMatches(view, query) : null;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const focusFind = () => {
        input.current?.focus();
        input.current?.select();
        input.current?.closest('section')?.scrollIntoView({ block: 'nearest' });
      };
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        focusFind();
        return;
      }
      if (e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      const s = useWorkbench.getState();
      if (!s.view) return;
      const key = e.key.toLowerCase();
      if (e.key === '/') focusFind();
      else if (JUMP_KEYS[key]) s.jump(JUMP_KEYS[key], e.shiftKey ? -1 : 1);
      else if (key === 'n' && s.findQuery) s.stepFind(e.shiftKey ? -1 : 1);
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  if (!view) return null;
  const count = matches ? `${matches.count}${matches.capped ? '+' : ''}` : '0';
  const position = !query ? '' : matches?.count ? `${index >= 0 ? index + 1 : '–'} / ${count}` : 'no match';
  const has = (kind: JumpKind, delta: 1 | -1) => {
    const list = jumpsOf(view, kind);
    if (selected === null) return list.length > 0;
    return delta > 0 ? list.some((j) => j.target > selected) : list.some((j) => j.target < selected);
  };
  return (
    <div className="find-bar" role="search">
      <input
        ref={input}
        type="search"
        placeholder="Find in the rollout…"
        value={query}
        data-testid="find-input"
        aria-label="Find text in the rollout"
        onChange={(e) => setFindQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            stepFind(e.shiftKey ? -1 : 1);
          } else if (e.key === 'Escape') input.current?.blur();
        }}
      />
      <span className="find-count" data-testid="find-count">
        {position}
      </span>
      <span className="jump-group">
        <button type="button" onClick={() => stepFind(-1)} disabled={!matches?.count} aria-label="Previous match" data-testid="find-prev">
          ‹
        </button>
        <button type="button" onClick={() => stepFind(1)} disabled={!matches?.count} aria-label="Next match" data-testid="find-next">
          ›
        </button>
      </span>
      {JUMPS.map((j) => (
        <span className="jump-group" key={j.kind} title={`Jump to ${j.title}`}>
          <button
            type="button"
            onClick={() => jump(j.kind, -1)}
            disabled={!has(j.kind, -1)}
            aria-label={`Previous ${j.label}`}
            data-testid={`jump-${j.kind}-prev`}
          >
            ‹
          </button>
          <span className="jump-label">{j.label}</span>
          <button type="button" onClick={() => jump(j.kind, 1)} disabled={!has(j.kind, 1)} aria-label={`Next ${j.label}`} data-testid={`jump-${j.kind}-next`}>
            ›
          </button>
        </span>
      ))}
    </div>
  );
}
