// The URL and the store: on start, the URL (a playground link opens its rollout in the playground;
// else the set kept in IndexedDB, else the built-in worked example) decides what opens; afterwards every change of a schema field is written back
// with history.replaceState, so the address bar always reproduces the view.
import { FULL_SAMPLING } from '../../harness/policies/model';
import { DEFAULT_EXAMPLE } from '../load/examples';
import { loadLastSet } from '../persist/lastSet';
import { decodePlay } from '../url/playLink';
import { formatSampler, parseSampler, parseSourceKey, parseUrlState, serializeUrlState, sourceKey, type UrlState } from '../url/schema';
import type { WorkbenchState } from './types';
import { whenIdle } from './idle';

interface Store {
  getState(): WorkbenchState;
  setState(partial: Partial<WorkbenchState>): void;
  subscribe(listener: (state: WorkbenchState) => void): () => void;
}

export function urlStateOf(state: WorkbenchState): UrlState {
  return {
    source: state.source ? sourceKey(state.source) : null,
    rollout: state.rollouts.length > 1 && state.view ? state.view.rollout.id : null,
    target: state.selectedTarget,
    method: state.method,
    rows: state.rows,
    color: state.colorBy,
    sampler: formatSampler(state.sampler),
    tour: state.tourStep,
    glossary: state.glossaryTerm,
    play: state.source?.kind === 'playground' ? (state.playLink?.code ?? null) : null,
  };
}

/** Opens what the URL (or IndexedDB, or the default example) names; resolves when the page shows a rollout or an error. */
export async function bootstrap(store: Store, search: string): Promise<void> {
  const url = parseUrlState(search);
  store.setState({
    method: url.method,
    rows: url.rows,
    colorBy: url.color,
    sampler: parseSampler(url.sampler) ?? { ...FULL_SAMPLING },
    glossaryTerm: url.glossary,
  });
  // The tour applies its step (which opens its own example) once the page shows a rollout.
  if (url.tour !== null) store.setState({ tourStep: url.tour });
  const options = { rolloutId: url.rollout, target: url.target, auto: true };
  const source = url.source ? parseSourceKey(url.source) : null;
  const { openBlob, openExample } = store.getState();
  // Whatever the person opens meanwhile wins: start-up stops at its next step.
  const overtaken = () => store.getState().manualOpens > 0;
  let opened = false;
  let notice: string | null = null;
  if (source?.kind === 'example') opened = await openExample(source.name, options);
  else if (source?.kind === 'playground') {
    // The link holds the playground's rollout itself: it opens in the playground, ready to edit.
    if (url.play === null) notice = `${source.name}: this playground link holds no rollout (it was longer than a link holds); open the downloaded file instead`;
    else {
      try {
        await store.getState().openPlayground({ rollout: await decodePlay(url.play) });
        opened = store.getState().source?.kind === 'playground';
        if (opened && url.target !== null) store.getState().selectTarget(url.target);
      } catch (error) {
        notice = error instanceof Error ? error.message : String(error);
      }
    }
  } else {
    const stored = await loadLastSet();
    // A set imported with a model folder's tokenizer needs that folder loaded again first (kept in IndexedDB).
    if (stored?.tokenizer.startsWith('hf:')) await store.getState().restoreCheckpoint();
    if (overtaken()) return;
    if (source?.kind === 'file') {
      if (stored && stored.kind === 'file' && stored.name === source.name)
        opened = await openBlob(stored.blob, source, { ...options, persist: false, tokenizer: stored.tokenizer });
      else notice = `${source.name}: this link names a file that is not stored in this browser; open the file to see its view`;
    } else if (stored)
      opened = await openBlob(stored.blob, { kind: stored.kind, name: stored.name }, { ...options, persist: false, tokenizer: stored.tokenizer });
  }
  if (overtaken()) return;
  if (!opened && !store.getState().view) {
    const error = notice ?? store.getState().loadError;
    await openExample(DEFAULT_EXAMPLE, source ? { auto: true } : options);
    if (error && !overtaken()) store.setState({ loadError: error });
  }
}

/** How long the playground's URL waits for the edits to pause: replaceState of a long link is not free, and an edit redraws every view. */
const PLAYGROUND_WRITE_MS = 250;
/** After the pause, the write waits for an idle period (not the frames of an edit made meanwhile), at most this long. */
const PLAYGROUND_IDLE_MS = 1000;

/** Writes the URL on every change of a schema field (in the playground, once its edits pause and the page is idle); returns the unsubscribe function. */
export function startUrlSync(store: Store): () => void {
  let last = '';
  let timer: ReturnType<typeof setTimeout> | null = null;
  let cancelIdle: (() => void) | null = null;
  const cancel = () => {
    if (timer !== null) clearTimeout(timer);
    cancelIdle?.();
    timer = cancelIdle = null;
  };
  const replace = (search: string) => {
    if (search !== window.location.search) {
      window.history.replaceState(window.history.state, '', `${window.location.pathname}${search}${window.location.hash}`);
    }
  };
  const replaceWhenIdle = (search: string) => {
    timer = null;
    cancelIdle = whenIdle(() => ((cancelIdle = null), replace(search)), PLAYGROUND_IDLE_MS);
  };
  const write = (state: WorkbenchState) => {
    if (!state.view) return;
    const search = serializeUrlState(urlStateOf(state));
    if (search === last) return;
    last = search;
    cancel();
    if (state.source?.kind === 'playground') timer = setTimeout(() => replaceWhenIdle(search), PLAYGROUND_WRITE_MS);
    else replace(search);
  };
  write(store.getState());
  const stop = store.subscribe(write);
  return () => {
    stop();
    cancel();
  };
}
