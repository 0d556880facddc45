// Makes sure Debian's chromium (headless browser + SwiftShader's Vulkan driver) and the Vulkan
// loader are present. As root it installs them with apt-get; otherwise it says what to run.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

const needs = [
  ['/usr/bin/chromium', 'chromium'],
  ['/usr/lib/chromium/vk_swiftshader_icd.json', 'chromium'],
];
const hasVulkanLoader = () => {
  try {
    return execSync('ldconfig -p', { encoding: 'utf8' }).includes('libvulkan.so.1');
  } catch {
    return false;
  }
};

export function missingPackages() {
  const missing = new Set(needs.filter(([path]) => !existsSync(path)).map(([, pkg]) => pkg));
  if (!hasVulkanLoader()) missing.add('libvulkan1');
  return [...missing];
}

export function ensureChromium() {
  const missing = missingPackages();
  if (missing.length === 0) return true;
  const command = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    console.log(`setup: installing Debian packages: ${missing.join(', ')}`);
    execSync(`${command.replace('apt-get update', 'apt-get update -qq')} -qq`, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const still = missingPackages();
    if (still.length) {
      console.error(`setup: still missing after install: ${still.join(', ')}`);
      return false;
    }
    return true;
  }
  console.error(`setup: WebGPU tests need Debian's ${missing.join(', ')}; run as root: ${command}`);
  return false;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(ensureChromium() ? 0 : 1);
