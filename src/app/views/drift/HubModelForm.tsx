// A model from the Hugging Face Hub by id: the id (ORG/NAME, or ORG/NAME@REVISION), an access token for a
// gated model (a password field, sent to the Hub only, never kept), the Hub's address (a setting), the download's
// progress in bytes with its ETA, and the page's Hub cache with its size and a button that clears it.
import { useEffect, useState } from 'react';
import { duration } from '../../../present/progress';
import { loadLastHubModel } from '../../persist/hubSettings';
import { useWorkbench } from '../../store';

function size(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  return `${(bytes / 2 ** 10).toFixed(1)} KiB`;
}

function HubDownloadProgress() {
  const download = useWorkbench((s) => s.hubDownload);
  if (!download) return null;
  if (!download.total) return <p className="pad muted">Opening {download.id}…</p>;
  const elapsed = (performance.now() - download.startedAt) / 1000;
  // The ETA follows this load's rate over what is left to fetch (a resumed file's first part is already here).
  const left = download.total - download.bytes;
  const eta = download.fetched > 0 ? duration((left * elapsed) / download.fetched) : '?';
  const label = `Downloading ${download.id}: ${size(download.bytes)} of ${size(download.total)}, ETA ${eta}`;
  return (
    <div className="pad progress" data-testid="hub-progress" data-bytes={download.bytes} data-total={download.total}>
      <progress max={1} value={download.bytes / download.total} aria-label={label} />
      <span>{label}</span>
    </div>
  );
}

export function HubModelForm() {
  const openHubModel = useWorkbench((s) => s.openHubModel);
  const endpoint = useWorkbench((s) => s.hubEndpoint);
  const setHubEndpoint = useWorkbench((s) => s.setHubEndpoint);
  const busy = useWorkbench((s) => s.hubDownload !== null || s.modelLoading !== null);
  const hubError = useWorkbench((s) => s.hubError);
  const cacheBytes = useWorkbench((s) => s.hubCacheBytes);
  const measureHubCache = useWorkbench((s) => s.measureHubCache);
  const clearHubCache = useWorkbench((s) => s.clearHubCache);
  const [id, setId] = useState(loadLastHubModel);
  const [token, setToken] = useState('');

  useEffect(() => {
    void measureHubCache();
  }, [measureHubCache]);

  return (
    <div className="hub-model" data-testid="hub-model">
      <form
        className="pad hub-model-form"
        onSubmit={(e) => {
          e.preventDefault();
          void openHubModel(id, token);
        }}
      >
        <label>
          Hub model{' '}
          <input
            type="text"
            value={id}
            onChange={(e) => setId(e.currentTarget.value)}
            placeholder="Qwen/Qwen3-0.6B"
            spellCheck={false}
            data-testid="hub-model-id"
            title="A Llama / Qwen2 / Qwen3 model on the Hugging Face Hub: ORG/NAME, or ORG/NAME@REVISION (a branch, tag or commit)"
          />
        </label>
        <label>
          token{' '}
          <input
            type="password"
            value={token}
            onChange={(e) => setToken(e.currentTarget.value)}
            placeholder="for gated models"
            autoComplete="off"
            data-testid="hub-token"
            title="An access token for a gated or private model: sent to the Hub only, never kept"
          />
        </label>
        <button type="submit" disabled={busy || !id.trim()} data-testid="hub-load">
          Load from the Hub
        </button>
        <details className="hub-settings">
          <summary>Hub settings</summary>
          <label>
            Hub address{' '}
            <input type="url" defaultValue={endpoint} onBlur={(e) => setHubEndpoint(e.currentTarget.value)} spellCheck={false} data-testid="hub-endpoint" />
          </label>{' '}
          <span className="muted" data-testid="hub-cache">
            cache {cacheBytes === null ? '…' : size(cacheBytes)}
          </span>{' '}
          <button type="button" className="small" disabled={busy} onClick={() => void clearHubCache()} data-testid="hub-clear-cache">
            Clear the cache
          </button>
        </details>
      </form>
      <HubDownloadProgress />
      {hubError && (
        <p className="pad error-text" role="alert" data-testid="hub-error">
          {hubError}
        </p>
      )}
    </div>
  );
}
