// `mw import` on synthetic agent-session logs of ~12.5 and ~50 MB (compactions, microcompactions,
// parallel tool calls, sub-agent traffic, an abandoned branch): time, throughput and peak RSS,
// each import in its own process under a V8 heap cap smaller than the file. Bounded memory shows
// as the streamed import finishing under that cap with RSS far below the file size, while the
// in-memory importer (whole text, every record parsed) run as a contrast does not fit. Then
// `mw tree --json` on a ~200 MB set of imported sessions: time and peak RSS (one rollout at a time).
// And `mw tree --per-target --json` on the imported ~50 MB session: output size and peak RSS (its rows
// are linear in the rollout; spelling each target's prefix out would be quadratic).
// Run: node --import ./scripts/register.mjs bench/import.ts [--quick] [--per-target-only]

import { spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRng, type Rng } from '../src/util/prng';

const MB = 1024 * 1024;

// ------------------------------------------------------------------ child: one import, measured
if (process.argv[2] === '--child') {
  const [file, out, tokenizer] = process.argv.slice(3);
  const { importCommand } = await import('../src/cli/import');
  const { parseCommandArgs } = await import('../src/cli/shared');
  let err = '';
  const started = performance.now();
  const flags = tokenizer ? ['--tokenizer', tokenizer] : [];
  const code = await importCommand.run(parseCommandArgs(importCommand, [file, '--out', out, ...flags]), { out: () => {}, err: (t) => void (err += t) });
  const ms = performance.now() - started;
  const summary = err.split('\n')[0];
  process.stdout.write(JSON.stringify({ code, ms, maxRssKB: process.resourceUsage().maxRSS, summary }));
  process.exit(0);
}
if (process.argv[2] === '--in-memory') {
  const { readFileSync } = await import('node:fs');
  const { importAgentSessionText } = await import('../src/rollout/importers/agentSession');
  const started = performance.now();
  const { report } = importAgentSessionText(readFileSync(process.argv[3], 'utf8'));
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, maxRssKB: process.resourceUsage().maxRSS, summary: `${report.events} events` }));
  process.exit(0);
}
if (process.argv[2] === '--baseline') {
  await import('../src/cli/import');
  process.stdout.write(JSON.stringify({ maxRssKB: process.resourceUsage().maxRSS }));
  process.exit(0);
}

// ------------------------------------------------------------------ parent: generate, run, compare
const WORDS = (
  'the of and to in is that for it as with was on be by this are from or at an function return const ' +
  'import export test file error value type string number array object src lib index build run pass fail ' +
  'expected received line column module cache token context summary branch commit merge diff patch'
).split(' ');

function words(rng: Rng, chars: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = WORDS[rng.int(WORDS.length)];
    out.push(w);
    n += w.length + 1;
    if (rng.int(12) === 0) {
      out.push('\n');
      n++;
    }
  }
  return out.join(' ');
}

/** Writes a session log of about `bytes` bytes; returns its record count. */
function writeSession(path: string, bytes: number, seed: number): number {
  const rng = createRng(seed);
  const fd = openSync(path, 'w');
  let buffered: string[] = [];
  let size = 0;
  let written = 0;
  let records = 0;
  let n = 0;
  let last: string | null = null;
  const uuid = () => `${(++n).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  const emit = (record: Record<string, unknown>, onChain = true) => {
    const line = `${JSON.stringify({ sessionId: 'bench-session', isSidechain: false, ...record })}\n`;
    buffered.push(line);
    size += line.length;
    written += line.length;
    records++;
    if (onChain) last = record.uuid as string;
    if (size > 4 * MB) {
      writeSync(fd, buffered.join(''));
      buffered = [];
      size = 0;
    }
  };
  const user = (content: unknown, extra: Record<string, unknown> = {}) =>
    emit({ parentUuid: last, type: 'user', message: { role: 'user', content }, uuid: uuid(), ...extra });
  const assistant = (id: string, content: unknown[]) =>
    emit({ parentUuid: last, type: 'assistant', message: { id, role: 'assistant', content }, uuid: uuid() });
  /** A tool result under its own tool_use record (as Claude Code 2.x writes parallel calls); only the last continues the chain. */
  const result = (call: string, content: unknown[], continues: boolean) =>
    emit({ parentUuid: call, type: 'user', message: { role: 'user', content }, uuid: uuid() }, continues);

  let tool = 0;
  let turn = 0;
  let live: string[] = [];
  let sinceCompact = 0;
  let sinceMicro = 0;
  while (written < bytes) {
    turn++;
    user(words(rng, 100 + rng.int(300)));
    for (let round = 1 + rng.int(5); round > 0; round--) {
      const id = `msg_${turn}_${round}`;
      assistant(id, [{ type: 'thinking', thinking: words(rng, 200 + rng.int(600)) }]);
      const calls = 1 + rng.int(3); // parallel tool calls: one chained record per tool_use, each result under its own call
      const ids = Array.from({ length: calls }, () => `toolu_${++tool}`);
      const callRecords = ids.map((t) => {
        assistant(id, [{ type: 'tool_use', id: t, name: 'Read', input: { file_path: `src/${t}.ts` } }]);
        return last as string;
      });
      for (const [j, t] of ids.entries()) {
        result(callRecords[j], [{ type: 'tool_result', tool_use_id: t, content: words(rng, 500 + rng.int(20000)) }], j === ids.length - 1);
      }
      live.push(...ids);
    }
    assistant(`msg_${turn}_final`, [{ type: 'text', text: words(rng, 100 + rng.int(500)) }]);
    if (turn % 25 === 0) {
      emit({ parentUuid: null, isSidechain: true, type: 'user', message: { role: 'user', content: words(rng, 200) }, uuid: uuid() }, false);
    }
    if (turn % 40 === 0) {
      const fork: string | null = last;
      user(words(rng, 80));
      assistant(`msg_${turn}_abandoned`, [{ type: 'text', text: words(rng, 200) }]);
      last = fork;
    }
    if (turn % 7 === 0) user('Caveat: local command output follows.', { isMeta: true });
    if (written - sinceMicro > 1.5 * MB && live.length > 4) {
      sinceMicro = written;
      const cleared = live.splice(0, 3);
      emit({
        parentUuid: last,
        type: 'system',
        subtype: 'microcompact_boundary',
        uuid: uuid(),
        microcompactMetadata: { trigger: 'auto', compactedToolIds: cleared },
      });
    }
    if (written - sinceCompact > 4 * MB) {
      sinceCompact = written;
      live = [];
      emit(
        {
          parentUuid: null,
          logicalParentUuid: last,
          type: 'system',
          subtype: 'compact_boundary',
          content: 'Conversation compacted',
          uuid: uuid(),
          compactMetadata: { trigger: 'auto', preTokens: 150000 },
        },
        true,
      );
      user(`This session is being continued from a previous conversation that ran out of context.\n${words(rng, 2000)}`, { isCompactSummary: true });
    }
  }
  writeSync(fd, buffered.join(''));
  closeSync(fd);
  return records;
}

const quick = process.argv.includes('--quick');
const perTargetOnly = process.argv.includes('--per-target-only');
const sizes = quick ? [2 * MB, 8 * MB] : [12.5 * MB, 50 * MB];
const self = fileURLToPath(import.meta.url);
const register = fileURLToPath(new URL('../scripts/register.mjs', import.meta.url));
/** The import runs under a V8 heap cap far below the file size: it must stream to finish at all. */
const HEAP_CAP_MB = 64;
type ChildResult = { ms: number; maxRssKB: number; summary: string };
const spawnChild = (args: string[]) =>
  spawnSync(process.execPath, ['--import', register, `--max-old-space-size=${HEAP_CAP_MB}`, self, ...args], {
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  });
const runChild = (args: string[]): ChildResult => {
  const result = spawnChild(args);
  if (result.status !== 0) throw new Error(`child failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as ChildResult;
};

const measuredCli = fileURLToPath(new URL('../src/cli/measured.testing.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mw-bench-import-'));
try {
  const baseline = runChild(['--baseline']).maxRssKB / 1024;
  console.log(`every process runs with --max-old-space-size=${HEAP_CAP_MB}; bare process (modules loaded): peak RSS ${baseline.toFixed(0)} MB`);
  const above: number[] = [];
  for (const [i, size] of sizes.entries()) {
    if (perTargetOnly && i < sizes.length - 1) continue;
    const file = join(dir, `session-${i}.jsonl`);
    const t0 = performance.now();
    const records = writeSession(file, size, 1 + i);
    const fileMB = statSync(file).size / MB;
    const genMs = performance.now() - t0;
    const run = runChild(['--child', file, join(dir, `out-${i}.jsonl`)]);
    const rss = run.maxRssKB / 1024;
    above.push(rss - baseline);
    console.log(
      `${fileMB.toFixed(1)} MB, ${records} records (generated in ${(genMs / 1000).toFixed(1)} s): ` +
        `import ${(run.ms / 1000).toFixed(2)} s, ${(fileMB / (run.ms / 1000)).toFixed(1)} MB/s, ` +
        `peak RSS ${rss.toFixed(0)} MB (${(rss - baseline).toFixed(0)} MB above bare), output ${(statSync(join(dir, `out-${i}.jsonl`)).size / MB).toFixed(1)} MB`,
    );
    console.log(`  ${run.summary}`);
  }
  // mw tree --per-target --json on the largest session imported as GPT-2 tokens (a session's text as a
  // pretrained model reads it; byte tokens would make every character a target): output size, peak RSS.
  {
    const session = join(dir, 'out-gpt2.jsonl');
    const imported = runChild(['--child', join(dir, `session-${sizes.length - 1}.jsonl`), session, 'gpt2']);
    console.log(`import --tokenizer gpt2 of the same session: ${(imported.ms / 1000).toFixed(1)} s, peak RSS ${(imported.maxRssKB / 1024).toFixed(0)} MB`);
    const outFile = join(dir, 'per-target.json');
    const rssFile = join(dir, 'per-target.rss');
    const fd = openSync(outFile, 'w');
    const started = performance.now();
    // N_packed (~23M) is above the default --max-packed: the rows are linear in the rollout, the limit is the user's to raise.
    const run = spawnSync(process.execPath, ['--import', register, measuredCli, 'tree', session, '--per-target', '--json', '--max-packed', '100000000'], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, MW_RSS_FILE: rssFile },
    });
    closeSync(fd);
    const seconds = (performance.now() - started) / 1000;
    if (run.status !== 0) throw new Error(`mw tree --per-target failed (${run.status}): ${run.stderr}`);
    const rss = Number(readFileSync(rssFile, 'utf8')) / 1024;
    const outBytes = statSync(outFile).size;
    // The head of the output: the figures (K, targets) the rows cover.
    const head = Buffer.alloc(4096);
    const hfd = openSync(outFile, 'r');
    readSync(hfd, head, 0, head.length, 0);
    closeSync(hfd);
    const figure = (name: string) => new RegExp(`"${name}":(\\d+)`).exec(head.toString('utf8'))?.[1];
    console.log(
      `mw tree --per-target --json on the ${(statSync(join(dir, `session-${sizes.length - 1}.jsonl`)).size / MB).toFixed(0)} MB session ` +
        `(K ${figure('K')}, ${figure('targets')} targets, ${figure('physicalLength')} tokens): ${seconds.toFixed(1)} s, ` +
        `output ${(outBytes / MB).toFixed(1)} MB, peak RSS ${rss.toFixed(0)} MB (bound 500 MB: ${rss < 500 ? 'within' : 'EXCEEDED'})`,
    );
    // The bound is "as for mw tree": the same session without --per-target.
    const plainStarted = performance.now();
    const plain = spawnSync(process.execPath, ['--import', register, measuredCli, 'tree', session, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, MW_RSS_FILE: rssFile },
    });
    if (plain.status !== 0) throw new Error(`mw tree failed (${plain.status}): ${plain.stderr}`);
    const plainRss = Number(readFileSync(rssFile, 'utf8')) / 1024;
    console.log(
      `  mw tree --json on the same session: ${((performance.now() - plainStarted) / 1000).toFixed(1)} s, peak RSS ${plainRss.toFixed(0)} MB (bound 500 MB: ${plainRss < 500 ? 'within' : 'EXCEEDED'})`,
    );
    if (rss >= 500 || plainRss >= 500) process.exitCode = 1;
  }
  if (!perTargetOnly) {
    console.log(`file ${(sizes[1] / sizes[0]).toFixed(1)}x larger -> peak RSS above bare ${(above[1] / above[0]).toFixed(2)}x`);
    // The contrast: the in-memory importer (whole text, every record parsed) under the same cap.
    const whole = spawnChild(['--in-memory', join(dir, `session-${sizes.length - 1}.jsonl`)]);
    console.log(
      whole.status === 0
        ? `in-memory import of the largest file under the same cap: ${((JSON.parse(whole.stdout) as ChildResult).maxRssKB / 1024) | 0} MB peak RSS`
        : `in-memory import of the largest file under the same cap: fails (exit ${whole.status ?? whole.signal}, out of memory)`,
    );

    // mw tree --json on a data set of imported sessions (~200 MB; sessions of 1-4 MB, imported here):
    // read one rollout at a time, its peak RSS follows the largest rollout, not the set.
    const setFile = join(dir, 'imported-set.jsonl');
    const setBytes = quick ? 20 * MB : 200 * MB;
    const { importCommand } = await import('../src/cli/import');
    const { parseCommandArgs } = await import('../src/cli/shared');
    const setRng = createRng(7);
    let sessions = 0;
    const t0 = performance.now();
    for (let size = 0; size < setBytes; sessions++) {
      const session = join(dir, 'set-session.jsonl');
      const imported = join(dir, 'set-session.out.jsonl');
      writeSession(session, MB + setRng.int(3 * MB), 100 + sessions);
      const code = await importCommand.run(parseCommandArgs(importCommand, [session, '--out', imported]), { out: () => {}, err: () => {} });
      if (code !== 0) throw new Error(`import of session ${sessions} failed`);
      // Each session gets its own id, as sessions of one set have.
      appendFileSync(setFile, readFileSync(imported, 'utf8').replace('"id":"bench-session"', `"id":"session-${sessions}"`));
      size = statSync(setFile).size;
    }
    const setMB = statSync(setFile).size / MB;
    console.log(`imported set: ${setMB.toFixed(1)} MB, ${sessions} sessions (generated and imported in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const measured = fileURLToPath(new URL('../src/cli/measured.testing.ts', import.meta.url));
    const rssFile = join(dir, 'tree.rss');
    const started = performance.now();
    const tree = spawnSync(process.execPath, ['--import', register, measured, 'tree', setFile, '--json'], {
      encoding: 'utf8',
      maxBuffer: 64 * MB,
      env: { ...process.env, MW_RSS_FILE: rssFile },
    });
    const seconds = (performance.now() - started) / 1000;
    if (tree.status !== 0) throw new Error(`mw tree failed (${tree.status}): ${tree.stderr}`);
    const figures = JSON.parse(tree.stdout) as { physicalLength: number; packedLength: number }[];
    const treeRss = Number(readFileSync(rssFile, 'utf8')) / 1024;
    const tokens = figures.reduce((n, f) => n + f.physicalLength, 0);
    const packed = figures.reduce((n, f) => n + f.packedLength, 0);
    console.log(
      `mw tree --json on the ${setMB.toFixed(0)} MB set: ${seconds.toFixed(1)} s, peak RSS ${treeRss.toFixed(0)} MB ` +
        `(${figures.length} rollouts, ${(tokens / 1e6).toFixed(1)}M tokens, N_packed ${(packed / 1e6).toFixed(1)}M; ${setMB.toFixed(0)} MB file)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
