// A model folder as the page receives it: picked (<input webkitdirectory>: every file with its path under
// the picked folder) or dropped (a folder, read through its directory entry; or the folder's files,
// loose). Its files by name relative to the folder, for the scoring worker (which reads them by byte
// range, never whole). A lone .safetensors file stays a GPT-2 checkpoint.
import type { ModelFolderBlobs } from '../protocol/score';

export interface PickedFolder {
  /** The folder's name (its tokenizer's name when config.json has no `_name_or_path`). */
  name: string;
  files: ModelFolderBlobs;
}

/** The name loose dropped files go by: they carry no folder name. */
export const LOOSE_FOLDER_NAME = 'model';

/** Files of a folder the page can read a model from: a config.json, weights, or an index among several files. */
export function isModelFolderFiles(names: readonly string[]): boolean {
  return names.length > 1 && names.some((n) => n === 'config.json' || n === 'model.safetensors.index.json' || n.endsWith('.safetensors'));
}

/** Files an <input webkitdirectory> gave: `qwen3/config.json` → folder `qwen3`, file `config.json`. */
export function pickedFolder(files: readonly File[]): PickedFolder | null {
  if (!files.length) return null;
  const paths = files.map((f) => f.webkitRelativePath || f.name);
  const top = paths[0].includes('/') ? paths[0].slice(0, paths[0].indexOf('/')) : '';
  const map = new Map<string, Blob>();
  files.forEach((file, i) => {
    const path = paths[i];
    map.set(top && path.startsWith(`${top}/`) ? path.slice(top.length + 1) : path, file);
  });
  return { name: top || LOOSE_FOLDER_NAME, files: map };
}

function entryFile(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

async function directoryEntries(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const all: FileSystemEntry[] = [];
  // readEntries answers in batches (100 in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) return all;
    all.push(...batch);
  }
}

/** Every file under a dropped directory, by its path relative to it. */
async function readDirectory(dir: FileSystemDirectoryEntry, prefix = ''): Promise<Map<string, Blob>> {
  const files = new Map<string, Blob>();
  for (const entry of await directoryEntries(dir)) {
    if (entry.isFile) files.set(prefix + entry.name, await entryFile(entry as FileSystemFileEntry));
    else if (entry.isDirectory)
      for (const [name, blob] of await readDirectory(entry as FileSystemDirectoryEntry, `${prefix}${entry.name}/`)) files.set(name, blob);
  }
  return files;
}

/**
 * A dropped model folder: one directory (read through its entry), or several loose files that look like
 * one (isModelFolderFiles); null for anything else (a rollout file, a lone checkpoint).
 */
export async function droppedFolder(transfer: DataTransfer): Promise<PickedFolder | null> {
  // Entries must be taken while the drop event runs: the list is emptied after it.
  const entries = Array.from(transfer.items, (item) => (item.kind === 'file' ? item.webkitGetAsEntry() : null));
  const files = Array.from(transfer.files);
  const dir = entries.length === 1 && entries[0]?.isDirectory ? (entries[0] as FileSystemDirectoryEntry) : null;
  if (dir) return { name: dir.name, files: await readDirectory(dir) };
  if (!isModelFolderFiles(files.map((f) => f.name))) return null;
  return { name: LOOSE_FOLDER_NAME, files: new Map(files.map((f) => [f.name, f])) };
}
