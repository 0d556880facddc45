// Files the app ships beside itself (public/: the demo and weak checkpoints, the example rollouts),
// fetched relative to the page, so the app works from any base path. A failed response is refused
// by the file's path and the HTTP status, never read as the file.

export async function fetchShipped(path: string): Promise<Response> {
  const response = await fetch(new URL(path, document.baseURI));
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response;
}
