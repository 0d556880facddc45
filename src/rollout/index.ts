// The rollout stage: files of any importable format in, validated `Rollout`s out.
export * from './format';
export { ValidationError, isValidationError, type SourceLocation } from './errors';
export type { AppendEvent, EditEvent, Rollout, RolloutEvent, ViewPiece } from './rollout';
export { validateRollout } from './validate';
export { loadRolloutFile, parseRolloutFile, readRolloutFile, type ImportOptions, type ReadRolloutFile, type RolloutFile } from './parse';
export { readJsonRecords, type FileLayout, type JsonRecord } from './records';
export { rolloutToJson, stringifyRollout, stringifyRollouts } from './serialize';
export {
  byteTokenizer,
  getTokenizer,
  loadTokenizer,
  loadTokenizers,
  tokenText,
  tokenizerForVocab,
  tokenizerMismatch,
  isTokenizerName,
  BOS,
  EOS,
  ROLE_MARKER,
  BYTE_VOCAB,
  GPT2_VOCAB,
  TOKENIZER_NAMES,
  type Tokenizer,
  type TokenizerName,
} from './tokenizer';
export { runsToIds, type Runs } from './live-view';
export { formats, formatList, type FormatRow, type FileImporter, type RecordImporter, type ImportedRollout } from './importers/detect';
export { CALLS_FORMAT, importCalls } from './importers/calls';
export { formatFileReport, type FileReport, type ImportReport } from './importers/report';
