// A model folder on disk, for Node (the CLI, tests): each file read by byte ranges through a file
// handle, never whole. `PATH` is the folder, or a `.safetensors` file with a config.json beside it.

import { existsSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { type ByteRangeReader, type ModelFolder, ModelFolderError, type ModelFolderFiles, openModelFolder } from './folder';

/** One file as byte ranges: a handle opened per read, so nothing stays open between tensors. */
export function fileRangeReader(path: string): ByteRangeReader {
  return {
    size: statSync(path).size,
    async read(begin, end) {
      const handle = await open(path, 'r');
      try {
        const out = new Uint8Array(end - begin);
        let at = 0;
        while (at < out.length) {
          const { bytesRead } = await handle.read(out, at, out.length - at, begin + at);
          if (bytesRead === 0) throw new ModelFolderError(path, `ends at byte ${begin + at}, expected ${end} bytes`);
          at += bytesRead;
        }
        return out;
      } finally {
        await handle.close();
      }
    },
  };
}

export function nodeModelFolderFiles(folder: string): ModelFolderFiles {
  return {
    name: basename(folder),
    has: (file) => existsSync(join(folder, file)) && statSync(join(folder, file)).isFile(),
    async open(file) {
      return fileRangeReader(join(folder, file));
    },
  };
}

/** Whether PATH names a model folder (a directory) or a single .safetensors file with a config.json beside it. */
export function isModelFolderPath(path: string): boolean {
  if (!existsSync(path)) return false;
  if (statSync(path).isDirectory()) return true;
  return path.endsWith('.safetensors') && existsSync(join(dirname(path), 'config.json'));
}

/** Opens PATH (a folder, or X.safetensors with config.json beside it); problems name the file. */
export async function openModelFolderPath(path: string): Promise<ModelFolder> {
  if (statSync(path).isDirectory()) return openModelFolder(nodeModelFolderFiles(path));
  const folder = dirname(path);
  return openModelFolder(nodeModelFolderFiles(folder), { weights: basename(path) });
}
