// Messages between the page and the rollout worker. `parse`: the page sends a Blob (a File or a
// fetched example); the worker streams it (progress in bytes), validates it with the rollout core
// and answers with a summary line per rollout and the one rollout the page shows, or with the
// validator's one-line message. The set stays in the worker (`rollout` fetches another one), so a
// 100 MB JSONL never crosses to the page whole. `table`: the figures of every rollout of a parsed
// set, one row each (computed in chunks, progress in rollouts). `generate`: the worker runs the
// harness (an environment, a memory editor and the expert policy) and answers with the data set as JSONL text.
// `tokenizer`: a loaded model folder's tokenizer (its files, parsed), registered in the worker under its
// `hf:<name>`, so imports can name it as mw import --tokenizer MODEL-FOLDER does.
// The rollout a `parse` or `rollout` answer carries comes derived (`derived`: tree, view inputs,
// plans, masks, its arrays transferred) when its N_packed is within the page's `maxPacked`, so the
// page's main thread derives nothing. A derived rollout comes ahead of its answer in `part` messages
// (./split.ts: the rollout, the view, the tree model, the masks and each plan, taken in one task each);
// the answer then carries `split: true` and the page's client puts `rollout` and `derived` together.
import type { FileReport, Rollout, TokenizerName } from '../../rollout';
import type { HfTokenizerFiles } from '../../rollout/tokenizer-hf';
import type { DerivedView } from '../core/derived';
import type { EditorKind, EnvId } from '../../harness';
import type { RolloutRow } from '../../tree';
import type { SplitPart } from './split';

/** How the page imports text: a built-in tokenizer, or a loaded model folder's own (`hf:<name>`). */
export type ImportTokenizerName = TokenizerName | `hf:${string}`;

export function isImportTokenizerName(name: unknown): name is ImportTokenizerName {
  return name === 'byte' || name === 'gpt2' || (typeof name === 'string' && name.startsWith('hf:') && name.length > 3);
}

export interface ParseRequest {
  type: 'parse';
  /** Correlates answers with requests; a newer parse makes older parse answers stale. */
  job: number;
  blob: Blob;
  fileName: string;
  /** Id of the rollout to send along (default: the first). */
  select: string | null;
  /** The set the page shows now: kept in the worker until a newer parse succeeds. */
  keep: number | null;
  /** How imported text is tokenized (chat, agent-session and calls logs; a v1 rollout names its own): byte, gpt2 or a registered `hf:<name>`. */
  tokenizer: ImportTokenizerName;
  /** The page's largest tree: the rollout sent along is derived only when its N_packed is within it. */
  maxPacked: number;
}

/** One line of the set's picker. */
export interface RolloutSummary {
  id: string;
  length: number;
  K: number;
  reward?: number;
}

export function summaryOf(rollout: Rollout): RolloutSummary {
  return { id: rollout.id, length: rollout.length, K: rollout.K, ...(rollout.reward !== undefined ? { reward: rollout.reward } : {}) };
}

export interface DemoConfig {
  env: EnvId;
  editor: EditorKind;
  /** Number of prompts (one rollout each). */
  n: number;
  seed: number;
}

export type WorkerRequest =
  | ParseRequest
  /** Fetches rollout `index` of the set parsed by job `set`. */
  | { type: 'rollout'; job: number; set: number; index: number; maxPacked: number }
  | { type: 'generate'; job: number; config: DemoConfig }
  /** Registers a model folder's tokenizer under its `hf:<name>` (answered with `tokenizer`). */
  | { type: 'tokenizer'; job: number; files: HfTokenizerFiles }
  /** The data-set table of the set parsed by job `set`: one row of figures per rollout. */
  | { type: 'table'; job: number; set: number };

export type ParsePhase = 'read' | 'validate' | 'derive';

export interface ParseProgress {
  type: 'progress';
  job: number;
  phase: ParsePhase | 'figures';
  /** Bytes read (read), records validated (validate) or rollouts derived (figures); total 0 when unknown (derive). */
  done: number;
  total: number;
}

/** What the import read and skipped, as `mw import` prints it (formatFileReport), with its counts. */
export interface LoadReport {
  text: string;
  /** Records passed over (each named with its line and reason in `text`). */
  skipped: number;
  /** Records read in part or not understood (warnings, each `file:line: reason` in `text`). */
  problems: number;
}

export function loadReportOf(report: FileReport, text: string): LoadReport {
  if (report.kind !== 'records') return { text, skipped: 0, problems: 0 };
  const r = report.report;
  return { text, skipped: r.skipped.reduce((n, s) => n + s.count, 0), problems: r.problems.length + r.problemsOmitted };
}

export interface ParseDone {
  type: 'done';
  job: number;
  summaries: RolloutSummary[];
  /** The selected rollout and its index in the set. */
  index: number;
  rollout: Rollout;
  /** Its N_packed, counted in the worker from the events (the page refuses above its limit before deriving). */
  nPacked: number;
  /** Its view data, derived in the worker; null when N_packed is above the request's maxPacked. */
  derived: DerivedView | null;
  /** True when `rollout` and `derived` came ahead in `part` messages (the worker posts them null). */
  split?: boolean;
  /** Milliseconds spent reading, validating and deriving, for the status line and the benchmark. */
  readMs: number;
  validateMs: number;
  deriveMs: number;
  report: LoadReport;
}

export interface TableDone {
  type: 'table';
  job: number;
  rows: RolloutRow[];
}

export interface RolloutReply {
  type: 'rollout';
  job: number;
  rollout: Rollout;
  /** Its N_packed, counted in the worker from the events. */
  nPacked: number;
  /** As in ParseDone. */
  derived: DerivedView | null;
  split?: boolean;
  deriveMs: number;
}

export interface Generated {
  type: 'generated';
  job: number;
  /** The data set as JSONL. */
  text: string;
}

export type WorkerReply =
  | { type: 'tokenizer'; job: number; name: string }
  /** A part of the derived rollout of the job's answer (splitParts), before the answer. */
  | { type: 'part'; job: number; part: SplitPart }
  | ParseProgress
  | ParseDone
  | RolloutReply
  | Generated
  | TableDone
  /** `message`: the validator's line `FILE[:LINE]: event N: reason`, or a read or harness error. */
  | { type: 'error'; job: number; message: string };
