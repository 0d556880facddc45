// `mw` fuzz, Claude Code sessions: bad links name their line (the harness: fuzz.testing.ts).

import { join } from 'node:path';
import { type Case, TMP, file, fuzzFamily } from './fuzz.testing';

/**
 * Claude Code sessions (`mw import`, detected): links of the wrong type or in a loop, cut lines and lines
 * that are no record name their line; nothing is written.
 */
function agentSessionCases(): Case[] {
  const rec = (n: number, parent: number | null, extra = '') =>
    `{"parentUuid":${parent === null ? 'null' : `"u${parent}"`},"isSidechain":false,"sessionId":"s","type":"${n % 2 ? 'user' : 'assistant'}","message":{"role":"${n % 2 ? 'user' : 'assistant'}","content":"m${n}"},"uuid":"u${n}"${extra}}\n`;
  const bad: [string, string, RegExp][] = [
    [
      'parentUuid of the wrong type',
      rec(1, null) + rec(2, 1).replace('"parentUuid":"u1"', '"parentUuid":7'),
      /:2: "parentUuid" must be a string or null, got 7$/,
    ],
    ['uuid of the wrong type', rec(1, null) + rec(2, 1).replace('"uuid":"u2"', '"uuid":["u2"]'), /:2: "uuid" must be a string or null, got \["u2"\]$/],
    [
      'isSidechain of the wrong type',
      rec(1, null) + rec(2, 1, ',"isSidechain":"no"').replace('"isSidechain":false,', ''),
      /:2: "isSidechain" must be true or false, got "no"$/,
    ],
    ['message of the wrong type', rec(1, null) + rec(2, 1).replace(/"message":\{[^}]*\}/, '"message":"hi"'), /:2: "message" must be an object, got "hi"$/],
    ['parent links in a loop', rec(1, 3) + rec(2, 1) + rec(3, 2), /:3: parentUuid links form a loop through uuid "u3"$/],
    ['a line cut in the middle of the file', rec(1, null) + rec(2, 1).slice(0, 40) + '\n' + rec(3, 1), /:2: invalid JSON \(.*\)$/],
    ['a cut last line that a newline ends', rec(1, null) + rec(2, 1).slice(0, 40) + '\n', /:2: invalid JSON \(.*\)$/],
    [
      'a JSON line that is no session record',
      rec(1, null) + '"just text"\n' + rec(2, 1),
      /:2: not a session record \(an object with a string "type"\), got "just text"$/,
    ],
  ];
  return bad.map(([name, text, line], i) => ({
    family: `agent-session: ${name}`,
    args: ['import', file(`session-${i}.jsonl`, text), '--out', join(TMP, `session-${i}.out.jsonl`)],
    code: 2,
    line,
  }));
}

fuzzFamily('Claude Code sessions', agentSessionCases, (f) => /^session-\d+\.out/.test(f));
