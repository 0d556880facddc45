// The demo checkpoint the app ships (public/models/demo.safetensors, trained by scripts/train-demo.sh):
// one click in the drift panel loads it, so nobody has to find the file on disk.

export const DEMO_MODEL_NAME = 'demo.safetensors';
/** Relative to the app's base URL. */
export const DEMO_MODEL_PATH = 'models/demo.safetensors';

export async function fetchDemoModel(): Promise<Blob> {
  const response = await fetch(new URL(DEMO_MODEL_PATH, document.baseURI));
  if (!response.ok) throw new Error(`${DEMO_MODEL_PATH}: HTTP ${response.status}`);
  return response.blob();
}
