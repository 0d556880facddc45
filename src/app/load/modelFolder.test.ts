// A model folder as the page receives it: picked with <input webkitdirectory> (paths under the picked
// folder), or its files dropped loose; a lone checkpoint or a rollout file is no folder.
import { describe, expect, it } from 'vitest';
import { isModelFolderFiles, LOOSE_FOLDER_NAME, pickedFolder } from './modelFolder';

const picked = (path: string, text = path) => Object.assign(new File([text], path.slice(path.lastIndexOf('/') + 1)), { webkitRelativePath: path });

describe('pickedFolder', () => {
  it('names the folder by its top directory and each file by its path under it', async () => {
    const folder = pickedFolder([picked('qwen3/config.json', '{}'), picked('qwen3/model.safetensors'), picked('qwen3/original/params.json')])!;
    expect(folder.name).toBe('qwen3');
    expect([...folder.files.keys()]).toEqual(['config.json', 'model.safetensors', 'original/params.json']);
    expect(await folder.files.get('config.json')!.text()).toBe('{}');
  });

  it('takes files without a path (dropped loose) by their names, under the loose name; nothing picked is none', () => {
    const folder = pickedFolder([new File(['{}'], 'config.json'), new File([''], 'model.safetensors')])!;
    expect(folder.name).toBe(LOOSE_FOLDER_NAME);
    expect([...folder.files.keys()]).toEqual(['config.json', 'model.safetensors']);
    expect(pickedFolder([])).toBeNull();
  });
});

describe('isModelFolderFiles', () => {
  it('takes several files among which a config, an index or weights; a lone file stays what it is', () => {
    expect(isModelFolderFiles(['config.json', 'tokenizer.json'])).toBe(true);
    expect(isModelFolderFiles(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'])).toBe(true);
    expect(isModelFolderFiles(['tokenizer.json', 'model.safetensors.index.json'])).toBe(true);
    expect(isModelFolderFiles(['model.safetensors'])).toBe(false);
    expect(isModelFolderFiles(['a.jsonl', 'b.jsonl'])).toBe(false);
  });
});
