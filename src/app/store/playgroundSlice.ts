// Playground slice: the rollout a student builds (src/app/core/playground.ts), its undo and redo
// stacks, the reason the last change was refused, and its link code. Every accepted change is shown
// at once through the rollout slice's showRollout (validated and derived in one update, so every view
// redraws from it); the link code follows asynchronously and the URL sync writes it.
import { loadTokenizers, rolloutToJson, type RolloutJson } from '../../rollout';
import { emptyRollout, PLAYGROUND_ID, type PlayOutcome } from '../core/playground';
import { rehearsalSteps } from '../core/rehearsal';
import type { ViewData } from '../core/viewData';
import { fetchShipped } from '../load/shipped';
import { encodePlay, PLAY_LINK_LIMIT } from '../url/playLink';
import { whenIdle } from './idle';
import type { SourceRef } from '../url/schema';
import type { PlaygroundSlice, PlayStart, Slice } from './types';

export const PLAYGROUND_SOURCE: SourceRef = { kind: 'playground', name: PLAYGROUND_ID };

/** The built-in example the playground starts from: the worked example in words. */
const START_EXAMPLE = 'examples/worked-words.json';

/**
 * The views of the last rollouts shown, by their JSON object (a change makes a new one; none is
 * changed in place): undo and redo show a state seen before, so they show its view again (with the
 * plans, masks and find text cached on it) instead of validating and deriving it anew.
 */
const RECENT_VIEWS = 16;
const recentViews = new Map<RolloutJson, ViewData>();

/** Counts link codes asked for: an older one arriving late is dropped. */
let links = 0;

/** How long the link code waits at most for the page to be idle after a change. */
const LINK_IDLE_MS = 300;

/** The largest tree (N_packed) the playground rehearses its edits on: four times the 500-token rollout its budget is measured on. */
const REHEARSAL_MAX_PACKED = 5_000;

/** How long a rehearsal step waits at most for the page to be idle. */
const REHEARSAL_IDLE_MS = 1000;

export const createPlaygroundSlice: Slice<PlaygroundSlice> = (set, get) => {
  /** Shows `rollout` in every view (an empty one leaves the views as they are) and starts its link code. */
  const show = (rollout: RolloutJson): boolean => {
    if (rollout.events.length > 0) {
      const selected = get().selectedTarget;
      const view = recentViews.get(rollout);
      if (!get().showRollout(rollout, PLAYGROUND_SOURCE, { persist: false, target: selected, view })) return false;
      // Most recent last; the oldest goes past RECENT_VIEWS.
      recentViews.delete(rollout);
      recentViews.set(rollout, view ?? get().view!);
      if (recentViews.size > RECENT_VIEWS) recentViews.delete(recentViews.keys().next().value!);
    }
    // The code follows once the views have drawn the change and the page is idle (compressing is not
    // free, and the frames after an edit are the views'); meanwhile the old one stays (one URL write
    // per change, not two). A change made before then is encoded instead.
    const ask = ++links;
    whenIdle(() => {
      if (ask !== links) return;
      void encodePlay(rollout).then(
        (code) => {
          if (ask === links) set({ playLink: { code: code.length <= PLAY_LINK_LIMIT ? code : null, length: code.length } });
        },
        () => undefined,
      );
    }, LINK_IDLE_MS);
    return true;
  };

  const start = (rollout: RolloutJson) => {
    set({ play: { rollout, past: [], future: [], refusal: null } });
    if (show(rollout)) rehearse(rollout);
  };

  /** Each kind of edit made once on a copy of the opened rollout, one per idle moment, until the student edits (core/rehearsal.ts). */
  const rehearse = (rollout: RolloutJson) => {
    // Only a rollout of the size a class edits by hand: a large one's derivations would hold the page for long.
    if ((get().view?.tree.figures.packedLength ?? Infinity) > REHEARSAL_MAX_PACKED) return;
    const steps = rehearsalSteps(rollout, get().rows);
    const next = () => {
      const step = steps.shift();
      if (get().play?.rollout !== rollout) return;
      if (!step) {
        performance.mark('mw:play-rehearsed'); // for the benchmark: the first edit is timed after this
        return;
      }
      try {
        step();
      } catch {
        // A rehearsal only warms the code: what it finds wrong, a real edit says where it is made.
      }
      whenIdle(next, REHEARSAL_IDLE_MS);
    };
    whenIdle(next, REHEARSAL_IDLE_MS);
  };

  return {
    play: null,
    playLink: null,

    async openPlayground(from: PlayStart) {
      try {
        let rollout: RolloutJson;
        if (from === 'words' || from === 'example') await loadTokenizers(['gpt2']);
        if (from === 'words') rollout = emptyRollout('gpt2');
        else if (from === 'bytes') rollout = emptyRollout('byte');
        else if (from === 'example') rollout = { ...((await (await fetchShipped(START_EXAMPLE)).json()) as RolloutJson), id: PLAYGROUND_ID };
        else if (from === 'shown') {
          const view = get().view;
          if (!view) throw new Error('no rollout is shown to start from');
          rollout = { ...rolloutToJson(view.rollout), id: PLAYGROUND_ID };
        } else {
          rollout = from.rollout;
          if (rollout.tokenizer === 'gpt2') await loadTokenizers(['gpt2']);
        }
        start(rollout);
        if (typeof from === 'object' && get().loadError) {
          // A link whose rollout does not validate: say so in the playground too.
          set({ play: { rollout: emptyRollout('gpt2'), past: [], future: [], refusal: get().loadError } });
        }
      } catch (error) {
        set({ loadError: `playground: ${error instanceof Error ? error.message : String(error)}` });
      }
    },

    playChange(change: (rollout: RolloutJson) => PlayOutcome) {
      const play = get().play;
      if (!play) return false;
      let outcome: PlayOutcome;
      try {
        outcome = change(play.rollout);
      } catch (error) {
        outcome = { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
      if (!outcome.ok) {
        set({ play: { ...play, refusal: outcome.reason } });
        return false;
      }
      set({ play: { rollout: outcome.rollout, past: [...play.past, play.rollout], future: [], refusal: null } });
      if (!show(outcome.rollout)) {
        set({ play: { ...play, refusal: get().loadError ?? 'the views could not show this rollout' }, loadError: null });
        show(play.rollout);
        return false;
      }
      return true;
    },

    playUndo() {
      const play = get().play;
      if (!play?.past.length) return;
      const rollout = play.past[play.past.length - 1];
      set({ play: { rollout, past: play.past.slice(0, -1), future: [play.rollout, ...play.future], refusal: null } });
      show(rollout);
    },

    playRedo() {
      const play = get().play;
      if (!play?.future.length) return;
      const [rollout, ...future] = play.future;
      set({ play: { rollout, past: [...play.past, play.rollout], future, refusal: null } });
      show(rollout);
    },

    closePlayground() {
      recentViews.clear();
      set({ play: null });
    },
  };
};
