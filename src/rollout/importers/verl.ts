// verl's built-in generation dump (`trainer.rollout_data_dir`: `<step>.jsonl`, one line per sample,
// `{input, output, gts, score, step, ...reward extra infos}`) into v1 rollouts, one per line: the
// decoded prompt as a prompt, the decoded response as the targets, the score as the reward. The text
// is tokenized with the import's tokenizer (verl wrote text, not ids). Samples of one prompt in one
// step (or of one `uid`) share a group, identified exactly by type and value.

import { quote } from '../errors';
import { ROLLOUT_FORMAT, type RolloutJson } from '../format';
import { byteTokenizer, getTokenizer } from '../tokenizer';
import type { FileImporter, ImportedRollout, ImportOptions } from './types';
import { failAt } from './transcript';
import { isObject, type Json, readJsonLines } from '../records';

export const VERL = 'verl';
export const VERL_CONVENTION = 'verl rollout_data_dir';

const USED = new Set(['input', 'output', 'score', 'step', 'gts', 'uid']);

/** Whether sampled records are a verl generation dump: text input and output, a numeric step, a score or ground truth. */
export function looksLikeVerlDump(sample: readonly unknown[]): boolean {
  return (
    sample.length > 0 &&
    sample.every(
      (v) =>
        isObject(v) &&
        v.format === undefined &&
        typeof v.input === 'string' &&
        typeof v.output === 'string' &&
        typeof v.step === 'number' &&
        ('score' in v || 'gts' in v),
    )
  );
}

export interface VerlImport {
  rollouts: ImportedRollout[];
  records: number;
  /** Reward extra infos and other fields no event reads (kept in `meta.fields`), with their record counts. */
  unused: Record<string, number>;
}

export function importVerlText(text: string, file: string, options: ImportOptions = {}): VerlImport {
  const tokenizer = options.tokenizer ? (getTokenizer(options.tokenizer) ?? byteTokenizer) : byteTokenizer;
  const records = readJsonLines(text, file);
  // Null prototypes: a field named __proto__ is kept and counted like any other.
  const unused: Record<string, number> = Object.create(null);
  /** Groups by exact identity: `uid` (type and value), else step and prompt text. */
  const groups = new Map<string, { name: string; uid: unknown; line: number }>();
  const names = new Map<string, { uid: unknown; line: number }>();
  let prompts = 0;
  const rollouts = records.map(({ line, value }): ImportedRollout => {
    const fail = (reason: string): never => failAt(file, line, reason);
    if (!isObject(value)) fail(`expected a verl dump record ({input, output, score, step, ...}), got ${quote(value)}`);
    const r = value as Json;
    if (typeof r.input !== 'string') fail(`input must be a string, got ${quote(r.input)}`);
    if (typeof r.output !== 'string') fail(`output must be a string, got ${quote(r.output)}`);
    if (typeof r.step !== 'number' || !Number.isInteger(r.step)) fail(`step must be an integer, got ${quote(r.step)}`);
    if (r.score !== undefined && r.score !== null && (typeof r.score !== 'number' || !Number.isFinite(r.score)))
      fail(`score must be a finite number, got ${quote(r.score)}`);
    if (!(r.input as string) && r.output) fail('the output has no prompt before it (empty input)');
    let identity: string;
    let group: string;
    if (r.uid !== undefined && r.uid !== null) {
      if (typeof r.uid !== 'string' && typeof r.uid !== 'number') fail(`uid must be a string or a number, got ${quote(r.uid)}`);
      identity = `${typeof r.uid}:${r.uid}`;
      group = String(r.uid);
    } else {
      identity = `prompt:${r.step}:${r.input}`;
      group = groups.get(identity)?.name ?? `step${r.step}-prompt${prompts}`;
    }
    if (!groups.has(identity)) {
      const other = names.get(group);
      if (other)
        fail(
          `uid ${JSON.stringify(r.uid)} and ${JSON.stringify(other.uid)} (line ${other.line}) are two groups that both name group ${quote(group)}; give them distinct uids`,
        );
      groups.set(identity, { name: group, uid: r.uid, line });
      names.set(group, { uid: r.uid, line });
      if (r.uid === undefined || r.uid === null) prompts++;
    }
    const fields: Json = Object.create(null);
    for (const key of Object.keys(r)) {
      if (USED.has(key) || r[key] === null) continue;
      fields[key] = r[key];
      unused[key] = (unused[key] ?? 0) + 1;
    }
    const events = [{ op: 'append', role: 'prompt', text: r.input }, ...(r.output ? [{ op: 'append', role: 'act', text: r.output }] : [])];
    const rollout = {
      format: ROLLOUT_FORMAT,
      id: `step${r.step}-line${line}`,
      vocab: tokenizer.vocab,
      tokenizer: tokenizer.name,
      ...(typeof r.score === 'number' ? { reward: r.score } : {}),
      group,
      events,
      meta: {
        source: VERL,
        step: r.step,
        line,
        ...(r.gts !== undefined ? { gts: r.gts } : {}),
        ...(Object.keys(fields).length ? { fields } : {}),
      },
    } as unknown as RolloutJson;
    return { value: rollout, line };
  });
  return { rollouts, records: records.length, unused };
}

/** The importer of its row in the format table (detect.ts `formats`). */
export const verlImporter: FileImporter = {
  name: VERL,
  detect: (sample) => looksLikeVerlDump(sample),
  readText(text, file, options = {}) {
    const { rollouts, records, unused } = importVerlText(text, file, options);
    return { rollouts, report: { kind: 'turns', convention: VERL_CONVENTION, records, rollouts: rollouts.length, unused } };
  },
};
