// Agent-session import, second pass: the planned records, in plan order, into v1 events. A
// conversion is plain data (the rollout being built, a pending compaction); each record goes through
// convertRecord, and compactions and microcompactions become edit events.

import { quote } from '../errors';
import type { EventJson } from '../format';
import { MAX_NESTING, nestsDeeperThan } from '../nesting';
import type { Tokenizer } from '../tokenizer';
import type { ReportBuilder } from './report';
import { createTextRolloutBuilder, type Span, type TextRolloutBuilder, type ViewItem } from './textRollout';
import { SKIP, field, notInContextReason, str, type Entry, type SessionPlan } from './agentSessionIndex';
import { isObject, type Json } from '../records';

/** What the agent CLI sends in place of a tool result cleared by a microcompaction. */
export const CLEARED_TOOL_RESULT = '[Old tool result content cleared]';

/** How the CLI's summary message opens; recognises a summary whose record lacks isCompactSummary. */
export const SUMMARY_OPENING = 'This session is being continued from a previous conversation';

interface Tag {
  /** Position of the record in the plan (preserved segments are ranges of it). */
  ordinal: number;
  /** For tool results: the tool_use id a microcompaction names. */
  toolUseId?: string;
  /** A placeholder that already replaced its tool result. */
  cleared?: boolean;
}

interface PendingCompaction {
  entry: Entry;
  ordinal: number;
  /** The boundary's own text, which stands in when no summary record follows. */
  text: string;
  summaries: { text: string; ordinal: number }[];
}

function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string');
  return parts.length ? parts.map((b) => b.text as string).join('\n') : undefined;
}

/** JSON text of a value the harness rendered as JSON; a value nested too deep to render is left out (reported by the caller). */
function jsonText(value: unknown): string | undefined {
  return nestsDeeperThan(value) ? undefined : JSON.stringify(value);
}

/** A tool result's content as the text the model read (undefined: nested too deep to render). */
function toolResultText(content: unknown): string | undefined {
  if (nestsDeeperThan(content)) return undefined;
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (!isObject(part)) return JSON.stringify(part) ?? '';
        if (part.type === 'text' && typeof part.text === 'string') return part.text;
        if (part.type === 'image') return '[image]';
        if (part.type === 'document') return '[document]';
        return JSON.stringify(part);
      })
      .join('\n');
  }
  return JSON.stringify(content);
}

/** A conversion in progress, as plain data: the rollout being built and a compaction waiting for its summary. */
export interface Conversion {
  plan: SessionPlan;
  report: ReportBuilder;
  rollout: TextRolloutBuilder<Tag>;
  pending: PendingCompaction | null;
}

export function createConversion(plan: SessionPlan, emit: (event: EventJson) => void, report: ReportBuilder, tokenizer: Tokenizer): Conversion {
  return { plan, report, rollout: createTextRolloutBuilder<Tag>(emit, tokenizer), pending: null };
}

function compact(c: Conversion, p: PendingCompaction) {
  const { plan, report, rollout } = c;
  const summaries = p.summaries.length ? p.summaries : [{ text: p.text, ordinal: p.ordinal }];
  if (!p.summaries.length) {
    report.problem(p.entry.line, 'compact_boundary is not followed by its summary record; the boundary text stands in for the summary');
  }
  const items: ViewItem<Tag>[] = summaries.map(({ text, ordinal }) => ({ insert: { role: 'summary', text }, tag: { ordinal } }));
  if (p.entry.preserved) {
    const head = plan.ordinal.get(p.entry.preserved.head);
    const tail = plan.ordinal.get(p.entry.preserved.tail);
    if (head === undefined || tail === undefined || head > tail) {
      report.problem(p.entry.line, 'preservedSegment does not name a stretch of the main chain; nothing kept');
    } else {
      for (const span of rollout.live) if (span.tag.ordinal >= head && span.tag.ordinal <= tail) items.push({ keep: span });
    }
  }
  rollout.edit(items);
  report.edit('compaction');
}

function flush(c: Conversion) {
  if (c.pending) compact(c, c.pending);
  c.pending = null;
}

function microcompact(c: Conversion, entry: Entry, value: Json) {
  const { report, rollout } = c;
  const meta = field(value, 'microcompactMetadata', 'microcompact_metadata');
  const ids = isObject(meta) ? field(meta, 'compactedToolIds', 'compacted_tool_ids') : undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    report.problem(entry.line, 'microcompact_boundary without a compactedToolIds list');
    report.skip(SKIP.unreadable, entry.line);
    return;
  }
  const cleared = new Set(ids as string[]);
  const found = new Set<string>();
  const items: ViewItem<Tag>[] = rollout.live.map((span: Span<Tag>) => {
    const id = span.tag.toolUseId;
    if (id === undefined || !cleared.has(id) || span.tag.cleared) return { keep: span };
    found.add(id);
    return { insert: { role: 'obs', text: CLEARED_TOOL_RESULT }, tag: { ...span.tag, cleared: true } };
  });
  if (found.size < cleared.size) {
    report.problem(
      entry.line,
      `microcompaction: ${cleared.size - found.size} of ${cleared.size} compacted tool results are not in the live view (evicted, already cleared, or never imported)`,
    );
  }
  if (!found.size) {
    report.skip(SKIP.noop, entry.line);
    return;
  }
  rollout.edit(items);
  report.edit('microcompaction');
  report.imported(entry.line);
}

function tooDeep(c: Conversion, entry: Entry, type: string) {
  const { report } = c;
  report.problem(entry.line, `${type} block nests deeper than ${MAX_NESTING} levels; left out`);
  report.skipBlock(type);
}

/** A tool result (the user's, or a server-side tool's inside the assistant message) as an observation; returns the events added. */
function toolResult(c: Conversion, entry: Entry, ordinal: number, type: string, block: Json): number {
  const tag: Tag = { ordinal };
  const id = str(field(block, 'tool_use_id', 'toolUseId'));
  if (id) tag.toolUseId = id;
  const text = toolResultText(block.content);
  if (text === undefined) {
    tooDeep(c, entry, type);
    return 0;
  }
  c.rollout.append('obs', text, tag);
  return 1;
}

/** One block of a user message: the events it added, or undefined for a type not understood. */
function userBlock(c: Conversion, entry: Entry, ordinal: number, type: string, block: Json): number | undefined {
  if (type === 'text') {
    if (typeof block.text !== 'string' || !block.text) return 0;
    c.rollout.append('prompt', block.text, { ordinal });
    return 1;
  }
  if (type === 'tool_result') return toolResult(c, entry, ordinal, type, block);
  if (type === 'image' || type === 'document') {
    c.rollout.append('prompt', `[${type}]`, { ordinal });
    return 1;
  }
  return undefined;
}

/** One block of an assistant message: the events it added, or undefined for a type not understood. */
function assistantBlock(c: Conversion, entry: Entry, ordinal: number, type: string, block: Json): number | undefined {
  if (type === 'text' || type === 'thinking') {
    const text = type === 'text' ? block.text : block.thinking;
    if (typeof text !== 'string' || !text) return 0;
    c.rollout.append('act', text, { ordinal });
    return 1;
  }
  if (type === 'tool_use' || type === 'server_tool_use' || type === 'mcp_tool_use') {
    const text = jsonText({ name: block.name, input: block.input ?? {} });
    if (text === undefined) {
      tooDeep(c, entry, type);
      return 0;
    }
    c.rollout.append('act', text, { ordinal });
    return 1;
  }
  // Server-side tools (web search, code execution) return inside the assistant message:
  // what they return is an observation, not generated text.
  if (type.endsWith('_tool_result')) return toolResult(c, entry, ordinal, type, block);
  if (type === 'redacted_thinking') {
    c.report.skipBlock(type); // encrypted: there is no text to score
    return 0;
  }
  return undefined;
}

/** A user or assistant message's content: the events it added, or -1 for content that is neither a string nor blocks. */
function messageContent(c: Conversion, entry: Entry, ordinal: number, role: 'user' | 'assistant', content: unknown): number {
  const { report, rollout } = c;
  if (typeof content === 'string') {
    if (!content) return 0;
    rollout.append(role === 'user' ? 'prompt' : 'act', content, { ordinal });
    return 1;
  }
  if (!Array.isArray(content)) return -1;
  const blockOf = role === 'user' ? userBlock : assistantBlock;
  let n = 0;
  for (const block of content) {
    const type = isObject(block) ? block.type : undefined;
    if (!isObject(block) || typeof type !== 'string') {
      report.problem(entry.line, `${role} content block ${quote(block)} is not understood; left out`);
      report.skipBlock('unknown');
      continue;
    }
    const added = blockOf(c, entry, ordinal, type, block);
    if (added === undefined) {
      report.problem(entry.line, `${role} content block type ${quote(type)} is not understood; left out`);
      report.skipBlock(type);
    } else n += added;
  }
  return n;
}

/** Converts one planned record (in plan order). */
export function convertRecord(c: Conversion, entry: Entry, ordinal: number, value: Json): void {
  const { report, rollout } = c;
  const { line } = entry;
  const message = isObject(value.message) ? value.message : undefined;
  if (entry.type === 'system') {
    if (entry.subtype === 'compact_boundary') {
      flush(c);
      const text = str(value.content) ?? 'Conversation compacted';
      c.pending = { entry, ordinal, text, summaries: [] };
      report.imported(line);
    } else if (entry.subtype === 'microcompact_boundary') {
      flush(c);
      microcompact(c, entry, value);
    } else report.skip(notInContextReason(entry), line);
    return;
  }
  if (entry.type !== 'user' && entry.type !== 'assistant') {
    report.skip(notInContextReason(entry), line);
    return;
  }
  if (entry.meta) {
    report.skip(SKIP.meta, line);
    return;
  }
  if (!message) {
    report.problem(line, `${entry.type} record without a message object`);
    report.skip(SKIP.unreadable, line);
    return;
  }
  if (entry.type === 'user') {
    const text = textOf(message.content);
    const summary = entry.compactSummary || (c.pending && text?.startsWith(SUMMARY_OPENING));
    if (summary && text !== undefined) {
      report.imported(line);
      if (c.pending) c.pending.summaries.push({ text, ordinal });
      else if (rollout.live.length === 0) rollout.append('prompt', text, { ordinal });
      else {
        // Older logs: a summary without a boundary record. It still replaces the context.
        report.problem(line, 'compact summary without a compact_boundary record: imported as a compaction');
        rollout.edit([{ insert: { role: 'summary', text }, tag: { ordinal } }]);
        report.edit('compaction');
      }
      return;
    }
  }
  if (entry.type === 'assistant' && (value.isApiErrorMessage === true || message.model === '<synthetic>')) {
    report.skip(SKIP.synthetic, line);
    return;
  }
  flush(c);
  const n = messageContent(c, entry, ordinal, entry.type, message.content);
  if (n > 0) report.imported(line);
  else if (n === 0) report.skip(SKIP.empty, line);
  else {
    report.problem(line, `${entry.type} message content ${quote(message.content)} is not understood`);
    report.skip(SKIP.unreadable, line);
  }
}

/** Emits a compaction still waiting for its summary; the rollout builder, with its counts. */
export function finishConversion(c: Conversion): TextRolloutBuilder<Tag> {
  flush(c);
  return c.rollout;
}
