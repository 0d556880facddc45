// The floors of .dependency-cruiser.cjs hold for src/ (no cycle, no upward import), and the rules
// do catch what they forbid: a deliberate upward import, a type-only cycle, a React import in pure
// logic, the app's floors, a slice importing a slice, the GPU layer's inner floors, a GPU step that
// plans and the kernels' float64 references, each in a small tree of its own, fail them by name.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type IViolation } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: NonNullable<ICruiseOptions['ruleSet']>['forbidden'];
  options: ICruiseOptions;
};

async function violations(baseDir: string): Promise<IViolation[]> {
  const result = await cruise(['src'], {
    ...config.options,
    validate: true,
    baseDir,
    ruleSet: { forbidden: config.forbidden },
    tsConfig: { fileName: join(baseDir, 'tsconfig.json') },
  });
  if (typeof result.output === 'string') throw new Error(`dependency-cruiser printed instead of reporting: ${result.output}`);
  return result.output.summary.violations;
}

const describeViolation = (v: IViolation) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`;

describe('the floors (.dependency-cruiser.cjs)', () => {
  it('src/ has no import cycle and no import against the floors', async () => {
    const found = await violations(ROOT);
    expect(found.map(describeViolation)).toEqual([]);
  }, 120_000);

  const sandbox = mkdtempSync(join(tmpdir(), 'mw-deps-'));
  afterAll(() => rmSync(sandbox, { recursive: true, force: true }));
  const tree = (name: string, files: Record<string, string>) => {
    const dir = join(sandbox, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    cpSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    return dir;
  };

  it('a deliberate upward import (rollout → gpu) fails its rule', async () => {
    const dir = tree('upward', {
      'src/gpu/runtime/device.ts': 'export const adapter = 1;\n',
      'src/rollout/parse.ts': "import { adapter } from '../gpu/runtime/device';\nexport const x = adapter;\n",
    });
    expect((await violations(dir)).map(describeViolation)).toEqual(['rollout-imports-only-below: src/rollout/parse.ts → src/gpu/runtime/device.ts']);
  }, 60_000);

  it('a kernel importing a pass above it, and the runtime importing a kernel, fail the GPU floors', async () => {
    const dir = tree('gpu-inside', {
      'src/gpu/model.ts': 'export const forward = 1;\n',
      'src/gpu/kernels/add/add.ts': "import { forward } from '../../model';\nexport const add = forward;\n",
      'src/gpu/runtime/kernel.ts': "import { add } from '../kernels/add/add';\nexport const launch = add;\n",
    });
    expect((await violations(dir)).map(describeViolation).sort()).toEqual([
      'gpu-kernels-below-passes: src/gpu/kernels/add/add.ts → src/gpu/model.ts',
      'gpu-runtime-below-kernels: src/gpu/runtime/kernel.ts → src/gpu/kernels/add/add.ts',
    ]);
  }, 60_000);

  it("the model floor may read a kernel's float64 reference; a reference reading GPU code, or an objective's reference read from below the objectives, fails", async () => {
    // Paths inside the sandbox tree, from a kernel's folder up to src/ (written so, they do not read as a climb out of this repository).
    const src = '../'.repeat(3);
    const dir = tree('references', {
      'src/util/rows.ts': 'export const lse = 1;\n',
      'src/gpu/runtime/device.ts': 'export const adapter = 1;\n',
      'src/objectives/tokens.ts': 'export const term = 1;\n',
      'src/gpu/kernels/gelu/gelu.reference.ts': `import { lse } from '${src}util/rows';\nexport const geluRef = lse;\n`,
      'src/gpu/kernels/add/add.reference.ts': "import { adapter } from '../../runtime/device';\nexport const addRef = adapter;\n",
      'src/gpu/kernels/loss-grad/loss-grad.reference.ts': `import { term } from '${src}objectives/tokens';\nexport const lossRef = term;\n`,
      'src/gpu/kernels/gelu/gelu2.reference.ts': `import { term } from '${src}objectives/tokens';\nexport const gelu2 = term;\n`,
      'src/model/reference/model.ts':
        "import { geluRef } from '../../gpu/kernels/gelu/gelu.reference';\nimport { lossRef } from '../../gpu/kernels/loss-grad/loss-grad.reference';\nexport const m = geluRef + lossRef;\n",
    });
    expect((await violations(dir)).map(describeViolation).sort()).toEqual([
      'kernel-references-are-plain-math: src/gpu/kernels/add/add.reference.ts → src/gpu/runtime/device.ts',
      'model-references-read-only-util: src/gpu/kernels/add/add.reference.ts → src/gpu/runtime/device.ts',
      'model-references-read-only-util: src/gpu/kernels/gelu/gelu2.reference.ts → src/objectives/tokens.ts',
      'objective-references-above-the-objectives: src/model/reference/model.ts → src/gpu/kernels/loss-grad/loss-grad.reference.ts',
    ]);
  }, 60_000);

  it('the GPU step planning (a value from plan/) fails its rule; a type from plan/ does not', async () => {
    const dir = tree('gpu-train', {
      'src/plan/step.ts': 'export interface StepLayout { rows: number }\nexport const assembleStep = (): StepLayout => ({ rows: 1 });\n',
      'src/gpu/train.ts': "import { assembleStep, type StepLayout } from '../plan/step';\nexport const run = (): StepLayout => assembleStep();\n",
      'src/gpu/score.ts': "import type { StepLayout } from '../plan/step';\nexport const rows = (s: StepLayout) => s.rows;\n",
    });
    expect((await violations(dir)).map(describeViolation)).toEqual(['gpu-train-runs-a-planned-step: src/gpu/train.ts → src/plan/step.ts']);
    const typeOnly = tree('gpu-train-types', {
      'src/plan/step.ts': 'export interface StepLayout { rows: number }\n',
      'src/gpu/train.ts': "import type { StepLayout } from '../plan/step';\nexport const rows = (s: StepLayout) => s.rows;\n",
    });
    expect(await violations(typeOnly)).toEqual([]);
  }, 60_000);

  it('a cycle of type-only imports fails no-circular', async () => {
    const dir = tree('cycle', {
      'src/tree/a.ts': "import type { B } from './b';\nexport interface A { b?: B }\n",
      'src/tree/b.ts': "import type { A } from './a';\nexport interface B { a?: A }\n",
    });
    expect((await violations(dir)).map(describeViolation)).toEqual(['no-circular: src/tree/a.ts → src/tree/b.ts (src/tree/b.ts → src/tree/a.ts)']);
  }, 60_000);

  it('an app view imported by a plain app module, and the store by a view model, fail the app floors', async () => {
    const dir = tree('app', {
      'src/app/views/Panel.tsx': 'export const Panel = 1;\n',
      'src/app/store/index.ts': 'export const store = 1;\n',
      'src/app/core/viewData.ts': "import { Panel } from '../views/Panel';\nimport { store } from '../store';\nexport const v = Panel + store;\n",
    });
    const names = (await violations(dir)).map((v) => v.rule.name).sort();
    expect(names).toContain('app-plain-modules-below-store');
    expect(names.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('a slice importing another slice, or the store, fails slice-imports-no-slice', async () => {
    const dir = tree('slices', {
      'src/app/store/index.ts': "import { a } from './aSlice';\nexport const store = a;\n",
      'src/app/store/aSlice.ts': 'export const a = 1;\n',
      'src/app/store/bSlice.ts': "import { a } from './aSlice';\nexport const b = a;\n",
      'src/app/store/cSlice.ts': "import { store } from './index';\nexport const c = store;\n",
    });
    expect((await violations(dir)).map(describeViolation).sort()).toEqual([
      'slice-imports-no-slice: src/app/store/bSlice.ts → src/app/store/aSlice.ts',
      'slice-imports-no-slice: src/app/store/cSlice.ts → src/app/store/index.ts',
    ]);
  }, 60_000);
});
