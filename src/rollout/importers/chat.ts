// Chat-format JSONL (one conversation per line: {"messages": [{role, content, tool_calls?}, ...]})
// into v1 rollouts, one per line, append-only (a chat transcript records no edits; with a model
// folder whose chat template writes earlier turns differently once later messages follow, as Qwen3's
// hides reasoning, the template's edits: renderChatEvents, docs/tokenizers.md). Assistant
// text, reasoning and tool calls are the targets (`act`); system / developer / user are `prompt`,
// tool results `obs`. One line at a time, so a file of any length streams.

import { ValidationError, quote } from '../errors';
import { ROLLOUT_FORMAT, type AppendRole, type EventJson, type RolloutJson } from '../format';
import { MAX_NESTING, nestsDeeperThan } from '../nesting';
import { isObject, tryParseJson } from '../records';
import { byteTokenizer, getTokenizer, type Tokenizer, type TokenizerName } from '../tokenizer';
import { type ChatMessage, isHfTokenizer } from '../tokenizer-hf';
import type { FileImporter } from './types';
import { readLines, type OpenSource } from './lines';
import { createReportBuilder, type ImportReport, type ReportBuilder } from './report';
import { createTextRolloutBuilder } from './textRollout';

export const CHAT = 'chat';

export interface ChatOptions {
  /** Rollout ids are `<prefix>-<line>` unless a line has its own unused `id`; default 'chat'. */
  idPrefix?: string;
  /** File name for error messages. */
  file?: string;
  /**
   * How text is tokenized (docs/tokenizers.md); default byte. A model folder's `hf:<name>` tokenizer
   * (registered) renders each conversation with its chat template instead (renderChatEvents).
   */
  tokenizer?: TokenizerName | (string & {});
}

const ROLE_OF: Readonly<Record<string, AppendRole>> = {
  system: 'prompt',
  developer: 'prompt',
  user: 'prompt',
  assistant: 'act',
  tool: 'obs',
  function: 'obs',
  ipython: 'obs',
};

const SKIP = {
  malformed: 'malformed (not JSON)',
  notChat: 'not a chat record (no "messages" array)',
  unreadable: 'messages not understood',
} as const;

/** Whether a parsed record looks like a chat conversation (used by format detection too). */
export function isChatRecord(value: unknown): boolean {
  return (
    isObject(value) && Array.isArray(value.messages) && value.messages.length > 0 && value.messages.every((m) => isObject(m) && typeof m.role === 'string')
  );
}

class NotUnderstood extends Error {}

/** Message content (string, null, or a list of parts) as text; unknown parts are reported and left out. */
function contentText(content: unknown, skipPart: (type: string) => void): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new NotUnderstood(`content ${quote(content)} is neither text nor a list of parts`);
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === 'string') out.push(part);
    else if (!isObject(part) || typeof part.type !== 'string') throw new NotUnderstood(`content part ${quote(part)} has no type`);
    else if (typeof part.text === 'string' && /^(input_|output_)?text$/.test(part.type)) out.push(part.text);
    else if (part.type === 'refusal' && typeof part.refusal === 'string') out.push(part.refusal);
    else if (/image/.test(part.type)) out.push('[image]');
    else if (/audio/.test(part.type)) out.push('[audio]');
    else skipPart(part.type);
  }
  return out.join('\n');
}

/** A tool call as the text the model generated: its name and arguments (parsed when JSON). */
function toolCallText(call: unknown): string {
  if (!isObject(call)) throw new NotUnderstood(`tool call ${quote(call)} is not an object`);
  const fn = isObject(call.function) ? call.function : call;
  if (typeof fn.name !== 'string') throw new NotUnderstood(`tool call ${quote(call)} has no function name`);
  let args: unknown = fn.arguments ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      // Arguments that are not JSON are kept as the model wrote them.
    }
  }
  if (nestsDeeperThan(args, MAX_NESTING - 1)) throw new NotUnderstood(`tool call arguments nest deeper than ${MAX_NESTING} levels`);
  return JSON.stringify({ name: fn.name, arguments: args });
}

/** The events of one conversation; throws NotUnderstood naming the message at fault. */
function chatEvents(messages: unknown[], skipPart: (type: string) => void, tokenizer: Tokenizer): EventJson[] {
  const events: EventJson[] = [];
  const rollout = createTextRolloutBuilder<null>((e) => events.push(e), tokenizer);
  messages.forEach((m, i) => {
    const at = (reason: string) => new NotUnderstood(`messages[${i}]: ${reason}`);
    if (!isObject(m) || typeof m.role !== 'string') throw at('not a message with a role');
    let role = ROLE_OF[m.role];
    if (!role) throw at(`role ${quote(m.role)} is not one of ${Object.keys(ROLE_OF).join(', ')}`);
    // OpenAI fine-tuning data marks assistant turns not to learn from with weight 0.
    if (role === 'act' && m.weight === 0) role = 'obs';
    const pieces: string[] = [];
    try {
      if (role !== 'prompt') {
        for (const key of ['reasoning_content', 'reasoning']) if (typeof m[key] === 'string') pieces.push(m[key] as string);
      }
      pieces.push(contentText(m.content, skipPart));
      if (m.tool_calls !== undefined) {
        if (!Array.isArray(m.tool_calls)) throw new NotUnderstood(`tool_calls ${quote(m.tool_calls)} is not a list`);
        for (const call of m.tool_calls) pieces.push(toolCallText(call));
      }
      if (m.function_call !== undefined) pieces.push(toolCallText(m.function_call));
    } catch (error) {
      throw error instanceof NotUnderstood ? at(error.message) : error;
    }
    for (const text of pieces) if (text) rollout.append(role, text, null);
  });
  return events;
}

/** The events of a conversation rendered by the model's own chat template; NotUnderstood when it cannot render it. */
function templateEvents(
  messages: unknown[],
  tools: unknown,
  tokenizer: Tokenizer & { renderChatEvents(m: ChatMessage[], tools?: unknown): EventJson[] },
): EventJson[] {
  messages.forEach((m, i) => {
    if (!isObject(m) || typeof m.role !== 'string') throw new NotUnderstood(`messages[${i}]: not a message with a role`);
  });
  try {
    return tokenizer.renderChatEvents(messages as ChatMessage[], tools);
  } catch (error) {
    throw new NotUnderstood(`the chat template cannot render it (${(error as Error).message})`);
  }
}

function createChatConverter(report: ReportBuilder, options: ChatOptions) {
  const prefix = options.idPrefix ?? CHAT;
  const tokenizer = options.tokenizer ? getTokenizer(options.tokenizer)! : byteTokenizer;
  const ids = new Set<string>();
  let events = 0;
  return {
    malformed(line: number, reason: string) {
      report.read();
      report.problem(line, reason);
      report.skip(SKIP.malformed, line);
    },
    /** The rollout of one line, or null (reported) when the line is not a conversation. */
    add(line: number, value: unknown): RolloutJson | null {
      report.read();
      if (!isObject(value) || !Array.isArray(value.messages)) {
        report.problem(line, 'not a chat record (an object with a "messages" array)');
        report.skip(SKIP.notChat, line);
        return null;
      }
      let rolloutEvents: EventJson[];
      try {
        rolloutEvents =
          isHfTokenizer(tokenizer) && tokenizer.chatTemplate
            ? templateEvents(value.messages, value.tools, tokenizer)
            : chatEvents(
                value.messages,
                (type) => {
                  report.skipBlock(type);
                  report.problem(line, `content part type ${quote(type)} is not understood; left out`);
                },
                tokenizer,
              );
      } catch (error) {
        if (!(error instanceof NotUnderstood)) throw error;
        report.problem(line, error.message);
        report.skip(SKIP.unreadable, line);
        return null;
      }
      if (rolloutEvents.length === 0) {
        report.problem(line, 'conversation without any text');
        report.skip(SKIP.unreadable, line);
        return null;
      }
      let id = typeof value.id === 'string' && value.id ? value.id : `${prefix}-${line}`;
      if (ids.has(id)) id = `${id}-line${line}`;
      ids.add(id);
      const rollout: RolloutJson = { format: ROLLOUT_FORMAT, id, vocab: tokenizer.vocab, tokenizer: tokenizer.name, events: rolloutEvents };
      if (typeof value.reward === 'number' && Number.isFinite(value.reward)) rollout.reward = value.reward;
      if (typeof value.group === 'string') rollout.group = value.group;
      rollout.meta = { source: CHAT, line };
      report.imported(line);
      events += rolloutEvents.length;
      return rollout;
    },
    finish(file: string, rollouts: number): ImportReport {
      if (rollouts === 0) throw new ValidationError({ file }, 'no chat conversations (JSON lines with a "messages" array)');
      return report.finish({ rollouts, events });
    },
  };
}

function parse(text: string): { value: unknown } | { error: string } {
  const parsed = tryParseJson(text);
  return parsed.ok ? { value: parsed.value } : { error: `not JSON (${parsed.message})` };
}

/**
 * The rollouts of a chat file, one per conversation line, pulled one at a time (memory follows the
 * longest line); the generator returns the report, or throws when no line is a conversation.
 */
export async function* chatRollouts(open: OpenSource, options: ChatOptions = {}): AsyncGenerator<RolloutJson, ImportReport> {
  const converter = createChatConverter(createReportBuilder(CHAT), options);
  let rollouts = 0;
  for await (const { text, line } of readLines(open())) {
    if (!text.trim()) continue;
    const parsed = parse(text);
    if ('error' in parsed) {
      converter.malformed(line, parsed.error);
      continue;
    }
    const rollout = converter.add(line, parsed.value);
    if (rollout) {
      rollouts++;
      yield rollout;
    }
  }
  return converter.finish(options.file ?? CHAT, rollouts);
}

/** Streams rollouts, one per conversation line, to `emit`; returns the report. */
export async function streamChat(open: OpenSource, emit: (rollout: RolloutJson) => void, options: ChatOptions = {}): Promise<ImportReport> {
  const rollouts = chatRollouts(open, options);
  for (let next = await rollouts.next(); ; next = await rollouts.next()) {
    if (next.done) return next.value;
    emit(next.value);
  }
}

/** Rollouts from records already parsed (the core's file reader hands these to file importers). */
export function importChatRecords(
  records: readonly { line?: number; value: unknown }[],
  options: ChatOptions = {},
): { rollouts: { rollout: RolloutJson; line: number }[]; report: ImportReport } {
  const converter = createChatConverter(createReportBuilder(CHAT), options);
  const rollouts: { rollout: RolloutJson; line: number }[] = [];
  records.forEach((record, i) => {
    const line = record.line ?? i + 1;
    const rollout = converter.add(line, record.value);
    if (rollout) rollouts.push({ rollout, line });
  });
  return { rollouts, report: converter.finish(options.file ?? CHAT, rollouts.length) };
}

/** Rollouts from the file's text, malformed lines reported and skipped. */
export function importChatText(text: string, options: ChatOptions = {}): { rollouts: RolloutJson[]; report: ImportReport } {
  const converter = createChatConverter(createReportBuilder(CHAT), options);
  const rollouts: RolloutJson[] = [];
  text.split('\n').forEach((raw, i) => {
    if (!raw.trim()) return;
    const parsed = parse(raw);
    if ('error' in parsed) converter.malformed(i + 1, parsed.error);
    else {
      const rollout = converter.add(i + 1, parsed.value);
      if (rollout) rollouts.push(rollout);
    }
  });
  return { rollouts, report: converter.finish(options.file ?? CHAT, rollouts.length) };
}

/** Whether records are chat conversations: the first one is, and none names a `format`. */
export function looksLikeChat(values: readonly unknown[]): boolean {
  return values.length > 0 && isChatRecord(values[0]) && values.slice(0, 50).every((v) => !(isObject(v) && 'format' in v));
}

/** The importer of its row in the format table (src/rollout/importers/detect.ts `formats`). */
export const chatImporter: FileImporter = {
  name: CHAT,
  detect: (sample) => looksLikeChat(sample),
  readText(text, file, options = {}) {
    const { rollouts, report } = importChatText(text, { file, tokenizer: options.tokenizer });
    return { rollouts: rollouts.map((rollout) => ({ value: rollout, line: (rollout.meta as { line: number }).line })), report: { kind: 'records', report } };
  },
  async *rollouts(open, file, options = {}) {
    const rollouts = chatRollouts(open, { file, tokenizer: options.tokenizer });
    for (let next = await rollouts.next(); ; next = await rollouts.next()) {
      if (next.done) return { kind: 'records', report: next.value };
      yield { value: next.value, line: (next.value.meta as { line: number }).line };
    }
  },
};
