// Importer for RL trainers' rollout dumps in token space (docs/importers.md): JSONL, one record per
// model call ("turn") with the field names of TRL/slime, SkyRL or verl, or SkyRL's column form (one
// object of lists, a GeneratorOutput), grouped by trajectory and ordered by step. Each trajectory is
// aligned call by call (createCallsAligner): a turn whose prompt does not extend the last view is an
// edit, surviving outputs keep their ids. Two passes: the first indexes trajectories (lines, steps,
// vocabulary, fields not used), the second aligns each trajectory as its turns arrive and lets it go
// when its last turn is in, so memory follows the open trajectories, not the file.

import { ValidationError, quote, type SourceLocation } from '../errors';
import { ROLLOUT_FORMAT, type RolloutJson } from '../format';
import { isObject, type Json, parseJsonAt } from '../records';
import { getTokenizer } from '../tokenizer';
import { TOKENIZER_VOCAB, type TokenizerName } from '../tokenizer-types';
import { MAX_VOCAB } from '../validate';
import { createCallsAligner, type Call } from './calls';
import { readLines, type OpenSource } from './lines';
import type { FileImporter, ImportedRollout, ImportOptions } from './types';

export const TURNS = 'turns';

/** Field names by role, in the order they are looked up; the first present one counts. */
const FIELDS = {
  prompt: ['prompt_ids', 'prompt_token_ids'],
  output: ['output_ids', 'response_ids', 'completion_ids'],
  logprobs: ['output_log_probs', 'rollout_logprobs', 'response_logprobs', 'logprobs'],
  mask: ['loss_mask', 'loss_masks', 'response_mask'],
  trajectory: ['trajectory_ids', 'trajectory_id'],
  step: ['step', 'turn'],
  last: ['is_last_step'],
  reward: ['reward', 'reward_score', 'rewards'],
  group: ['group', 'uid'],
  vocab: ['vocab_size', 'vocab'],
  promptText: ['prompt'],
  outputText: ['output', 'response', 'completion'],
} as const;

/** The first of `names` that the record (or its verl-style `extra_fields`) holds, with the name used. */
function field(record: Json, names: readonly string[]): { name: string; value: unknown; extra: boolean } | undefined {
  for (const scope of [record, isObject(record.extra_fields) ? record.extra_fields : {}]) {
    for (const name of names) if (scope[name] !== undefined && scope[name] !== null) return { name, value: scope[name], extra: scope !== record };
  }
  return undefined;
}

/** Whether a parsed record looks like a turn record (format detection). */
export function isTurnRecord(value: unknown): boolean {
  return (
    isObject(value) && value.format === undefined && Array.isArray(field(value, FIELDS.prompt)?.value) && Array.isArray(field(value, FIELDS.output)?.value)
  );
}

/** SkyRL's column form: one object whose prompt and output fields are lists of token-id lists (a GeneratorOutput). */
export function isTurnColumns(value: unknown): boolean {
  if (!isObject(value) || value.format !== undefined) return false;
  const prompts = value.prompt_token_ids ?? value.prompt_ids;
  const outputs = value.response_ids ?? value.output_ids;
  return Array.isArray(prompts) && Array.isArray(outputs) && prompts.length === outputs.length && prompts.every(Array.isArray) && outputs.every(Array.isArray);
}

export function looksLikeTurns(sample: readonly unknown[]): boolean {
  return sample.length > 0 && (sample.every(isTurnRecord) || (sample.length === 1 && isTurnColumns(sample[0])));
}

/** Whose field names a record uses, for the import report. */
function conventionOf(record: Json): string {
  const output = field(record, FIELDS.output)?.name;
  const logprobs = field(record, FIELDS.logprobs)?.name;
  if (output === 'output_ids' || output === 'completion_ids') return 'trl/slime';
  if (logprobs === 'response_logprobs' || field(record, ['response_mask'])) return 'verl';
  return 'skyrl';
}

/** Where a turn is: its file line, and for SkyRL columns the row (messages say `row N: ...`). */
interface Where {
  line: number;
  row?: number;
}

interface Turn extends Where {
  prompt: number[];
  output: number[];
  logprobs?: number[];
  mask?: number[];
  /** Exact identity of its trajectory (type and value), and the rollout id it names. */
  identity?: string;
  name?: string;
  group?: string;
  step?: number;
  last?: boolean;
  reward?: number;
  vocab?: number;
  text?: { prompt?: string; output?: string };
  /** Fields of the record no role uses, by name (`extra_fields.x` for verl's extra fields). */
  unused: string[];
}

const at = (file: string, where: Where): SourceLocation & { line: number } => ({ file, line: where.line });
const fail = (file: string, where: Where, reason: string): never => {
  throw new ValidationError(at(file, where), where.row === undefined ? reason : `row ${where.row}: ${reason}`);
};

/** A trajectory id's exact identity and the rollout id it names (SkyRL names `{instance_id, repetition_id}` by its to_string()). */
function trajectoryKey(t: unknown): { identity: string; name: string; group?: string; step?: unknown } | undefined {
  if (typeof t === 'string') return { identity: `s:${t}`, name: t };
  if (typeof t === 'number' && Number.isFinite(t)) return { identity: `n:${t}`, name: String(t) };
  if (isObject(t) && (typeof t.instance_id === 'string' || typeof t.instance_id === 'number')) {
    const rep = t.repetition_id;
    if (rep !== undefined && rep !== null && typeof rep !== 'string' && typeof rep !== 'number') return undefined;
    const hasRep = rep !== undefined && rep !== null;
    return {
      identity: `o:${JSON.stringify([typeof t.instance_id, t.instance_id, hasRep ? typeof rep : null, hasRep ? rep : null])}`,
      name: hasRep ? `${t.instance_id}_${rep}` : String(t.instance_id),
      group: String(t.instance_id),
      step: t.step,
    };
  }
  return undefined;
}

function readTurn(record: unknown, file: string, where: Where): Turn {
  const no = (reason: string): never => fail(file, where, reason);
  if (!isObject(record)) return no(`expected a turn record (an object with prompt_ids and output_ids or response_ids), got ${quote(record)}`);
  const used = new Set<string>();
  const take = (names: readonly string[]) => {
    const f = field(record, names);
    if (f) used.add(f.extra ? `extra_fields.${f.name}` : f.name);
    return f;
  };
  const ids = (names: readonly string[], what: string): { name: string; ids: number[] } => {
    const f = take(names);
    if (!f) return no(`no ${what} (${names.join(', ')})`);
    if (!Array.isArray(f.value)) return no(`${f.name} must be a list of token ids, got ${quote(f.value)}`);
    const list = f.value as unknown[];
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= MAX_VOCAB)
        no(`${f.name}[${i}] = ${quote(v)} is not a token id (an integer in [0, ${MAX_VOCAB}))`);
    }
    return { name: f.name, ids: list as number[] };
  };
  const prompt = ids(FIELDS.prompt, 'prompt').ids;
  const { name: outputName, ids: output } = ids(FIELDS.output, 'output');
  const turn: Turn = { ...where, prompt, output, unused: [] };

  const mask = take(FIELDS.mask);
  if (mask) {
    if (!Array.isArray(mask.value) || mask.value.length !== output.length)
      no(`${mask.name} must have one 0 or 1 per token of ${outputName} (${output.length})`);
    turn.mask = (mask.value as unknown[]).map((v, i) => {
      if (v === 1 || v === true) return 1;
      if (v === 0 || v === false) return 0;
      return no(`${mask.name}[${i}] = ${quote(v)} is not 0 or 1`);
    });
  }
  const logprobs = take(FIELDS.logprobs);
  if (logprobs) {
    if (!Array.isArray(logprobs.value) || logprobs.value.length !== output.length) {
      no(
        `${logprobs.name} must have one number per token of ${outputName} (${output.length}), got ${Array.isArray(logprobs.value) ? logprobs.value.length : quote(logprobs.value)}`,
      );
    }
    (logprobs.value as unknown[]).forEach((v, i) => {
      const generated = !turn.mask || turn.mask[i] === 1;
      if (generated && (typeof v !== 'number' || !Number.isFinite(v) || v > 0)) no(`${logprobs.name}[${i}] = ${quote(v)} is not a finite number <= 0`);
    });
    turn.logprobs = logprobs.value as number[];
  }
  if (prompt.length === 0 && output.length > 0) no('the output has no token before it (empty prompt)');

  const trajectory = take(FIELDS.trajectory);
  if (trajectory) {
    const key = trajectoryKey(trajectory.value);
    if (!key) no(`${trajectory.name} must be a string, a number or {instance_id, repetition_id}, got ${quote(trajectory.value)}`);
    turn.identity = key!.identity;
    turn.name = key!.name;
    if (key!.group !== undefined) turn.group = key!.group;
    // SkyRL's TrajectoryID carries the step of step-wise training.
    if (key!.step !== undefined && key!.step !== null) turn.step = key!.step as number;
  }
  const step = take(FIELDS.step);
  if (step) turn.step = step.value as number;
  if (turn.step !== undefined && (typeof turn.step !== 'number' || !Number.isInteger(turn.step))) no(`step must be an integer, got ${quote(turn.step)}`);
  const last = take(FIELDS.last);
  if (last) {
    if (typeof last.value !== 'boolean') no(`is_last_step must be true or false, got ${quote(last.value)}`);
    turn.last = last.value as boolean;
  }
  const reward = take(FIELDS.reward);
  if (reward) {
    const r = reward.value;
    // SkyRL's step-wise rewards are per token (the step's reward at its last response token).
    const value = Array.isArray(r) ? r.reduce((a: number, b) => a + (typeof b === 'number' ? b : NaN), 0) : r;
    if (typeof value !== 'number' || !Number.isFinite(value)) no(`${reward.name} must be a finite number or a list of them, got ${quote(r)}`);
    turn.reward = value as number;
  }
  const group = take(FIELDS.group);
  if (group && turn.group === undefined) {
    if (typeof group.value !== 'string' && typeof group.value !== 'number') no(`${group.name} must be a string or a number, got ${quote(group.value)}`);
    turn.group = String(group.value);
  }
  const vocab = take(FIELDS.vocab);
  if (vocab) {
    if (typeof vocab.value !== 'number' || !Number.isInteger(vocab.value) || vocab.value < 1 || vocab.value > MAX_VOCAB) {
      no(`${vocab.name} must be an integer in [1, ${MAX_VOCAB}], got ${quote(vocab.value)}`);
    }
    turn.vocab = vocab.value as number;
  }
  const promptText = take(FIELDS.promptText);
  const outputText = take(FIELDS.outputText);
  if (typeof promptText?.value === 'string' || typeof outputText?.value === 'string') {
    turn.text = {};
    if (typeof promptText?.value === 'string') turn.text.prompt = promptText.value;
    if (typeof outputText?.value === 'string') turn.text.output = outputText.value;
  }
  // Nothing is dropped silently: every other field is named in the report.
  for (const key of Object.keys(record)) {
    if (key === 'extra_fields' && isObject(record.extra_fields)) {
      for (const k of Object.keys(record.extra_fields))
        if (!used.has(`extra_fields.${k}`) && record.extra_fields[k] !== null) turn.unused.push(`extra_fields.${k}`);
    } else if (!used.has(key) && record[key] !== null) turn.unused.push(key);
  }
  return turn;
}

/** A turn as calls: one per run of generated tokens (all of the output without a mask); the tokens before a run are its input. */
function callsOf(turn: Turn): Call[] {
  const call = (from: number, to: number): Call => ({
    input: [...turn.prompt, ...turn.output.slice(0, from)],
    output: turn.output.slice(from, to),
    ...(turn.logprobs ? { logprobs: turn.logprobs.slice(from, to) } : {}),
  });
  if (!turn.mask) return [call(0, turn.output.length)];
  const calls: Call[] = [];
  for (let i = 0; i < turn.mask.length; ) {
    if (turn.mask[i] === 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < turn.mask.length && turn.mask[j] === 1) j++;
    calls.push(call(i, j));
    i = j;
  }
  // Nothing generated (an aborted call): its prompt still is the view the harness showed.
  return calls.length ? calls : [{ input: turn.prompt.slice(), output: [] }];
}

// ---------------------------------------------------------------------------------------------
// Records of a dump: JSON lines, or the rows of SkyRL's column form.

/** One record to read: its parsed value and where it is. */
interface RawRecord extends Where {
  value: unknown;
}

/** The rows of a column-form object: each list of the object's row count gives row i its element i; other fields are the document's. */
function columnRows(doc: Json, line: number): { rows: RawRecord[]; documentFields: string[] } {
  const prompts = (doc.prompt_token_ids ?? doc.prompt_ids) as unknown[];
  const n = prompts.length;
  const columns = Object.keys(doc).filter((k) => Array.isArray(doc[k]) && (doc[k] as unknown[]).length === n);
  const documentFields = Object.keys(doc).filter((k) => !columns.includes(k) && doc[k] !== null);
  const rows: RawRecord[] = [];
  for (let i = 0; i < n; i++) {
    const value: Json = Object.create(null);
    for (const k of columns) value[k] = (doc[k] as unknown[])[i];
    rows.push({ value, line, row: i });
  }
  return { rows, documentFields };
}

// ---------------------------------------------------------------------------------------------
// Pass 1: the index of trajectories.

interface TrajectoryIndex {
  name: string;
  /** Place (placeKey) of its first record in the file. */
  first: number;
  /** Its turns' places in feed order (sorted by step when the records have one): one number for a single turn, else a list. */
  order: number | number[];
  /** Their steps in file order while pass 1 runs, when the records have them. */
  steps?: number | number[];
  /** The place of a record without a step in a trajectory whose other records have one. */
  missingStep?: number;
}

export interface TurnsSummary {
  /** The number of trajectories: the rollouts the dump yields. */
  trajectories: number;
  records: number;
  convention: string;
  /** Fields no role uses, with the number of records (or documents) that hold them. */
  unused: Record<string, number>;
}

interface Index extends TurnsSummary {
  vocab: number;
  byIdentity: Map<string, TrajectoryIndex>;
  /** Trajectories without ids: runs of consecutive records closed by is_last_step, by their first place: the records they hold. */
  runs: Map<number, number>;
  /** Line of the column document (rows have negative places). */
  documentLine: number;
}

/** A record's place as one number: its line, or -(row + 1) for a row of the column form (whose line is the document's). */
const placeKey = (w: Where) => (w.row === undefined ? w.line : -(w.row + 1));
const whereOf = (key: number, documentLine: number): Where => (key >= 0 ? { line: key } : { line: documentLine, row: -key - 1 });

/** How an identity is shown in a message: `1 (a number)`, `"1" (a string)`, SkyRL's object as JSON. */
function showIdentity(identity: string): string {
  const value = identity.slice(2);
  if (identity.startsWith('s:')) return `${JSON.stringify(value)} (a string)`;
  if (identity.startsWith('n:')) return `${value} (a number)`;
  const [, instance, , repetition] = JSON.parse(value) as unknown[];
  return JSON.stringify(repetition === null ? { instance_id: instance } : { instance_id: instance, repetition_id: repetition });
}

/** The tokenizer a dump's ids come from: a built-in one, or a model folder's (`hf:<name>`, with the model's vocabulary). */
export type IdsTokenizer = TokenizerName | { name: string; vocab: number };
const idsName = (t: IdsTokenizer): string => (typeof t === 'string' ? t : t.name);
const idsVocab = (t: IdsTokenizer): number => (typeof t === 'string' ? TOKENIZER_VOCAB[t] : t.vocab);

const push = (list: number | number[], value: number): number[] => (typeof list === 'number' ? [list, value] : (list.push(value), list));

function createIndex(file: string, tokenizer: IdsTokenizer | undefined) {
  // Per trajectory: its index entry, and its rollout name (to refuse two identities that name one rollout).
  const byIdentity = new Map<string, TrajectoryIndex>();
  const byName = new Map<string, string>();
  const runs = new Map<number, number>();
  let open: { start: number; count: number } | null = null;
  let documentLine = 1;
  // Null prototype: a field named __proto__ is counted like any other.
  const unused: Record<string, number> = Object.create(null);
  let records = 0;
  let keyed = 0;
  let unkeyed: Where | undefined;
  let convention = '';
  let maxToken = -1;
  let maxAt: Where = { line: 1 };
  let given = 0;
  return {
    documentFields(names: string[]) {
      for (const n of names) unused[n] = (unused[n] ?? 0) + 1;
    },
    add(raw: RawRecord) {
      const turn = readTurn(raw.value, file, raw);
      records++;
      convention ||= conventionOf(raw.value as Json);
      for (const n of turn.unused) unused[n] = (unused[n] ?? 0) + 1;
      for (const ids of [turn.prompt, turn.output]) {
        for (const v of ids) {
          if (v > maxToken) {
            maxToken = v;
            maxAt = raw.row === undefined ? { line: raw.line } : { line: raw.line, row: raw.row };
          }
        }
      }
      given = Math.max(given, turn.vocab ?? 0);
      const where: Where = raw.row === undefined ? { line: raw.line } : { line: raw.line, row: raw.row };
      if (raw.row !== undefined) documentLine = raw.line;
      const place = placeKey(where);
      if (turn.identity === undefined) {
        unkeyed ??= where;
        open ??= { start: place, count: 0 };
        open.count++;
        // SkyRL's column form without ids: each row is a whole trajectory.
        if (turn.last || (raw.row !== undefined && turn.last === undefined)) {
          runs.set(open.start, open.count);
          open = null;
        }
        return;
      }
      keyed++;
      const t = byIdentity.get(turn.identity);
      if (!t) {
        const other = byName.get(turn.name!);
        if (other !== undefined) {
          const line = whereOf(byIdentity.get(other)!.first, documentLine).line;
          fail(
            file,
            where,
            `trajectory ids ${showIdentity(turn.identity)} and ${showIdentity(other)} (line ${line}) are two trajectories that both name rollout ${quote(turn.name)}; give them distinct ids`,
          );
        }
        const entry: TrajectoryIndex = { name: turn.name!, first: place, order: place };
        if (turn.step !== undefined) entry.steps = turn.step;
        byIdentity.set(turn.identity, entry);
        byName.set(turn.name!, turn.identity);
        return;
      }
      // Steps: all of a trajectory's records have one, or none does.
      if ((t.steps === undefined) !== (turn.step === undefined)) t.missingStep ??= turn.step === undefined ? place : t.first;
      else if (t.steps !== undefined) t.steps = push(t.steps, turn.step!);
      t.order = push(t.order, place);
    },
    finish(): Index {
      if (records === 0) throw new ValidationError({ file }, 'file is empty');
      if (open) runs.set(open.start, open.count);
      if (keyed > 0 && unkeyed) {
        const without = unkeyed;
        fail(file, without, 'no trajectory id (trajectory_ids or trajectory_id), though other records of the file have one');
      }
      for (const t of byIdentity.values()) {
        if (t.missingStep !== undefined)
          fail(file, whereOf(t.missingStep, documentLine), `trajectory ${quote(t.name)}: no step, though its other records have one`);
        if (Array.isArray(t.order) && Array.isArray(t.steps)) {
          const steps = t.steps;
          const sorted = t.order.map((w, i) => ({ w, s: steps[i] })).sort((a, b) => a.s - b.s || Math.abs(a.w) - Math.abs(b.w));
          for (let i = 1; i < sorted.length; i++) {
            if (sorted[i].s === sorted[i - 1].s) {
              fail(
                file,
                whereOf(sorted[i].w, documentLine),
                `trajectory ${quote(t.name)}: step ${sorted[i].s} appears twice (also on line ${whereOf(sorted[i - 1].w, documentLine).line})`,
              );
            }
          }
          t.order = sorted.map((x) => x.w);
        }
        // The order is all pass 2 needs.
        delete t.steps;
      }
      // One vocabulary for the file: a given one (the largest), else the largest token id + 1.
      if (tokenizer !== undefined) {
        const own = idsVocab(tokenizer);
        if (given > own) throw new ValidationError({ file }, `the dump's vocabulary of ${given} is larger than ${idsName(tokenizer)}'s ${own}`);
        given = own;
      }
      if (given > 0 && maxToken >= given) fail(file, maxAt, `token id ${maxToken} is outside the vocabulary of ${given}`);
      byName.clear();
      return { trajectories: byIdentity.size + runs.size, records, convention, unused, vocab: given || maxToken + 1, byIdentity, runs, documentLine };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Pass 2: each trajectory aligned as its turns arrive, emitted when its last turn is in.

interface OpenTrajectory {
  name: string;
  order: number | number[] | { start: number; count: number };
  next: number;
  /** Turns that arrived before their turn in the order (a dump out of step order). */
  early: Map<number, Turn>;
  aligner: ReturnType<typeof createCallsAligner>;
  group?: string;
  reward?: number;
  lines: number[];
  texts: { line: number; prompt?: string; output?: string }[];
}

const CHANGED = 'the file changed while it was being imported';

function createBuilder(index: Index, file: string, tokenizer: IdsTokenizer | undefined) {
  const openOf = (t: { name: string; order: OpenTrajectory['order'] }): OpenTrajectory => ({
    name: t.name,
    order: t.order,
    next: 0,
    early: new Map(),
    aligner: createCallsAligner(),
    lines: [],
    texts: [],
  });
  // Runs without ids are known by their first place; keyed trajectories by their identity.
  const opened = new Map<string, OpenTrajectory>();
  /** The place of a trajectory's i-th turn (a run's turns are consecutive records, taken in file order). */
  const placeAt = (o: OpenTrajectory, i: number) => (typeof o.order === 'number' ? (i === 0 ? o.order : NaN) : Array.isArray(o.order) ? o.order[i] : NaN);
  const length = (o: OpenTrajectory) => (typeof o.order === 'number' ? 1 : Array.isArray(o.order) ? o.order.length : o.order.count);
  let currentRun: OpenTrajectory | undefined;

  const rollout = (o: OpenTrajectory): ImportedRollout => {
    const value: Json = { format: ROLLOUT_FORMAT, id: o.name, vocab: index.vocab };
    if (tokenizer !== undefined) value.tokenizer = idsName(tokenizer);
    if (o.reward !== undefined) value.reward = o.reward;
    if (o.group !== undefined) value.group = o.group;
    value.meta = {
      import: {
        format: TURNS,
        convention: index.convention,
        records: o.lines.length,
        lines: o.lines.join(','),
        ...(Object.keys(index.unused).length ? { unusedFields: Object.keys(index.unused) } : {}),
      },
      ...(o.texts.some((x) => x.prompt !== undefined || x.output !== undefined) ? { turns: o.texts } : {}),
    };
    value.events = o.aligner.events;
    const first = typeof o.order === 'number' ? o.order : Array.isArray(o.order) ? o.order[0] : o.order.start;
    return { value: value as unknown as RolloutJson, line: whereOf(first, index.documentLine).line };
  };

  const feed = (o: OpenTrajectory, turn: Turn) => {
    for (const call of callsOf(turn)) o.aligner.add(call);
    if (o.next === 0) o.group = turn.group;
    if (turn.reward !== undefined) o.reward = turn.reward;
    o.lines.push(turn.row === undefined ? turn.line : turn.row);
    o.texts.push({ line: turn.row === undefined ? turn.line : turn.row, ...turn.text });
    o.next++;
  };

  return {
    /** After the last record: every trajectory was completed (else the file changed between the passes). */
    finish() {
      if (opened.size > 0 || index.byIdentity.size > 0) throw new ValidationError({ file }, CHANGED);
    },
    /** The rollouts this record completes (none, or one: its trajectory's). */
    add(raw: RawRecord): ImportedRollout[] {
      const turn = readTurn(raw.value, file, raw);
      let o: OpenTrajectory;
      if (turn.identity === undefined) {
        const start = placeKey(raw);
        const count = index.runs.get(start);
        if (count !== undefined) currentRun = openOf({ name: `turns-${raw.row === undefined ? raw.line : `row${raw.row}`}`, order: { start, count } });
        if (!currentRun) return fail(file, raw, CHANGED);
        o = currentRun;
        feed(o, turn);
        return o.next < length(o) ? [] : [rollout(o)];
      } else {
        const existing = opened.get(turn.identity);
        if (existing) o = existing;
        else {
          const entry = index.byIdentity.get(turn.identity);
          if (!entry) return fail(file, raw, CHANGED);
          // Its index entry is let go as it opens: what stays is the open trajectory's own state.
          index.byIdentity.delete(turn.identity);
          o = openOf(entry);
          opened.set(turn.identity, o);
        }
      }
      const place = placeKey(raw);
      if (placeAt(o, o.next) !== place) {
        o.early.set(place, turn);
        return [];
      }
      feed(o, turn);
      const waiting = () => (o.next < length(o) ? o.early.get(placeAt(o, o.next)) : undefined);
      for (let t = waiting(); t; t = waiting()) {
        o.early.delete(placeKey(t));
        feed(o, t);
      }
      if (o.next < length(o)) return [];
      if (turn.identity !== undefined) opened.delete(turn.identity);
      return [rollout(o)];
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Drivers.

export interface TurnsImport {
  rollouts: ImportedRollout[];
  records: number;
  convention: string;
  unused: Record<string, number>;
}

/** A parsed turns dump: its trajectories indexed, each built into a rollout only when taken. */
export interface TurnsDump extends TurnsSummary {
  /** One rollout per trajectory (not yet validated), in the order their last turns stand in the file. Iterate it once. */
  rollouts(): Generator<ImportedRollout>;
}

/** The records of a text: JSON lines, or one column-form document. */
function* textRecords(text: string, file: string, documentFields?: (names: string[]) => void): Generator<RawRecord> {
  const lines = text.split('\n');
  let first = true;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (i === 0 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    line = line.trim();
    if (!line) continue;
    if (first && line.startsWith('{') && !isTurnRecordText(line)) {
      // A column-form document may span lines (pretty-printed): read the rest as one value.
      const rest = lines.slice(i).join('\n');
      let doc: unknown;
      try {
        doc = JSON.parse(rest);
      } catch {
        doc = undefined;
      }
      if (isTurnColumns(doc)) {
        const { rows, documentFields: fields } = columnRows(doc as Json, i + 1);
        documentFields?.(fields);
        yield* rows;
        return;
      }
    }
    first = false;
    yield { value: parseJsonAt(line, { file, line: i + 1 }), line: i + 1 };
  }
}

/** Cheap test on a first line: a one-line column document parses as a record too, so look at its shape. */
function isTurnRecordText(line: string): boolean {
  try {
    const v = JSON.parse(line);
    return !isTurnColumns(v);
  } catch {
    return false;
  }
}

/**
 * Reads a turns dump held in memory (each problem a ValidationError naming its line) and indexes it.
 * `tokenizer` names the tokenizer the trainer's ids come from (recorded on every rollout, so a model
 * of that vocabulary scores them); the ids are kept as they are, never re-tokenized.
 */
export function readTurnsText(text: string, file: string, options: { tokenizer?: IdsTokenizer } = {}): TurnsDump {
  const index = createIndex(file, options.tokenizer);
  for (const raw of textRecords(text, file, (names) => index.documentFields(names))) index.add(raw);
  const done = index.finish();
  const { trajectories, records, convention, unused } = done;
  return {
    trajectories,
    records,
    convention,
    unused,
    *rollouts() {
      const builder = createBuilder(done, file, options.tokenizer);
      for (const raw of textRecords(text, file)) yield* builder.add(raw);
      builder.finish();
    },
  };
}

/** Every trajectory of a turns dump as a v1 rollout (not yet validated). */
export function importTurnsText(text: string, file: string, options: { tokenizer?: IdsTokenizer } = {}): TurnsImport {
  const dump = readTurnsText(text, file, options);
  return { rollouts: Array.from(dump.rollouts()), records: dump.records, convention: dump.convention, unused: dump.unused };
}

/**
 * The same from a byte source read twice, line by line: memory follows the trajectories open at once
 * (their live views and events) and one index entry per record, never the file. A column-form
 * document is one value and is read whole. Each rollout is yielded as its trajectory ends, and the
 * reading waits until it is taken (so rollouts never pile up); the summary is the return value.
 */
export async function* turnsRollouts(
  open: OpenSource,
  file: string,
  options: { tokenizer?: IdsTokenizer } = {},
): AsyncGenerator<ImportedRollout, TurnsSummary> {
  const index = createIndex(file, options.tokenizer);
  let columns = false;
  let first = true;
  const lines: string[] = [];
  for await (const { text, line } of readLines(open())) {
    const t = text.trim();
    if (!t) continue;
    if (columns || (first && t.startsWith('{') && !isTurnRecordText(t))) {
      // Not a record on its own: a column document (or a bad line, reported by textRecords).
      columns = true;
      lines.push(text);
      continue;
    }
    first = false;
    index.add({ value: parseJsonAt(t, { file, line }), line });
  }
  if (columns) {
    const text = lines.splice(0).join('\n');
    const dump = readTurnsText(text, file, options);
    yield* dump.rollouts();
    return { trajectories: dump.trajectories, records: dump.records, convention: dump.convention, unused: dump.unused };
  }
  const done = index.finish();
  const builder = createBuilder(done, file, options.tokenizer);
  for await (const { text, line } of readLines(open())) {
    const t = text.trim();
    if (!t) continue;
    yield* builder.add({ value: parseJsonAt(t, { file, line }), line });
  }
  builder.finish();
  const { trajectories, records, convention, unused } = done;
  return { trajectories, records, convention, unused };
}

/**
 * The ids' tokenizer when an import names a model folder's (`hf:<name>`, registered with its vocabulary): the dump
 * is named after it, as `mw import --tokenizer MODEL-FOLDER` names it. A built-in text tokenizer (byte, the page's
 * default) does not apply to a trainer's ids.
 */
function folderIds(options: ImportOptions): IdsTokenizer | undefined {
  const name = options.tokenizer as string | undefined;
  const tokenizer = name?.startsWith('hf:') ? getTokenizer(name) : undefined;
  return tokenizer ? { name: tokenizer.name, vocab: tokenizer.vocab } : undefined;
}

export const turnsImporter: FileImporter = {
  name: TURNS,
  detect: (sample) => looksLikeTurns(sample),
  readText(text, file, options = {}) {
    const { rollouts, records, convention, unused } = importTurnsText(text, file, { tokenizer: folderIds(options) });
    return { rollouts, report: { kind: 'turns', convention, records, rollouts: rollouts.length, unused } };
  },
  async *rollouts(open, file, options = {}) {
    const { trajectories, records, convention, unused } = yield* turnsRollouts(open, file, { tokenizer: folderIds(options) });
    return { kind: 'turns', convention, records, rollouts: trajectories, unused };
  },
};
