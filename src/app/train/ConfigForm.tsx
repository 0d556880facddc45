// The run configuration: model, environment, harness, methods, objective and optimiser. Every field
// is in the URL fragment, so a link reproduces the run. Locked while a run exists (reset to edit).
import type { ReactNode } from 'react';
import { EDITOR_KINDS, ENV_IDS, type EditorKind, type EnvId } from '../../harness';
import { describeConfig, MODEL_PRESETS, type ModelPreset } from '../../model/config';
import { METHODS, type Method } from '../../plan/types';
import { useWorkbench } from '../store';
import { METHOD_BY_ID } from '../../present/palette';
import { MAX_METHODS, orderedMethods, PRESETS, type RunConfig } from '../../run/config';

function Field({ label, hint, children }: { label: string; hint?: string; children: ReactNode }) {
  return (
    <label className="field" title={hint}>
      <span>{label}</span>
      {children}
    </label>
  );
}

type NumberKey = { [K in keyof RunConfig]: RunConfig[K] extends number ? K : never }[keyof RunConfig];

/** A number of the draft config, read from and written to the store. */
function NumberField({ name, label, hint, step = 1, min, max }: { name: NumberKey; label: string; hint?: string; step?: number; min?: number; max?: number }) {
  const value = useWorkbench((s) => s.trainConfig[name]);
  const set = useWorkbench((s) => s.setTrainConfig);
  return (
    <Field label={label} hint={hint}>
      <input
        type="number"
        name={name}
        data-testid={`config-${name}`}
        value={Number.isFinite(value) ? value : ''}
        step={step}
        min={min}
        max={max}
        onChange={(e) => set({ [name]: e.target.valueAsNumber })}
      />
    </Field>
  );
}

export function ConfigForm() {
  const config = useWorkbench((s) => s.trainConfig);
  const locked = useWorkbench((s) => s.trainRun !== null);
  const files = useWorkbench((s) => s.trainFiles);
  const set = useWorkbench((s) => s.setTrainConfig);
  const importCheckpoint = useWorkbench((s) => s.trainImportCheckpoint);
  const startFromDemo = useWorkbench((s) => s.trainUseDemoModel);
  const paperClaim = useWorkbench((s) => s.trainPaperClaim);
  const toggleMethod = (m: Method) => {
    const next = config.methods.includes(m) ? config.methods.filter((x) => x !== m) : [...config.methods, m];
    if (next.length <= MAX_METHODS) set({ methods: orderedMethods(next) });
  };
  const checkpoints = [...new Set([...files, ...(config.checkpoint ? [config.checkpoint] : [])])];

  return (
    <form className="train-config" onSubmit={(e) => e.preventDefault()} aria-label="Run configuration">
      <fieldset disabled={locked}>
        <section>
          <h3>Model</h3>
          <Field label="start from" hint="fresh weights from a preset (seeded), or a GPT-2 checkpoint kept in this browser">
            <select
              data-testid="config-model"
              value={config.checkpoint ? `ckpt:${config.checkpoint}` : `preset:${config.preset}`}
              onChange={(e) => {
                const [kind, ...rest] = e.target.value.split(':');
                const name = rest.join(':');
                if (kind === 'preset') set({ preset: name as ModelPreset, checkpoint: null });
                else set({ checkpoint: name });
              }}
            >
              {PRESETS.map((p) => (
                <option key={p} value={`preset:${p}`} title={describeConfig(MODEL_PRESETS[p])}>
                  {p} · fresh
                </option>
              ))}
              {checkpoints.map((name) => (
                <option key={name} value={`ckpt:${name}`} title={name}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
          {/* The column is narrow: the choice's details on their own wrapping line, not cut off inside the closed drop-down. */}
          <p className="config-model-detail" data-testid="config-model-detail">
            {config.checkpoint ? `checkpoint ${config.checkpoint}` : `fresh weights: ${describeConfig(MODEL_PRESETS[config.preset])}`}
          </p>
          <button
            type="button"
            className="button small"
            data-testid="config-demo-model"
            title="The pretrained demo checkpoint (small preset, SFT on expert episodes, live views and flattened tapes) and the task it was trained on: collect, 3 pages, no decoys, 20 filler characters, budget 100; learning rate 3e-4, safe for a trained model"
            onClick={() => void startFromDemo()}
          >
            Demo model
          </button>
          <button
            type="button"
            className="button small preset"
            data-testid="config-paper-claim"
            title={
              'Starts Naive-Compressed, Naive-Full, the packed 4D mask and SDCC side by side from the weak start (the demo model, briefly fine-tuned on collect with a decoy page beside every page read: ' +
              'low EM, something to learn), SFT on expert demonstrations under the window editor, with held-out EM charted beside the shipped results of mw experiment learning (dashed)'
            }
            onClick={() => void paperClaim()}
          >
            ▶ The paper's claim
          </button>
          <label className="button small file" title="Import a GPT-2 checkpoint (safetensors, vocabulary 272)">
            Import checkpoint…
            <input
              type="file"
              accept=".safetensors"
              data-testid="config-import-checkpoint"
              onChange={(e) => e.target.files?.[0] && void importCheckpoint(e.target.files[0])}
            />
          </label>
        </section>

        <section>
          <h3>Environment</h3>
          <div className="row">
            <Field label="task">
              <select data-testid="config-env" value={config.env} onChange={(e) => set({ env: e.target.value as EnvId })}>
                {ENV_IDS.map((id) => (
                  <option key={id}>{id}</option>
                ))}
              </select>
            </Field>
            <NumberField name="difficulty" label={config.env === 'lookup' ? 'hops' : 'pages'} hint="difficulty: tool calls an episode needs" min={1} max={8} />
          </div>
          <div className="row">
            <NumberField name="distractors" label={config.env === 'lookup' ? 'distractors' : 'decoys'} min={0} max={8} />
            <NumberField name="filler" label="filler" hint="filler characters per observation" min={0} max={400} />
          </div>
        </section>

        <section>
          <h3>Harness</h3>
          <div className="row">
            <Field label="editor" hint="the memory editor that compresses the context">
              <select data-testid="config-editor" value={config.editor} onChange={(e) => set({ editor: e.target.value as EditorKind })}>
                {EDITOR_KINDS.map((k) => (
                  <option key={k}>{k}</option>
                ))}
              </select>
            </Field>
            <NumberField name="budget" label="budget" hint="the editor's token budget" min={8} />
            <NumberField name="actTokens" label="act tokens" hint="most tokens in one action" min={4} max={256} />
          </div>
        </section>

        <section>
          <h3>
            Methods <small className="muted">one lane each, same start and seed</small>
          </h3>
          <div className="method-chips" role="group" aria-label="Methods">
            {METHODS.map((m) => {
              const on = config.methods.includes(m);
              return (
                <button
                  key={m}
                  type="button"
                  className={`chip${on ? ' on' : ''}`}
                  aria-pressed={on}
                  data-testid={`config-method-${m}`}
                  style={{ ['--c' as string]: METHOD_BY_ID[m].color }}
                  onClick={() => toggleMethod(m)}
                  title={METHOD_BY_ID[m].sees}
                >
                  <i />
                  {METHOD_BY_ID[m].label}
                </button>
              );
            })}
          </div>
          {config.methods.includes('sdcc') && (
            <NumberField name="lambda" label="λ (SDCC)" hint="weight of the forward KL at diverging leaves" step={0.05} min={0} />
          )}
        </section>

        <section>
          <h3>Objective</h3>
          <div className="segmented" role="group" aria-label="Objective">
            <button type="button" aria-pressed={config.objective === 'sft'} data-testid="config-objective-sft" onClick={() => set({ objective: 'sft' })}>
              SFT warm start
            </button>
            <button type="button" aria-pressed={config.objective === 'rl'} data-testid="config-objective-rl" onClick={() => set({ objective: 'rl' })}>
              RL (model plays)
            </button>
          </div>
          <p className="hint">
            {config.objective === 'sft'
              ? 'Expert demonstrations, shared by every lane. They carry logprob 0, so drift is measured against the exact live-prefix score.'
              : "Each lane's model plays its own episodes (KV-cache decoding); drift is measured against those rollouts' own logprobs."}
          </p>
          <div className="row">
            <NumberField name="lr" label="learning rate" step={0.0005} min={0} />
            <NumberField name="batch" label="batch" hint="prompts per step" min={1} />
            <NumberField name="group" label="group" hint="rollouts per prompt (RL)" min={1} />
          </div>
          <div className="row">
            <NumberField name="seed" label="seed" min={0} />
            <NumberField name="steps" label="steps" hint="0: until paused" min={0} />
            <NumberField name="checkpointEvery" label="checkpoint every" hint="steps between checkpoints kept in this browser" min={1} />
          </div>
          <div className="row">
            <NumberField
              name="evalEvery"
              label="evaluate every"
              hint="steps between greedy plays of held-out prompts by each lane's model (0: never)"
              min={0}
            />
            <NumberField name="evalPrompts" label="held-out prompts" hint="prompts each evaluation plays greedily (the same ones every time)" min={1} />
            <span className="field" />
          </div>
        </section>
      </fieldset>
      {locked && <p className="hint locked">The configuration of a run is fixed: reset to change it.</p>}
    </form>
  );
}
