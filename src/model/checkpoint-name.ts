// The one name of a checkpoint's optimizer state, beside it: run.safetensors → run.optim.safetensors.
// Pure, for Node (mw train writes and reads it) and the browser (a lane's export downloads it).

export function optimizerStatePath(checkpointPath: string): string {
  return checkpointPath.replace(/(\.safetensors)?$/, '.optim.safetensors');
}
