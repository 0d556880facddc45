// For the run's tests: the controller's store in memory (the browser keeps it in IndexedDB), with
// a log of what was written.
import type { RunStore } from './controller';

export function memoryStore(): RunStore & { writes: string[] } {
  let run: Awaited<ReturnType<RunStore['loadRun']>> = null;
  const files = new Map<string, Parameters<RunStore['saveFile']>[0]>();
  const writes: string[] = [];
  return {
    writes,
    async saveRun(r) {
      writes.push(`run playing=${r.playing}`);
      run = { ...r, lanes: run?.lanes ?? [], history: run?.history ?? [] };
    },
    async saveCheckpoint(r, lanes, history) {
      writes.push(`checkpoint ${lanes.map((l) => `${l.method}@${l.step}`).join(' ')} history ${history.length}`);
      run = { ...r, lanes: structuredClone([...lanes]), history: structuredClone([...history]) };
    },
    loadRun: async () => (run ? structuredClone(run) : null),
    async clearRun() {
      run = null;
    },
    async saveFile(file) {
      files.set(file.name, file);
    },
    loadFile: async (name) => files.get(name) ?? null,
  };
}
