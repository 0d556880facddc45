// The playground: a student writes a rollout and makes the memory editor's edits by hand, and every
// view below follows at once. Type a piece (the task, what the agent read, what it wrote); select
// tokens of the context (click, shift-click; arrows and shift-arrows) and evict them, replace them by
// a summary, fold the latest observation or slide the window; undo and redo (Ctrl+Z, Ctrl+Shift+Z);
// download the rollout (the format mw reads) or copy a link that holds it. A change the format cannot
// express is refused here, with the reason.
import { memo, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { stringifyRollout, type AppendRole } from '../../../rollout';
import { CELL, CELL_COLORS } from '../../core/cells';
import {
  appendPiece,
  describeEvents,
  evictSpan,
  foldLatestObservation,
  liveIds,
  appendEventOf,
  playTokenizer,
  setCarriesLoss,
  slideWindow,
  summarizeSpan,
  type LiveSpan,
} from '../../core/playground';
import { downloadText } from '../../export/download';
import { useWorkbench } from '../../store';
import type { PlayStart } from '../../store/types';
import { PLAY_LINK_LIMIT } from '../../url/playLink';
import './playground.css';

const STARTS: { value: Exclude<PlayStart, object>; label: string }[] = [
  { value: 'words', label: 'nothing (GPT-2 words)' },
  { value: 'bytes', label: 'nothing (bytes)' },
  { value: 'example', label: 'the worked example in words' },
  { value: 'shown', label: 'the rollout shown now' },
];

const ROLES: { value: AppendRole; label: string }[] = [
  { value: 'prompt', label: 'prompt: the task' },
  { value: 'obs', label: 'observation: what the agent read' },
  { value: 'act', label: 'action: what the agent wrote (carries loss)' },
];

const ROLE_CELL: Record<string, number> = { prompt: CELL.prompt, obs: CELL.obs, act: CELL.act, summary: CELL.inserted };

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName));
}

export function PlaygroundButton() {
  const open = useWorkbench((s) => s.play !== null);
  const openPlayground = useWorkbench((s) => s.openPlayground);
  return (
    <button
      type="button"
      className={`button play-open${open ? ' active' : ''}`}
      onClick={() => void openPlayground('words')}
      disabled={open}
      data-testid="playground-open"
      title="Build a rollout yourself, word by word, make the memory editor's edits by hand, and watch every view follow"
    >
      Playground
    </button>
  );
}

/** A chip's handlers take its id, not its position: an edit that moves the context keeps the chips it keeps as they are. */
interface ChipHandlers {
  pick(id: number, extend: boolean): void;
  key(e: KeyboardEvent<HTMLButtonElement>, id: number): void;
}

/** One token of the live context: its id (drawn from data-id by the style sheet: one element a chip), its text, the colour of its role; a button that selects it. */
const Chip = memo(function Chip(props: { id: number; selected: boolean; color: string; role: string; text: string; handlers: { current: ChipHandlers } }) {
  const { id, selected, color, role, text, handlers } = props;
  return (
    <button
      type="button"
      className={`play-chip${selected ? ' selected' : ''}`}
      style={{ borderColor: color }}
      data-id={id}
      aria-pressed={selected}
      title={`id ${id} · ${role}`}
      onClick={(e) => handlers.current.pick(id, e.shiftKey)}
      onKeyDown={(e) => handlers.current.key(e, id)}
    >
      {text.trim() || '␣'}
    </button>
  );
});

export function PlaygroundPanel() {
  const play = useWorkbench((s) => s.play);
  const link = useWorkbench((s) => s.playLink);
  const shownIsPlay = useWorkbench((s) => s.source?.kind === 'playground');
  const openPlayground = useWorkbench((s) => s.openPlayground);
  const change = useWorkbench((s) => s.playChange);
  const undo = useWorkbench((s) => s.playUndo);
  const redo = useWorkbench((s) => s.playRedo);
  const close = useWorkbench((s) => s.closePlayground);
  const [startFrom, setStartFrom] = useState<Exclude<PlayStart, object>>('words');
  const [role, setRole] = useState<AppendRole>('prompt');
  const [text, setText] = useState('');
  const [summary, setSummary] = useState('');
  const [windowSize, setWindowSize] = useState(8);
  const [span, setSpan] = useState<{ anchor: number; focus: number } | null>(null);
  const [shared, setShared] = useState<string | null>(null);
  const chips = useRef<HTMLDivElement>(null);
  const chipHandlers = useRef<ChipHandlers>({ pick: () => undefined, key: () => undefined });
  const rollout = play?.rollout ?? null;

  // Undo and redo from anywhere but a text field (where Ctrl+Z undoes the typing).
  useEffect(() => {
    if (!play) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || isTyping(e.target)) return;
      const key = e.key.toLowerCase();
      if (key === 'z' && !e.shiftKey) undo();
      else if ((key === 'z' && e.shiftKey) || key === 'y') redo();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [play, undo, redo]);

  // A new rollout moves the positions: the selection goes.
  const [selectionOf, setSelectionOf] = useState(rollout);
  if (selectionOf !== rollout) {
    setSelectionOf(rollout);
    setSpan(null);
    setShared(null);
  }

  const live = useMemo(() => (rollout ? liveIds(rollout) : []), [rollout]);
  const positionOf = useMemo(() => new Map(live.map((id, position) => [id, position])), [live]);
  const origin = useMemo(() => (rollout ? appendEventOf(rollout) : []), [rollout]);
  const tokenizer = useMemo(() => (rollout ? playTokenizer(rollout) : null), [rollout]);
  const tokens = useMemo(() => {
    const out: number[] = [];
    if (!rollout) return out;
    for (const e of rollout.events) {
      if (e.op === 'append') out.push(...(e.tokens ?? []));
      else for (const p of e.view) if ('insert' in p) out.push(...(p.insert.tokens ?? []));
    }
    return out;
  }, [rollout]);
  const decode = useMemo(
    () => (ids: number[]) => (typeof tokenizer === 'object' && tokenizer ? tokenizer.decode(ids) : ids.map((t) => `#${t}`).join(' ')),
    [tokenizer],
  );
  const lines = useMemo(() => (rollout ? describeEvents(rollout, decode) : []), [rollout, decode]);
  // Each token's text, decoded once per tokenizer (not once per chip and render: a context repeats its tokens).
  const decoded = useMemo(() => new Map<number, string>(), [decode]);

  if (!play || !rollout) return null;
  const selection: LiveSpan | null = span ? { from: Math.min(span.anchor, span.focus), to: Math.max(span.anchor, span.focus) } : null;
  const textOf = (id: number) => {
    if (id >= tokens.length) return '?';
    const token = tokens[id];
    let text = decoded.get(token);
    if (text === undefined) decoded.set(token, (text = decode([token])));
    return text;
  };

  const add = () => {
    if (change((r) => appendPiece(r, role, text))) {
      setText('');
      // The next piece is usually the other party's: a prompt or observation is answered by an action.
      setRole(role === 'act' ? 'obs' : 'act');
    }
  };
  const pick = (position: number, extend: boolean) =>
    setSpan(extend && span ? { anchor: span.anchor, focus: position } : { anchor: position, focus: position });
  const onChipKey = (e: KeyboardEvent<HTMLButtonElement>, id: number) => {
    const position = positionOf.get(id) ?? 0;
    let next = position;
    if (e.key === 'ArrowRight') next = Math.min(live.length - 1, position + 1);
    else if (e.key === 'ArrowLeft') next = Math.max(0, position - 1);
    else if (e.key === 'Escape') {
      setSpan(null);
      e.stopPropagation();
      return;
    } else return;
    e.preventDefault();
    e.stopPropagation();
    pick(next, e.shiftKey);
    chips.current?.querySelector<HTMLButtonElement>(`[data-id="${live[next]}"]`)?.focus();
  };
  // The chips' handlers through a ref: a chip renders again only when what it shows changes (an
  // edit keeps most of the context as it was, at other positions; a selection changes a few chips).
  chipHandlers.current = { pick: (id, extend) => pick(positionOf.get(id) ?? 0, extend), key: onChipKey };
  const selectedIds = selection ? live.slice(selection.from, selection.to + 1) : [];
  const shareLink = () => {
    if (!link?.code) return;
    const url = `${window.location.origin}${window.location.pathname}?src=playground%3Aplayground&play=${link.code}`;
    setShared(url);
    void navigator.clipboard?.writeText(url).catch(() => undefined);
  };

  return (
    <section className="panel playground" aria-label="Playground" data-testid="playground">
      <header className="panel-head">
        <h2>Playground</h2>
        <span className="hint">type a rollout, edit its context: every view below follows</span>
        <label className="picker">
          <span className="muted">start from</span>
          <select value={startFrom} onChange={(e) => setStartFrom(e.currentTarget.value as typeof startFrom)} data-testid="play-start-from">
            {STARTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="button" onClick={() => void openPlayground(startFrom)} data-testid="play-start">
          Start over
        </button>
        <span className="sep" />
        <button type="button" className="button" onClick={undo} disabled={!play.past.length} data-testid="play-undo" title="Undo the last change (Ctrl+Z)">
          Undo
        </button>
        <button type="button" className="button" onClick={redo} disabled={!play.future.length} data-testid="play-redo" title="Redo (Ctrl+Shift+Z or Ctrl+Y)">
          Redo
        </button>
        <button
          type="button"
          className="button"
          disabled={!rollout.events.length}
          onClick={() => downloadText(`${stringifyRollout(rollout)}\n`, 'playground.json', 'application/json')}
          data-testid="play-download"
          title="The rollout as a memorywalker.rollout/v1 file: mw tree, mw score and the page read it"
        >
          Download .json
        </button>
        <button
          type="button"
          className="button"
          disabled={!link?.code || !rollout.events.length}
          onClick={shareLink}
          data-testid="play-link-button"
          title="A link that holds this rollout: it opens in the playground of a fresh page"
        >
          Copy link
        </button>
        <button type="button" className="dismiss" onClick={close} aria-label="Close the playground" data-testid="play-close">
          ×
        </button>
      </header>
      <div className="play-body">
        <form
          className="play-row"
          onSubmit={(e) => {
            e.preventDefault();
            add();
          }}
        >
          <span className="play-label">Add</span>
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as AppendRole)} data-testid="play-role" aria-label="What the text is">
            {ROLES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
          <input
            className="play-text"
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            placeholder={rollout.events.length ? 'type the next piece, then Enter' : 'type the task, e.g. Fix tests, then Enter'}
            data-testid="play-text"
            aria-label="Text to add"
          />
          <button type="submit" className="button primary" data-testid="play-add">
            Add
          </button>
          <span className="muted">{typeof tokenizer === 'string' ? tokenizer : `as ${tokenizer?.name === 'gpt2' ? 'GPT-2 words' : 'bytes'}`}</span>
        </form>
        <div className="play-context">
          <div className="play-label">
            Context now{' '}
            <span className="muted play-hint">
              ({live.length} tokens the agent sees; click a token, shift-click another to select a span; arrows move, shift-arrows extend)
            </span>
          </div>
          {live.length === 0 ? (
            <p className="muted">Empty: add the task first. Until then the views below show the rollout opened before.</p>
          ) : (
            <div className="play-chips" ref={chips} data-testid="play-live">
              {live.map((id, position) => {
                const cls =
                  origin[id]?.event !== undefined && rollout.events[origin[id].event].op === 'edit' ? CELL.inserted : ROLE_CELL[origin[id]?.role ?? 'prompt'];
                return (
                  <Chip
                    key={id}
                    id={id}
                    selected={selection !== null && position >= selection.from && position <= selection.to}
                    color={CELL_COLORS[cls as keyof typeof CELL_COLORS]}
                    role={origin[id]?.role ?? ''}
                    text={textOf(id)}
                    handlers={chipHandlers}
                  />
                );
              })}
            </div>
          )}
        </div>
        <div className="play-row play-edits">
          <span className="play-label">Edit the context</span>
          <span className="muted" data-testid="play-selection">
            {selectedIds.length ? `selected: ids ${selectedIds.join(' ')}` : 'nothing selected'}
          </span>
          <button
            type="button"
            className="button"
            onClick={() => change((r) => evictSpan(r, selection))}
            data-testid="play-evict"
            title="Drop the selected tokens from the context for good"
          >
            Evict
          </button>
          <input
            className="play-summary"
            value={summary}
            onChange={(e) => setSummary(e.currentTarget.value)}
            placeholder="summary text"
            data-testid="play-summary"
            aria-label="Summary text"
          />
          <button
            type="button"
            className="button"
            onClick={() => change((r) => summarizeSpan(r, selection, summary)) && setSummary('')}
            data-testid="play-summarize"
            title="Replace the selected tokens by the summary, where they stood (compaction)"
          >
            Replace by summary
          </button>
          <button
            type="button"
            className="button"
            onClick={() => change((r) => foldLatestObservation(r, summary)) && setSummary('')}
            data-testid="play-fold"
            title="Replace the latest observation still in the context by the summary (a fold)"
          >
            Fold latest observation
          </button>
          <label className="picker">
            <button
              type="button"
              className="button"
              onClick={() => change((r) => slideWindow(r, windowSize))}
              data-testid="play-slide"
              title="Keep only the last N tokens"
            >
              Slide window
            </button>
            <span className="muted">keep the last</span>
            <input
              type="number"
              min={1}
              value={windowSize}
              onChange={(e) => setWindowSize(Math.floor(Number(e.currentTarget.value)))}
              data-testid="play-window"
              style={{ width: '4.5em' }}
              aria-label="Window size in tokens"
            />
            <span className="muted">tokens</span>
          </label>
        </div>
        {play.refusal && (
          <p className="play-refusal" role="alert" data-testid="play-refusal">
            Not done: {play.refusal}
          </p>
        )}
        {rollout.events.length > 0 && (
          <ol className="play-events" data-testid="play-events">
            {rollout.events.map((e, i) => (
              <li key={i}>
                <span>{lines[i]}</span>
                {e.op === 'append' && e.role !== 'prompt' && (
                  <label className="play-loss" title="Carries loss: the policy wrote it (an action, trained on); otherwise the agent read it (an observation)">
                    <input
                      type="checkbox"
                      checked={e.role === 'act'}
                      onChange={(ev) => change((r) => setCarriesLoss(r, i, ev.currentTarget.checked))}
                      data-testid={`play-loss-${i}`}
                    />
                    carries loss
                  </label>
                )}
              </li>
            ))}
          </ol>
        )}
        <p className="muted play-link-state" data-testid="play-link-state">
          {!shownIsPlay
            ? ''
            : link === null
              ? 'making the link…'
              : link.code
                ? `A link holds it (${(link.length / 1024).toFixed(1)} KB compressed).`
                : `Too long for a link: ${(link.length / 1024).toFixed(1)} KB compressed, over the ${(PLAY_LINK_LIMIT / 1024).toFixed(1)} KB a link holds; download the file to hand it out.`}
        </p>
        {shared && (
          <label className="play-shared">
            <span className="muted">link (copied):</span>
            <input readOnly value={shared} data-testid="play-link" onFocus={(e) => e.currentTarget.select()} />
          </label>
        )}
      </div>
    </section>
  );
}
