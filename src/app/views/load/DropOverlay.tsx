// Drag and drop anywhere: while files are dragged over the window an overlay says where they go. A
// model folder (dropped whole, or its files together) goes to the scoring worker as the scoring model;
// else the first file: a GPT-2 checkpoint (safetensors) goes to the scoring worker, anything else is
// read as rollouts.
import { useEffect, useState } from 'react';
import { useWorkbench } from '../../store';
import { isCheckpointFile } from '../../load/checkpointFile';
import { droppedFolder } from '../../load/modelFolder';

function hasFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

export function DropOverlay() {
  const openBlob = useWorkbench((s) => s.openBlob);
  const openCheckpoint = useWorkbench((s) => s.openCheckpoint);
  const openModelFolder = useWorkbench((s) => s.openModelFolder);
  const [active, setActive] = useState(false);
  useEffect(() => {
    let depth = 0;
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth++;
      setActive(true);
    };
    const over = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setActive(false);
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setActive(false);
      const transfer = e.dataTransfer;
      const file = transfer?.files[0];
      if (!transfer || !file) return;
      void droppedFolder(transfer).then(async (folder) => {
        if (folder) return openModelFolder(folder.name, folder.files);
        return (await isCheckpointFile(file)) ? openCheckpoint(file, file.name) : openBlob(file, { kind: 'file', name: file.name });
      });
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [openBlob, openCheckpoint, openModelFolder]);
  if (!active) return null;
  return (
    <div className="drop-overlay" data-testid="drop-overlay">
      <div>
        Drop a rollout file, a checkpoint or a model folder
        <small>
          .json · .jsonl (a set: pick a rollout after loading) · memorywalker.calls/v1 · a GPT-2 model.safetensors, or a Llama / Qwen model folder (config.json,
          safetensors, tokenizer.json), to score with
        </small>
      </div>
    </div>
  );
}
