// The page's two worker clients, one each, created on first use and shared by the slices that talk
// to them (the rollout worker: sets and their tables; the scoring worker: the shown rollout and the table).
import { createParser, type Parser } from '../protocol/parseClient';
import { createScorer, type Scorer } from '../protocol/scoreClient';

let parser: Parser | null = null;
let scorer: Scorer | null = null;

export function rolloutWorker(): Parser {
  return (parser ??= createParser());
}

export function scoringWorker(): Scorer {
  return (scorer ??= createScorer());
}
