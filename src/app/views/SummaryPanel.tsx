// Summary panel: the section-3 figures of the open rollout (and the set it came from).
import { useWorkbench } from '../store';
import { ExportCsvButton } from './inspector/ExportCsvButton';
import { TermText } from '../glossary/Term';

function Stat({ id, label, value, note, title }: { id?: string; label: string; value: string | number; note?: string; title: string }) {
  return (
    <div className="stat" title={title} data-tour={id ? `stat-${id}` : undefined}>
      <dt>
        <TermText text={label} />
      </dt>
      <dd>
        <span className="value" data-testid={id ? `stat-${id}` : undefined}>
          {value}
        </span>
        {note && <span className="note">{note}</span>}
      </dd>
    </div>
  );
}

export function SummaryPanel() {
  const view = useWorkbench((s) => s.view);
  const rollouts = useWorkbench((s) => s.rollouts.length);
  if (!view) return null;
  const f = view.tree.figures;
  const { rollout } = view;
  const ratio = f.finalWalkLength ? (f.packedLength / f.finalWalkLength).toFixed(2) : '—';
  return (
    <section className="panel summary" aria-label="Summary">
      <header className="panel-head">
        <h2>
          Rollout <code data-testid="rollout-id">{rollout.id}</code>
        </h2>
        <span className="hint">
          {rollout.events.length} events{rollouts > 1 ? ` · 1 of ${rollouts} in the set` : ''}
          {rollout.group !== undefined ? ` · group ${rollout.group}` : ''} · tokenizer {rollout.tokenizer}
        </span>
        <ExportCsvButton />
      </header>
      <dl className="stats">
        <Stat id="K" label="K edits" value={f.K} title="Number of edits (junctions of the conditioning tree)" />
        <Stat id="branches" label="branches" value={f.branches} title="K + 1 live views: one per segment" />
        <Stat id="physicalLength" label="L tape" value={f.physicalLength} title="Physical tape length: every token ever created" />
        <Stat id="finalWalkLength" label="final walk" value={f.finalWalkLength} title="Length of branch K, the compressed context at the end" />
        <Stat
          id="packedLength"
          label="N packed"
          value={f.packedLength}
          note={`${ratio}× final`}
          title="Trie node count: the real input size of the packed 4D forward (N_packed / final walk length)"
        />
        <Stat id="targets" label="targets" value={f.targets} title="Policy outputs (act tokens): the loss-carrying tokens" />
        <Stat id="droppedTargets" label="dropped" value={f.droppedTargets} title="Targets absent from the final walk or first in it" />
        <Stat id="divergingLeaves" label="D diverging" value={f.divergingLeaves} title="Targets whose final prefix differs from their live prefix" />
        <Stat
          id="evictionMassTotal"
          label="eviction mass"
          value={f.evictionMassTotal}
          note={`max ${f.evictionMassMax}`}
          title="Live-prefix ids absent from the final prefix, summed over non-dropped targets (and the largest)"
        />
        <Stat id="reward" label="reward" value={rollout.reward ?? '—'} title="The rollout's reward, as recorded" />
      </dl>
    </section>
  );
}
