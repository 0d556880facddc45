// The repository stands alone: a user's clone has nothing beside it, so no tracked file may refer
// to a path outside the repository (a `../` that climbs above its root, a shared folder beside it,
// or an absolute path of the machine it was written on).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SKIP = /(^|\/)(package-lock\.json|node_modules|dist|\.git)(\/|$)|\.(png|safetensors|bin|ico|woff2?)$/;

/** Tracked files (git), or every file below the root when the copy has no git metadata. */
function repositoryFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  } catch {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(join(ROOT, dir))) {
        const path = dir ? `${dir}/${name}` : name;
        if (SKIP.test(path)) continue;
        if (statSync(join(ROOT, path)).isDirectory()) walk(path);
        else out.push(path);
      }
    };
    walk('');
    return out;
  }
}

/** Every place in `text` (a file at `path`) that names something outside the repository. */
function outsideReferences(path: string, text: string, root = ROOT): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const at = `${path}:${i + 1}`;
    // Any climb into a folder called shared (no folder of the repository has that name, so it can only mean
    // the one beside it), the shared folder's contents named from the root, or the machine's work folder.
    if (/\.\.\/shared\b|(^|[^\w.])\/work\/|(^|[^\w.])\/shared\/(SPEC|STYLE|fixtures|seeds)/.test(line)) found.push(`${at}: ${line.trim()}`);
    for (const match of line.matchAll(/(?:\.\.\/)+(?:[\w.-]+)?/g)) {
      const target = resolve(root, dirname(path), match[0]);
      if (target !== root && !target.startsWith(root + sep)) found.push(`${at}: ${match[0]} leaves the repository`);
    }
  });
  return found;
}

describe('the repository stands alone', () => {
  it('finds a shared folder beside the repository and a ../ that climbs above the root (the rule itself)', () => {
    // Written in pieces so that this file does not match its own rule.
    const up = '..' + '/';
    expect(outsideReferences('src/a/b.ts', `new URL('${up.repeat(3)}shared/fixtures/x.json', import.meta.url)`, '/r')).toHaveLength(2);
    expect(outsideReferences('README.md', 'see [the spec](' + '../SPEC.md)', '/r')).toHaveLength(1);
    expect(outsideReferences('docs/x.md', 'see /' + 'work/main/README.md', '/r')).toHaveLength(1);
    expect(outsideReferences('src/a/b.ts', "new URL('../../fixtures/x.json', import.meta.url)", '/r')).toEqual([]);
    expect(outsideReferences('docs/x.md', 'see [the tree](../README.md)', '/r')).toEqual([]);
    // A climb into a folder called shared is found even when it stays inside the repository (it reads as the one beside it).
    expect(outsideReferences('docs/x.md', 'as ' + up + 'shared/STYLE.md says', '/r')).toHaveLength(1);
    expect(outsideReferences('src/app/views/tree/TreeView.tsx', "import { useSize } from '" + up + "shared/useSize';", '/r')).toHaveLength(1);
    expect(outsideReferences('src/app/views/tree/TreeView.tsx', "import { useSize } from '" + up + "common/useSize';", '/r')).toEqual([]);
  });

  it('no tracked file refers to a path outside the repository', () => {
    const files = repositoryFiles().filter((f) => !SKIP.test(f));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) => {
      const bytes = readFileSync(join(ROOT, file));
      if (bytes.includes(0)) return []; // binary
      return outsideReferences(file, bytes.toString('utf8'));
    });
    expect(found, `outside references:\n${found.join('\n')}`).toEqual([]);
  });

  it('every relative link in the README and docs/ names a file that exists', () => {
    const docs = repositoryFiles().filter((f) => /^(README\.md|docs\/.+\.md)$/.test(f));
    const broken: string[] = [];
    for (const file of docs) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g)) {
        const link = m[1];
        if (/^[a-z]+:/.test(link)) continue; // http:, https:, mailto:
        try {
          statSync(resolve(ROOT, dirname(file), link));
        } catch {
          broken.push(`${file}: ${link}`);
        }
      }
    }
    expect(broken, `broken links:\n${broken.join('\n')}`).toEqual([]);
  });

  it('the root it checks is this repository', () => {
    expect(relative(ROOT, fileURLToPath(import.meta.url))).toBe(join('src', 'testing', 'standalone.test.ts'));
  });
});
