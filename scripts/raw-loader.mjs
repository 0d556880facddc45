// Node module hook: `import text from './x.wgsl?raw'` yields the file's text, exactly as Vite does
// in the browser and in Vitest, so shaders load by one mechanism in every world (CLI, benches).
import { readFile } from 'node:fs/promises';

export async function resolve(specifier, context, nextResolve) {
  if (specifier.endsWith('?raw')) {
    const url = new URL(specifier.slice(0, -4), context.parentURL);
    return { url: `${url.href}?raw`, shortCircuit: true, format: 'module' };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (url.endsWith('?raw')) {
    const text = await readFile(new URL(url.slice(0, -4)), 'utf8');
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return nextLoad(url, context);
}
