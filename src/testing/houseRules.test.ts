// The house rules hold themselves: `npm run lint` (Biome's formatter and linter, `biome ci`, and knip's
// unused-export check) fails on a violation. Each check runs with the repository's own config on a
// small tree of its own: a clean file passes, a file written against the style or an export nobody
// imports fails, naming what is wrong.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sandbox = mkdtempSync(join(tmpdir(), 'mw-rules-'));
afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

function tree(name: string, files: Record<string, string>, configs: string[]): string {
  const dir = join(sandbox, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const config of configs) copyFileSync(join(ROOT, config), join(dir, config));
  return dir;
}

function run(tool: 'biome' | 'knip', args: string[], cwd: string) {
  const result = spawnSync(join(ROOT, 'node_modules', '.bin', tool), args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const CLEAN = '// A file in the house style.\nexport function greet(name: string): string {\n  return name.toUpperCase();\n}\n';

describe('the house rules (biome.json, knip.json)', () => {
  it('biome ci passes a file in the house style and fails the formatter and the linter by name', () => {
    const clean = tree('biome-clean', { 'src/a.ts': CLEAN }, ['biome.json']);
    expect(run('biome', ['ci', '--colors=off', '--error-on-warnings', '--vcs-enabled=false', 'src'], clean)).toMatchObject({ status: 0 });

    // Double quotes and no semicolon: the formatter's diff; a debugger statement: the linter's rule.
    const messy = tree('biome-messy', { 'src/a.ts': 'export const a = "double"\n', 'src/b.ts': 'export function b(): void {\n  debugger;\n}\n' }, [
      'biome.json',
    ]);
    const found = run('biome', ['ci', '--colors=off', '--error-on-warnings', '--vcs-enabled=false', 'src'], messy);
    expect(found.status).toBe(1);
    expect(found.output).toMatch(/src\/a\.ts format/);
    expect(found.output).toMatch(/src\/b\.ts:2:3 lint\/suspicious\/noDebugger/);
  }, 60_000);

  it('knip passes a tree whose exports are all imported and fails an export nobody imports, by name', () => {
    const pkg = JSON.stringify({ name: 'rules-probe', private: true, type: 'module' });
    const config = JSON.stringify({ entry: ['src/main.ts'], project: ['src/**/*.ts'] });
    const files = (extra: string) => ({
      'package.json': pkg,
      'knip.json': config,
      'src/main.ts': "import { greet } from './a';\nconsole.log(greet('x'));\n",
      'src/a.ts': CLEAN + extra,
    });
    expect(run('knip', ['--no-progress'], tree('knip-clean', files(''), []))).toMatchObject({ status: 0 });
    const found = run('knip', ['--no-progress'], tree('knip-dead', files('\nexport function unusedHelper(): number {\n  return 1;\n}\n'), []));
    expect(found.status).toBe(1);
    expect(found.output).toMatch(/Unused exports \(1\)\s+unusedHelper\s+function\s+src\/a\.ts:6:17/);
  }, 60_000);
});
