// Hub slice: a model from the Hugging Face Hub by id. The files are downloaded into the page's cache
// (OPFS, src/app/load/hubStore.ts) with progress in bytes, a partial file resumed, a whole snapshot read with
// no request; then opened as a model folder (the drift slice's openModelFolder, not copied into IndexedDB: the
// cache keeps it). The Hub's address is a setting; a token is sent to the Hub only, never kept.
import { DEFAULT_HUB_ENDPOINT, HubError, parseHubRef } from '../../model/hub/hub';
import { clearHubCache, hubCacheBytes, hubModelFiles } from '../load/hubStore';
import { saveScoringHubModel } from '../persist/checkpoint';
import { loadHubEndpoint, saveHubEndpoint, saveLastHubModel } from '../persist/hubSettings';
import type { HubSlice, Slice } from './types';

export const createHubSlice: Slice<HubSlice> = (set, get) => ({
  hubEndpoint: loadHubEndpoint(),
  hubDownload: null,
  hubError: null,
  hubCacheBytes: null,

  setHubEndpoint(endpoint) {
    const value = endpoint.trim() || DEFAULT_HUB_ENDPOINT;
    saveHubEndpoint(value);
    set({ hubEndpoint: value });
  },

  async openHubModel(id, token, options = {}) {
    const typed = id.trim();
    const ref = parseHubRef(typed.startsWith('hf:') ? typed : `hf:${typed}`);
    if (!ref) {
      set({ hubError: `"${typed}" is not a model id (ORG/NAME, or ORG/NAME@REVISION)` });
      return false;
    }
    if (get().hubDownload) return false;
    set({ hubDownload: { id: typed, bytes: 0, total: 0, fetched: 0, startedAt: performance.now() }, hubError: null });
    let files: Map<string, Blob>;
    try {
      files = await hubModelFiles(ref, {
        endpoint: get().hubEndpoint,
        token: token || undefined,
        tokenHint: 'enter an access token',
        cachedOnly: options.restored === true,
        onProgress: ({ bytes, total, fetched }) => {
          const download = get().hubDownload;
          if (download) set({ hubDownload: { ...download, bytes, total, fetched } });
        },
      });
    } catch (error) {
      const message = error instanceof HubError ? error.message : `hf:${typed}: ${error instanceof Error ? error.message : String(error)}`;
      set({ hubDownload: null, hubError: message });
      void get().measureHubCache();
      return false;
    }
    set({ hubDownload: null });
    saveLastHubModel(typed);
    void get().measureHubCache();
    // Named as the folder would be once downloaded by hand: NAME of ORG/NAME (its tokenizer's name too). Kept
    // as its id only (the files are in the Hub cache), so a reload loads it from there.
    const name = ref.repo.split('/').pop()!;
    const opened = await get().openModelFolder(name, files, { persist: false, restored: options.restored === true });
    if (opened && !options.restored) void saveScoringHubModel(name, typed).catch(() => undefined);
    return opened;
  },

  async measureHubCache() {
    try {
      set({ hubCacheBytes: await hubCacheBytes() });
    } catch {
      set({ hubCacheBytes: null });
    }
  },

  async clearHubCache() {
    if (get().hubDownload) return;
    await clearHubCache().catch(() => undefined);
    await get().measureHubCache();
  },
});
