// The load bar: open a file (picker or drop anywhere), how imported text becomes tokens (bytes, GPT-2
// word pieces, or the loaded model folder's own tokenizer and chat template), open a built-in example, pick a rollout of a JSONL set; the parse progress;
// the validator's message when a file is refused (the rollout shown before stays).
import type { ImportTokenizerName } from '../../protocol/parse';
import { useWorkbench } from '../../store';
import { EXAMPLES } from '../../load/examples';

export const ACCEPT = '.json,.jsonl,application/json,application/x-ndjson';
/** Beyond this many rollouts the picker would cost the page seconds of layout: the data-set table picks instead. */
const PICKER_MAX = 500;

export function LoadBar() {
  const source = useWorkbench((s) => s.source);
  const rollouts = useWorkbench((s) => s.rollouts);
  const rolloutIndex = useWorkbench((s) => s.rolloutIndex);
  const loading = useWorkbench((s) => s.loading);
  const loadError = useWorkbench((s) => s.loadError);
  const timings = useWorkbench((s) => s.loadTimings);
  const openBlob = useWorkbench((s) => s.openBlob);
  const openExample = useWorkbench((s) => s.openExample);
  const selectRollout = useWorkbench((s) => s.selectRollout);
  const dismiss = useWorkbench((s) => s.dismissLoadError);
  const importTokenizer = useWorkbench((s) => s.importTokenizer);
  const setImportTokenizer = useWorkbench((s) => s.setImportTokenizer);
  const modelTokenizer = useWorkbench((s) => s.model?.tokenizer ?? null);
  // The loaded model folder's tokenizer, and the one the shown import was made with (still known on the page).
  const hfChoices = [...new Set([modelTokenizer, importTokenizer].filter((t): t is string => t?.startsWith('hf:') === true))];
  const maxPacked = useWorkbench((s) => s.maxPacked);
  const setMaxPacked = useWorkbench((s) => s.setMaxPacked);

  const onFiles = (files: FileList | null) => {
    const file = files?.[0];
    if (file) void openBlob(file, { kind: 'file', name: file.name });
  };

  return (
    <div className="loadbar">
      <div className="loadbar-row">
        <label className="button primary">
          Open rollout…
          <input
            type="file"
            accept={ACCEPT}
            data-testid="rollout-file-input"
            onChange={(e) => {
              onFiles(e.currentTarget.files);
              e.currentTarget.value = '';
            }}
          />
        </label>
        <span className="muted">or drop a .json / .jsonl / calls log anywhere</span>
        <label
          className="picker"
          title="How the text of an imported chat log, agent session or calls log becomes tokens: bytes for the workbench's own models, GPT-2's word pieces for a GPT-2 checkpoint, a loaded model folder's own tokenizer with its chat template (docs/tokenizers.md). Rollout files name their own tokenizer."
        >
          <span className="muted">text as</span>
          <select
            value={importTokenizer}
            onChange={(e) => void setImportTokenizer(e.currentTarget.value as ImportTokenizerName)}
            data-testid="import-tokenizer"
          >
            <option value="byte">bytes</option>
            <option value="gpt2">GPT-2 word pieces</option>
            {hfChoices.map((name) => (
              <option key={name} value={name}>
                {name === modelTokenizer ? `the model's tokenizer (${name})` : name}
              </option>
            ))}
          </select>
        </label>
        <label
          className="picker"
          title={
            'The largest conditioning tree (N_packed, in nodes) the page builds. A rollout whose tree is larger is refused with its figure, ' +
            'counted from its events, before anything is built: a few hundred KB of edits can make a tree of millions of nodes.'
          }
        >
          <span className="muted">largest tree</span>
          <input
            type="number"
            min={1}
            step={100000}
            value={maxPacked}
            onChange={(e) => setMaxPacked(Math.floor(Number(e.currentTarget.value)))}
            data-testid="max-packed"
            style={{ width: '8em' }}
          />
          <span className="muted">nodes</span>
        </label>
        <span className="sep" />
        <span className="muted">Examples:</span>
        {EXAMPLES.map((ex) => (
          <button
            key={ex.name}
            type="button"
            className={source?.kind === 'example' && source.name === ex.name ? 'button active' : 'button'}
            title={ex.description}
            onClick={() => void openExample(ex.name)}
            data-testid={`example-${ex.name}`}
          >
            {ex.label}
          </button>
        ))}
        <span className="grow" />
        {rollouts.length > PICKER_MAX && (
          <span className="muted" data-testid="rollout-position">
            rollout {rolloutIndex + 1} of {rollouts.length}: pick one in the data-set table
          </span>
        )}
        {rollouts.length > 1 && rollouts.length <= PICKER_MAX && (
          <label className="picker">
            <span className="muted">rollout</span>
            <select value={rolloutIndex} onChange={(e) => void selectRollout(Number(e.currentTarget.value))} data-testid="rollout-picker">
              {rollouts.map((r, i) => (
                <option key={r.id} value={i}>
                  {r.id} · L {r.length} · K {r.K}
                  {r.reward !== undefined ? ` · reward ${r.reward}` : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        {source && (
          <span
            className="source"
            data-testid="source"
            title={
              timings ? `read ${timings.read.toFixed(0)} ms · validate ${timings.validate.toFixed(0)} ms · derive ${timings.derive.toFixed(0)} ms` : undefined
            }
          >
            {source.kind === 'example' ? 'example' : 'file'} <strong>{source.name}</strong>
            {rollouts.length > 1 ? ` · ${rollouts.length} rollouts` : ''}
          </span>
        )}
      </div>
      {loading && <Progress />}
      {loadError && (
        <div className="load-error" role="alert">
          <span className="label">Not loaded:</span>
          <code data-testid="load-error">{loadError}</code>
          <span className="muted">{source ? `Still showing ${source.name}.` : ''}</span>
          <button type="button" className="dismiss" onClick={dismiss} aria-label="Dismiss">
            ×
          </button>
        </div>
      )}
    </div>
  );
}

function Progress() {
  const loading = useWorkbench((s) => s.loading)!;
  const determinate = loading.phase === 'read' && loading.total > 0;
  const fraction = determinate ? loading.done / loading.total : undefined;
  const label =
    loading.phase === 'read'
      ? `Reading ${loading.fileName}: ${mb(loading.done)} of ${mb(loading.total)}`
      : loading.phase === 'validate'
        ? `Validating ${loading.fileName}…`
        : `Deriving the conditioning tree…`;
  return (
    <div className="progress" data-testid="load-progress">
      <progress max={1} value={fraction} aria-label={label} />
      <span>{label}</span>
    </div>
  );
}

function mb(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;
}
