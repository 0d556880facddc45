// Finds a Python 3 that imports torch, numpy and pytest, for the Python tier (python/): $MW_PYTHON,
// then Debian's /usr/bin/python3, then every python3 on PATH (a pyenv or venv python3 earlier on PATH
// may lack torch). As root it installs Debian's python3-torch, python3-numpy and python3-pytest with
// apt-get when none has them; otherwise it says what to run.
import { execFileSync, execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const PYTHON_PACKAGES = ['python3-torch', 'python3-numpy', 'python3-pytest'];

function candidates() {
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'python3'));
  return [...new Set([process.env.MW_PYTHON, '/usr/bin/python3', ...onPath].filter((p) => p && existsSync(p)))];
}

function imports(python) {
  try {
    execFileSync(python, ['-c', 'import torch, numpy, pytest'], { stdio: 'ignore', timeout: 180_000 });
    return true;
  } catch {
    return false;
  }
}

/** The first candidate interpreter that has the tier's packages, or undefined. */
export function findPython() {
  return candidates().find(imports);
}

/** The interpreter to run the tier with, installing Debian's packages first when root; undefined when there is none. */
export function ensurePython() {
  const found = findPython();
  if (found) return found;
  const command = `apt-get update && apt-get install -y ${PYTHON_PACKAGES.join(' ')}`;
  if (typeof process.getuid === 'function' && process.getuid() === 0 && existsSync('/usr/bin/apt-get')) {
    console.log(`setup: installing Debian packages: ${PYTHON_PACKAGES.join(', ')}`);
    execSync(`${command.replace('apt-get update', 'apt-get update -qq')} -qq`, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const installed = findPython();
    if (!installed) console.error('setup: no python3 imports torch, numpy and pytest after the install');
    return installed;
  }
  console.error(`setup: the Python tier needs Debian's ${PYTHON_PACKAGES.join(', ')}; run as root: ${command}`);
  return undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const python = ensurePython();
  if (python) console.log(python);
  process.exit(python ? 0 : 1);
}
