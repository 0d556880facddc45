// What to conclude from the drift figures (docs/metrics.md, "The verdict"): the noise floor is the exact
// methods' logdiff on this model and batch (they are exact up to float32 round-off, or up to the engine that
// wrote the rollout's logprobs), a method whose |μ| lies within FLOOR_FACTOR floors is "at the floor", and
// each other method's sign is read for what it means for that method. Pure: numbers and labels come in.

import type { Method } from '../plan/types';

/** A method whose |μ| is at most this many floors reads "at the floor", not signed. */
export const FLOOR_FACTOR = 4;
/**
 * The smallest floor: float32 round-off of a log-probability of a few nats between two layouts is about
 * 1e-7 to 1e-6; when both exact methods happen to agree bit for bit, a floor of 0 would sign round-off.
 */
export const MIN_FLOOR = 1e-6;
/** Exact methods this far (mean |Δ|, nats) from the rollout's logprobs: those are not this model's (the app's OTHER_POLICY_LOGDIFF). */
export const FOREIGN_LOGPROBS = 0.1;
/** The methods that score every target under its live prefix (Theorem 1, docs/methods.md). */
export const EXACT_METHODS: readonly Method[] = ['logit-tree', 'packed-4d'];

/** One method's figures against one reference (the rollout's logprobs, or the live-prefix score). */
export interface DriftFigures {
  method: Method;
  /** Targets averaged over; 0: not scored against this reference. */
  n: number;
  logdiff: number | null;
  mu: number | null;
}

export type VerdictState = 'at-floor' | 'below' | 'above' | 'not-scored';

export interface MethodVerdict {
  method: Method;
  state: VerdictState;
  /** |μ| / floor (null when not scored). */
  floors: number | null;
  /** What this state means for this method, in a sentence. */
  meaning: string;
}

export interface DriftVerdict {
  reference: 'rollout' | 'live';
  /** max(MIN_FLOOR, the exact methods' largest logdiff against the reference). */
  floor: number;
  factor: number;
  /** The exact methods are FOREIGN_LOGPROBS or more from the rollout's logprobs: another model or engine wrote them. */
  foreign: boolean;
  methods: MethodVerdict[];
  /** One sentence: what to conclude. */
  conclusion: string;
}

export interface VerdictOptions {
  /** A method's name for people (default: its id). */
  label?: (method: Method) => string;
  /** A signed figure for people (default: 2 significant digits); magnitudes drop its "+". */
  format?: (x: number) => string;
}

const LEAKAGE_POSITIVE =
  'time-travel leakage can only lower its score where the final walk lacks evidence the live prefix held, so above zero means this model reads the ' +
  'final walk better than the live prefix: a model trained on final walks (under Naive-Compressed, or as SDCC’s student) learned these tokens in ' +
  'that context and never under their live prefix, or summaries written later state what the token says (the answer, the fact being sought), ' +
  'which a trained model or an expert’s demonstrations (tokens chosen knowing the outcome, not sampled from this model) read as a hint; ' +
  'it is not stale context, which Naive-Compressed has none of';

/** What a state means for a method (the sign's reading depends on the method). */
export function signMeaning(method: Method, state: VerdictState, foreign = false): string {
  if (state === 'not-scored') return 'not scored against this reference';
  if (foreign && state === 'at-floor') {
    return EXACT_METHODS.includes(method)
      ? 'exact (Theorem 1): its whole figure is the gap between this model and the one that wrote the logprobs'
      : 'within the gap between this model and the one that wrote the logprobs: its replay effect cannot be told apart from it';
  }
  if (EXACT_METHODS.includes(method)) {
    return state === 'at-floor'
      ? 'exact (Theorem 1): each target under its live prefix; its figure is round-off and sets the floor'
      : 'exact, yet beyond the floor: a bug or a non-deterministic kernel, not a property of the method';
  }
  if (state === 'at-floor') return 'within the floor: on these targets its context changes nothing measurable, so its sign means nothing';
  const student = method === 'naive-compressed' || method === 'sdcc';
  if (student) {
    return state === 'below'
      ? 'time-travel leakage: targets scored on the final walk lose evidence their live prefix held and read summaries written after them'
      : `the final walk makes the policy’s tokens likelier than their live prefix did; ${LEAKAGE_POSITIVE}`;
  }
  // naive-full
  return state === 'above'
    ? 'stale context: evicted evidence left on the tape makes the tokens likelier than when they were generated'
    : 'the evicted content left on the tape distracts from the tokens the policy chose (stale context that hurts)';
}

/** The verdict of one reference's figures (every method's, the exact ones included, which set the floor). */
export function driftVerdict(figures: readonly DriftFigures[], reference: 'rollout' | 'live', options: VerdictOptions = {}): DriftVerdict {
  const label = options.label ?? ((m: Method) => m);
  const format = options.format ?? ((x: number) => x.toPrecision(2));
  let exact = 0;
  for (const f of figures) if (EXACT_METHODS.includes(f.method) && f.n > 0 && f.logdiff !== null) exact = Math.max(exact, f.logdiff);
  const floor = Math.max(MIN_FLOOR, exact);
  const foreign = reference === 'rollout' && exact >= FOREIGN_LOGPROBS;
  const methods = figures.map((f): MethodVerdict => {
    if (f.n === 0 || f.mu === null) return { method: f.method, state: 'not-scored', floors: null, meaning: signMeaning(f.method, 'not-scored', foreign) };
    const floors = Math.abs(f.mu) / floor;
    const state: VerdictState = floors <= FLOOR_FACTOR ? 'at-floor' : f.mu < 0 ? 'below' : 'above';
    return { method: f.method, state, floors, meaning: signMeaning(f.method, state, foreign) };
  });
  return { reference, floor, factor: FLOOR_FACTOR, foreign, methods, conclusion: conclude(figures, methods, floor, foreign, label, format) };
}

function conclude(
  figures: readonly DriftFigures[],
  verdicts: readonly MethodVerdict[],
  floor: number,
  foreign: boolean,
  label: (m: Method) => string,
  signed: (x: number) => string,
): string {
  const format = (x: number) => signed(x).replace(/^\+/, ''); // a magnitude
  if (foreign) {
    return (
      `The exact methods are ${format(floor)} nats from the rollout’s logprobs, so another model or engine wrote them: these figures measure ` +
      'that gap, not the replay; read the drift against the live prefix.'
    );
  }
  const moved = verdicts.filter((v) => v.state === 'below' || v.state === 'above');
  const still = verdicts.filter((v) => v.state === 'at-floor' && !EXACT_METHODS.includes(v.method)).map((v) => label(v.method));
  const floorText = `the floor (${format(floor)} nats, ${FLOOR_FACTOR}× it counts as round-off)`;
  if (!moved.length) {
    return `Every method is within ${floorText}: on this model and batch the replay method does not move the policy’s log-probabilities measurably.`;
  }
  const mu = (m: Method) => figures.find((f) => f.method === m)!.mu!;
  const parts = moved.map((v) => `${label(v.method)} (μ ${signed(mu(v.method))}, ${format(v.floors!)} floors)`);
  const rest = still.length ? `; ${still.join(' and ')} ${still.length === 1 ? 'stays' : 'stay'} at ${floorText}` : `, beyond ${floorText}`;
  return `${parts.join(' and ')} ${moved.length === 1 ? 'moves' : 'move'} the policy’s log-probabilities${rest}: train on this data with an exact method (or SDCC) to stay at the floor.`;
}
