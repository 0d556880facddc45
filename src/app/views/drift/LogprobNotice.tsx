// One line above the drift table saying what the methods are compared with, and why: the rollout's
// recorded log-probabilities when they are this model's, otherwise each other (the exact live-prefix score).
import type { LogprobSource } from '../../core/drift';
import { OTHER_POLICY_LOGDIFF } from '../../core/drift';
import { formatEffect as formatDelta } from '../../../present/number';

export function LogprobNotice({ source }: { source: LogprobSource }) {
  const against =
    'so the methods are compared with each other instead: against the exact live-prefix score ℓ_live (LogitTree’s, which the packed 4D mask equals).';
  let text: string;
  if (source.kind === 'model') {
    text = `This rollout records its policy’s log-probabilities and they are this model’s (LogitTree reproduces them to logdiff ${formatDelta(source.logdiff).replace('+', '')}), so every method is also compared with the rollout.`;
  } else if (source.kind === 'zeros') {
    text = `This rollout’s ${source.n} log-probabilities are all exactly 0: a scripted policy (the expert) wrote it, not a model, ${against}`;
  } else if (source.kind === 'missing') {
    text = `This rollout records no log-probabilities, ${against}`;
  } else {
    text = `This rollout’s log-probabilities are not this model’s: even the exact methods differ from them by logdiff ${source.logdiff.toFixed(2)} (above ${OTHER_POLICY_LOGDIFF}), as when another policy wrote the rollout or the numbers were made by hand, ${against}`;
  }
  return (
    <p className={`logprob-notice ${source.kind}`} data-testid="logprob-notice" data-kind={source.kind}>
      {text}
    </p>
  );
}
