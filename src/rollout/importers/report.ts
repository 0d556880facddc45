// What an import did with every record of its file: imported, skipped (why, which lines), or not
// understood (line and reason). Kept in the rollout's `meta.import`, printed by `mw import` and shown
// by the app beside the summary (one text for both: `formatFileReport`).

export interface ImportProblem {
  line: number;
  reason: string;
}

export interface SkippedRecords {
  reason: string;
  count: number;
  /** Line numbers as ranges, e.g. "7-9,14". */
  lines: string;
}

/** A conversation branch of the file that was not imported (an edited or resumed turn). */
export interface OtherBranch {
  /** Line of its last record. */
  leafLine: number;
  /** Line of the main-chain record it leaves from; null when it never joins the main chain. */
  forkLine: number | null;
  /** Records only this branch holds, and how many of them are user or assistant messages. */
  records: number;
  messages: number;
}

export interface ImportReport {
  /** Importer name: 'agent-session' or 'chat'. */
  format: string;
  /** Non-blank lines read. */
  records: number;
  /** Records that became events (messages, compaction records, summaries). */
  imported: number;
  rollouts: number;
  events: number;
  /** Edits by kind, e.g. { compaction: 2, microcompaction: 1 }. */
  edits: Record<string, number>;
  /** Every record that is neither imported nor malformed lands in exactly one group. */
  skipped: SkippedRecords[];
  /** Content blocks left out of imported records, by block type. */
  skippedBlocks: Record<string, number>;
  problems: ImportProblem[];
  /** Problems beyond the first MAX_PROBLEMS, counted only. */
  problemsOmitted: number;
  branches: OtherBranch[];
}

export const MAX_PROBLEMS = 100;

/** Line numbers collected in any order, printed as sorted ranges. */
function formatLines(lines: number[]): string {
  const sorted = [...lines].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    out.push(j === i ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

export interface ReportBuilder {
  read(): void;
  imported(line: number): void;
  skip(reason: string, line: number): void;
  skipBlock(type: string): void;
  problem(line: number, reason: string): void;
  edit(kind: string): void;
  branch(branch: OtherBranch): void;
  finish(counts: { rollouts: number; events: number }): ImportReport;
}

export function createReportBuilder(format: string): ReportBuilder {
  let records = 0;
  const importedLines = new Set<number>();
  const skipped = new Map<string, number[]>();
  const skippedBlocks: Record<string, number> = {};
  const problems: ImportProblem[] = [];
  let problemsOmitted = 0;
  const edits: Record<string, number> = {};
  const branches: OtherBranch[] = [];
  return {
    read() {
      records++;
    },
    imported(line) {
      importedLines.add(line);
    },
    skip(reason, line) {
      const lines = skipped.get(reason);
      if (lines) lines.push(line);
      else skipped.set(reason, [line]);
    },
    skipBlock(type) {
      skippedBlocks[type] = (skippedBlocks[type] ?? 0) + 1;
    },
    problem(line, reason) {
      if (problems.length < MAX_PROBLEMS) problems.push({ line, reason });
      else problemsOmitted++;
    },
    edit(kind) {
      edits[kind] = (edits[kind] ?? 0) + 1;
    },
    branch(branch) {
      branches.push(branch);
    },
    finish({ rollouts, events }) {
      return {
        format,
        records,
        imported: importedLines.size,
        rollouts,
        events,
        edits,
        skipped: [...skipped]
          .map(([reason, lines]) => ({ reason, count: lines.length, lines: formatLines(lines), first: lines.reduce((m, l) => Math.min(m, l)) }))
          .sort((a, b) => a.first - b.first)
          .map(({ reason, count, lines }) => ({ reason, count, lines })),
        skippedBlocks,
        problems: [...problems].sort((a, b) => a.line - b.line),
        problemsOmitted,
        branches,
      };
    },
  };
}

/** The report as a few human lines (what `mw import` prints on stderr). */
export function formatImportReport(report: ImportReport, file: string): string {
  const out: string[] = [];
  const edits = Object.entries(report.edits).map(([kind, n]) => `${n} ${kind}${n === 1 ? '' : 's'}`);
  out.push(
    `${file}: ${report.format}: ${report.records} records read, ${report.imported} imported -> ` +
      `${report.rollouts} rollout${report.rollouts === 1 ? '' : 's'}, ${report.events} events` +
      (edits.length ? ` (${edits.join(', ')})` : ''),
  );
  for (const s of report.skipped) out.push(`  skipped ${s.count}: ${s.reason} [line${s.count === 1 ? '' : 's'} ${s.lines}]`);
  const blocks = Object.entries(report.skippedBlocks);
  if (blocks.length) out.push(`  content blocks left out: ${blocks.map(([t, n]) => `${n} ${t}`).join(', ')}`);
  for (const b of report.branches) {
    const from = b.forkLine === null ? 'not joined to the main chain' : `leaves the main chain after line ${b.forkLine}`;
    out.push(`  other branch ending at line ${b.leafLine}: ${b.records} records (${b.messages} messages), ${from}`);
  }
  for (const p of report.problems) out.push(`  ${file}:${p.line}: ${p.reason}`);
  if (report.problemsOmitted) out.push(`  ... and ${report.problemsOmitted} more problems`);
  return out.join('\n');
}

/**
 * What reading a file did, for every format: the record-by-record report of a log importer
 * (agent-session, chat), the trajectories a turn dump grouped, or the rollouts of a file the core
 * reads as it is (v1, calls/v1).
 */
export type FileReport =
  | { kind: 'records'; report: ImportReport }
  | {
      kind: 'turns';
      convention: string;
      records: number;
      rollouts: number /** Fields no role uses, with the records holding them. */;
      unused?: Record<string, number>;
    }
  | { kind: 'core'; rollouts: number /** e.g. memorywalker.calls/v1; absent: read by the core. */; format?: string };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The report's lines as `mw import` prints them on stderr (without its `wrote OUT` line). */
export function formatFileReport(report: FileReport, file: string): string {
  if (report.kind === 'records') return formatImportReport(report.report, file);
  if (report.kind === 'turns') {
    const head = `${file}: turns (${report.convention} fields): ${plural(report.records, 'record')} -> ${plural(report.rollouts, 'rollout')} (one per trajectory)`;
    const unused = Object.entries(report.unused ?? {});
    // Nothing is dropped silently: a field the importer does not read is named.
    return unused.length ? `${head}\n  fields not used: ${unused.map(([name, n]) => `${name} (${plural(n, 'record')})`).join(', ')}` : head;
  }
  return `${file}: ${report.format ?? 'read by the core'}: ${plural(report.rollouts, 'rollout')}`;
}
