// What the drift panel's numbers mean, for a newcomer: each term in one or two sentences, with the
// sign that means what. The terms are the glossary's (docs/glossary.md, docs/metrics.md).
import { Term } from './Term';

export function DriftTerms() {
  return (
    <details className="drift-terms" data-testid="drift-terms">
      <summary>What these numbers mean</summary>
      <dl>
        <dt>ℓ</dt>
        <dd>
          The log-probability of one target token (a token the policy generated), in nats; always ≤ 0. ℓ_live is its score under its live prefix (exactly what
          the policy saw, computed here by LogitTree), ℓ_m under replay method m, ℓ_rollout what the file recorded when the rollout was generated.
        </dd>
        <dt>
          <Term name="logdiff" />
        </dt>
        <dd>
          The mean of |ℓ_m − ℓ_ref| over the targets a method scores: how far it moves the policy&apos;s own log-probabilities, in either direction. 0 means the
          method trains on exactly what the policy computed; the exact methods (LogitTree, Packed 4D mask) sit at round-off, about 1e-6 in fp32.
        </dd>
        <dt>
          <Term name="μ" /> (signed drift)
        </dt>
        <dd>
          The mean of ℓ_m − ℓ_ref. <strong>Below zero</strong>: the method makes the policy&apos;s tokens look less likely than they were;{' '}
          <strong>above zero</strong>: more likely. What the sign means depends on the method: Naive-Compressed&apos;s time-travel leakage (early targets lose
          content they saw) can only lower the score where the final walk lacks evidence, so its μ is above zero when the model reads the final walk better than
          the live prefix: a model trained on final walks (under Naive-Compressed) learned the tokens there, or summaries written later point at the token, as
          an expert&apos;s demonstrations do; Naive-Full&apos;s stale context (evicted content left in) mostly raises it. Within a few noise floors (the exact
          methods&apos; round-off) a μ has no sign at all: the verdict says &quot;at the floor&quot;.
        </dd>
        <dt>
          <Term name="expected μ" />
        </dt>
        <dd>
          The μ a sampler (its temperature, top-k and top-p are set above the histograms) should expect, computed exactly from the model&apos;s whole next-token
          distributions instead of the one token that was sampled. At temperature 1 it is −KL(live ‖ method) ≤ 0 for every method; only a sharper sampler
          (greedy, top-k) leaves room for a positive μ.
        </dd>
        <dt>
          <Term name="conditioning drift" />
        </dt>
        <dd>
          logdiff and μ measured against ℓ_live, the exact live-prefix score the workbench computes itself. It needs no recorded log-probabilities, so it works
          for every rollout; against the rollout (ℓ_rollout) only when the file records this model&apos;s own.
        </dd>
        <dt>
          <Term name="KL_SDCC" />
        </dt>
        <dd>
          SDCC trains on the final walk like Naive-Compressed (its student) and adds, at each diverging leaf, KL(π(· | live prefix) ‖ π(· | final prefix)): the
          teacher&apos;s next-token distribution against the student&apos;s. KL_SDCC is their mean, 0 when the rollout has no diverging leaf; smaller is closer.
        </dd>
        <dt>
          <Term name="D" />
        </dt>
        <dd>The number of diverging leaves: targets whose final prefix differs from their live prefix, the ones a trainer on the final walk scores wrongly.</dd>
        <dt>
          <Term name="eviction mass" />
        </dt>
        <dd>
          Per target, the tokens of its live prefix that are missing from its final prefix (the summary adds them up): how much of what the policy saw is gone
          by the end.
        </dd>
        <dt>
          <Term name="N_packed" />
        </dt>
        <dd>
          The number of nodes of the packed trie of all branches: the real input length of the packed 4D forward. N_packed divided by the final walk length is
          what exact replay costs over the naive single forward.
        </dd>
      </dl>
    </details>
  );
}
