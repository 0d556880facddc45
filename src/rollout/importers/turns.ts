// Importer for RL trainers' rollout dumps in token space (docs/importers.md): JSONL, one record per
// model call ("turn") with the field names of TRL/slime, SkyRL or verl, grouped by trajectory and
// ordered by step. Each trajectory becomes one calls log aligned by the calls importer (importCalls):
// a turn whose prompt does not extend the last view is an edit, surviving outputs keep their ids.

import { ValidationError, quote, type SourceLocation } from '../errors';
import type { RolloutJson } from '../format';
import { TOKENIZER_VOCAB, type TokenizerName } from '../tokenizer-types';
import { MAX_VOCAB } from '../validate';
import { CALLS_FORMAT, importCalls } from './calls';
import type { FileImporter, ImportedRollout } from './types';

export const TURNS = 'turns';

/** Field names by role, in the order they are looked up; the first present one counts. */
const FIELDS = {
  prompt: ['prompt_ids', 'prompt_token_ids'],
  output: ['output_ids', 'response_ids', 'completion_ids'],
  logprobs: ['output_log_probs', 'rollout_logprobs', 'response_logprobs', 'logprobs'],
  mask: ['loss_mask', 'response_mask'],
  trajectory: ['trajectory_ids', 'trajectory_id'],
  step: ['step', 'turn'],
  reward: ['reward', 'reward_score', 'rewards'],
  group: ['group', 'uid'],
  vocab: ['vocab_size', 'vocab'],
  promptText: ['prompt'],
  outputText: ['output', 'response', 'completion'],
} as const;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first of `names` that the record (or its verl-style `extra_fields`) holds, with the name used. */
function field(record: Json, names: readonly string[]): { name: string; value: unknown } | undefined {
  for (const scope of [record, isObject(record.extra_fields) ? record.extra_fields : {}]) {
    for (const name of names) if (scope[name] !== undefined && scope[name] !== null) return { name, value: scope[name] };
  }
  return undefined;
}

/** Whether a parsed record looks like a turn record (format detection). */
export function isTurnRecord(value: unknown): boolean {
  return isObject(value) && value.format === undefined && Array.isArray(field(value, FIELDS.prompt)?.value) && Array.isArray(field(value, FIELDS.output)?.value);
}

export function looksLikeTurns(sample: readonly unknown[]): boolean {
  return sample.length > 0 && sample.every(isTurnRecord);
}

/** Whose field names a record uses, for the import report. */
function conventionOf(record: Json): string {
  const output = field(record, FIELDS.output)?.name;
  const logprobs = field(record, FIELDS.logprobs)?.name;
  if (output === 'output_ids' || output === 'completion_ids') return 'trl/slime';
  if (logprobs === 'response_logprobs' || field(record, ['response_mask'])) return 'verl';
  return 'skyrl';
}

interface Turn {
  line: number;
  prompt: number[];
  output: number[];
  logprobs?: number[];
  mask?: number[];
  key?: string;
  group?: string;
  step?: number;
  last?: boolean;
  reward?: number;
  vocab?: number;
  text?: { prompt?: string; output?: string };
}

function readTurn(record: unknown, source: SourceLocation & { line: number }): Turn {
  const fail = (reason: string): never => {
    throw new ValidationError(source, reason);
  };
  if (!isObject(record)) return fail(`expected a turn record (an object with prompt_ids and output_ids or response_ids), got ${quote(record)}`);
  const ids = (names: readonly string[], what: string): number[] => {
    const f = field(record, names);
    if (!f) return fail(`no ${what} (${names.join(', ')})`);
    if (!Array.isArray(f.value)) return fail(`${f.name} must be a list of token ids, got ${quote(f.value)}`);
    f.value.forEach((v, i) => {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= MAX_VOCAB) fail(`${f.name}[${i}] = ${quote(v)} is not a token id (an integer in [0, ${MAX_VOCAB}))`);
    });
    return f.value as number[];
  };
  const prompt = ids(FIELDS.prompt, 'prompt');
  const output = ids(FIELDS.output, 'output');
  const outputName = field(record, FIELDS.output)!.name;
  const turn: Turn = { line: source.line, prompt, output };

  const mask = field(record, FIELDS.mask);
  if (mask) {
    if (!Array.isArray(mask.value) || mask.value.length !== output.length) fail(`${mask.name} must have one 0 or 1 per token of ${outputName} (${output.length})`);
    turn.mask = (mask.value as unknown[]).map((v, i) => {
      if (v === 1 || v === true) return 1;
      if (v === 0 || v === false) return 0;
      return fail(`${mask.name}[${i}] = ${quote(v)} is not 0 or 1`);
    });
  }
  const logprobs = field(record, FIELDS.logprobs);
  if (logprobs) {
    if (!Array.isArray(logprobs.value) || logprobs.value.length !== output.length) {
      fail(`${logprobs.name} must have one number per token of ${outputName} (${output.length}), got ${Array.isArray(logprobs.value) ? logprobs.value.length : quote(logprobs.value)}`);
    }
    (logprobs.value as unknown[]).forEach((v, i) => {
      const generated = !turn.mask || turn.mask[i] === 1;
      if (generated && (typeof v !== 'number' || !Number.isFinite(v) || v > 0)) fail(`${logprobs.name}[${i}] = ${quote(v)} is not a finite number <= 0`);
    });
    turn.logprobs = logprobs.value as number[];
  }
  if (prompt.length === 0 && output.length > 0) fail('the output has no token before it (empty prompt)');

  const trajectory = field(record, FIELDS.trajectory);
  if (trajectory) {
    const t = trajectory.value;
    if (typeof t === 'string' || (typeof t === 'number' && Number.isFinite(t))) turn.key = String(t);
    else if (isObject(t) && (typeof t.instance_id === 'string' || typeof t.instance_id === 'number')) {
      // SkyRL's TrajectoryID: {instance_id, repetition_id}, named by its to_string(); the step is set on it per step.
      turn.key = t.repetition_id === undefined ? String(t.instance_id) : `${t.instance_id}_${t.repetition_id}`;
      turn.group = String(t.instance_id);
      if (t.step !== undefined) turn.step = t.step as number;
    } else fail(`${trajectory.name} must be a string, a number or {instance_id, repetition_id}, got ${quote(t)}`);
  }
  const step = field(record, FIELDS.step);
  if (step) turn.step = step.value as number;
  if (turn.step !== undefined && (typeof turn.step !== 'number' || !Number.isInteger(turn.step))) fail(`step must be an integer, got ${quote(turn.step)}`);
  const last = record.is_last_step;
  if (last !== undefined && last !== null) {
    if (typeof last !== 'boolean') fail(`is_last_step must be true or false, got ${quote(last)}`);
    turn.last = last as boolean;
  }
  const reward = field(record, FIELDS.reward);
  if (reward) {
    const r = reward.value;
    // SkyRL's step-wise rewards are per token (the step's reward at its last response token).
    const value = Array.isArray(r) ? r.reduce((a: number, b) => a + (typeof b === 'number' ? b : NaN), 0) : r;
    if (typeof value !== 'number' || !Number.isFinite(value)) fail(`${reward.name} must be a finite number or a list of them, got ${quote(r)}`);
    turn.reward = value as number;
  }
  const group = field(record, FIELDS.group);
  if (group && turn.group === undefined) {
    if (typeof group.value !== 'string' && typeof group.value !== 'number') fail(`${group.name} must be a string or a number, got ${quote(group.value)}`);
    turn.group = String(group.value);
  }
  const vocab = field(record, FIELDS.vocab);
  if (vocab) {
    if (typeof vocab.value !== 'number' || !Number.isInteger(vocab.value) || vocab.value < 1 || vocab.value > MAX_VOCAB) {
      fail(`${vocab.name} must be an integer in [1, ${MAX_VOCAB}], got ${quote(vocab.value)}`);
    }
    turn.vocab = vocab.value as number;
  }
  const promptText = field(record, FIELDS.promptText);
  const outputText = field(record, FIELDS.outputText);
  if (typeof promptText?.value === 'string' || typeof outputText?.value === 'string') {
    turn.text = {};
    if (typeof promptText?.value === 'string') turn.text.prompt = promptText.value;
    if (typeof outputText?.value === 'string') turn.text.output = outputText.value;
  }
  return turn;
}

/** A turn as calls: one per run of generated tokens (all of the output without a mask); the tokens before a run are its input. */
function callsOf(turn: Turn): { input: number[]; output: number[]; logprobs?: number[] }[] {
  const call = (from: number, to: number) => ({
    input: [...turn.prompt, ...turn.output.slice(0, from)],
    output: turn.output.slice(from, to),
    ...(turn.logprobs ? { logprobs: turn.logprobs.slice(from, to) } : {}),
  });
  if (!turn.mask) return [call(0, turn.output.length)];
  const calls = [];
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

/** Turns grouped into trajectories: by key in first-appearance order, or (no keys) consecutive runs closed by is_last_step. */
function trajectories(turns: Turn[], file: string): { id: string; turns: Turn[] }[] {
  const keyed = turns.filter((t) => t.key !== undefined);
  if (keyed.length > 0 && keyed.length < turns.length) {
    const without = turns.find((t) => t.key === undefined)!;
    throw new ValidationError({ file, line: without.line }, 'no trajectory id (trajectory_ids or trajectory_id), though other records of the file have one');
  }
  const groups: { id: string; turns: Turn[] }[] = [];
  if (keyed.length === 0) {
    let open: Turn[] = [];
    for (const t of turns) {
      open.push(t);
      if (t.last) {
        groups.push({ id: `turns-${open[0].line}`, turns: open });
        open = [];
      }
    }
    if (open.length) groups.push({ id: `turns-${open[0].line}`, turns: open });
    return groups;
  }
  const byKey = new Map<string, Turn[]>();
  for (const t of turns) {
    const list = byKey.get(t.key!);
    if (list) list.push(t);
    else byKey.set(t.key!, [t]);
  }
  for (const [id, list] of byKey) {
    const stepped = list.filter((t) => t.step !== undefined);
    if (stepped.length > 0 && stepped.length < list.length) {
      const without = list.find((t) => t.step === undefined)!;
      throw new ValidationError({ file, line: without.line }, `trajectory ${quote(id)}: no step, though its other records have one`);
    }
    if (stepped.length) {
      list.sort((a, b) => a.step! - b.step! || a.line - b.line);
      for (let i = 1; i < list.length; i++) {
        if (list[i].step === list[i - 1].step) throw new ValidationError({ file, line: list[i].line }, `trajectory ${quote(id)}: step ${list[i].step} appears twice (also on line ${list[i - 1].line})`);
      }
    }
    groups.push({ id, turns: list });
  }
  return groups;
}

export interface TurnsImport {
  rollouts: ImportedRollout[];
  records: number;
  convention: string;
}

/** A parsed turns dump: its turns grouped by trajectory, each turned into a rollout only when taken. */
export interface TurnsDump {
  /** The number of trajectories: the rollouts `rollouts()` yields. */
  trajectories: number;
  records: number;
  convention: string;
  /**
   * One rollout per trajectory (in calls-importer form, not yet validated), built as it is taken and
   * its turns let go, so a large dump's rollouts are never all held at once. Iterate it once.
   */
  rollouts(): Generator<ImportedRollout>;
}

/**
 * Reads every record of a turns dump (each problem a ValidationError naming its line) and groups them.
 * `tokenizer` names the tokenizer the trainer's ids come from (recorded on every rollout, so a model
 * of that vocabulary scores them); the ids are kept as they are, never re-tokenized.
 */
export function readTurnsText(text: string, file: string, options: { tokenizer?: TokenizerName } = {}): TurnsDump {
  const turns: Turn[] = [];
  const lines = text.split('\n');
  let convention = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0) continue;
    const source = { file, line: i + 1 };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ValidationError(source, `invalid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    turns.push(readTurn(value, source));
    convention ||= conventionOf(value as Json);
  }
  if (turns.length === 0) throw new ValidationError({ file }, 'file is empty');

  // One vocabulary for the file: a given one (the largest), else the largest token id + 1.
  // Loops, not Math.max(...): a dump may hold more turns (and a turn more tokens) than a call has arguments.
  let maxToken = -1;
  let maxAt = turns[0];
  let given = 0;
  for (const t of turns) {
    for (const ids of [t.prompt, t.output]) {
      for (const v of ids) {
        if (v > maxToken) {
          maxToken = v;
          maxAt = t;
        }
      }
    }
    given = Math.max(given, t.vocab ?? 0);
  }
  if (options.tokenizer !== undefined) {
    const own = TOKENIZER_VOCAB[options.tokenizer];
    if (given > own) throw new ValidationError({ file }, `the dump's vocabulary of ${given} is larger than ${options.tokenizer}'s ${own}`);
    given = own;
  }
  if (given > 0 && maxToken >= given) throw new ValidationError({ file, line: maxAt.line }, `token id ${maxToken} is outside the vocabulary of ${given}`);
  const vocab = given || maxToken + 1;

  const groups: (ReturnType<typeof trajectories>[number] | null)[] = trajectories(turns, file);
  const rolloutOf = ({ id, turns: list }: ReturnType<typeof trajectories>[number]): ImportedRollout => {
    const first = list[0];
    const source = { file, line: first.line };
    const rewardTurn = [...list].reverse().find((t) => t.reward !== undefined);
    const calls = {
      format: CALLS_FORMAT,
      id,
      vocab,
      calls: list.flatMap(callsOf),
      ...(rewardTurn ? { reward: rewardTurn.reward } : {}),
      ...(first.group !== undefined ? { group: first.group } : {}),
      meta: {
        import: { format: TURNS, convention, records: list.length, lines: list.map((t) => t.line).join(',') },
        ...(list.some((t) => t.text) ? { turns: list.map((t) => ({ line: t.line, ...t.text })) } : {}),
      },
    };
    return { value: importCalls(calls, source, { tokenizer: options.tokenizer }) as RolloutJson, line: first.line };
  };
  return {
    trajectories: groups.length,
    records: turns.length,
    convention,
    *rollouts() {
      for (let i = 0; i < groups.length; i++) {
        const group = groups[i];
        if (!group) throw new Error('readTurnsText: rollouts() is iterated once');
        groups[i] = null;
        yield rolloutOf(group);
      }
    },
  };
}

/** Every trajectory of a turns dump as a v1 rollout (in calls-importer form, not yet validated). */
export function importTurnsText(text: string, file: string, options: { tokenizer?: TokenizerName } = {}): TurnsImport {
  const dump = readTurnsText(text, file, options);
  return { rollouts: Array.from(dump.rollouts()), records: dump.records, convention: dump.convention };
}

export const turnsImporter: FileImporter = {
  name: TURNS,
  detect: (sample) => looksLikeTurns(sample),
  readText(text, file) {
    const { rollouts, records, convention } = importTurnsText(text, file);
    return { rollouts, report: { kind: 'turns', convention, records, rollouts: rollouts.length } };
  },
};
