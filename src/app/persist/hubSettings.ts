// The Hub settings the page remembers in localStorage: the Hub's address and the last model id loaded
// (never a token). Storage that refuses (private modes) reads as the defaults.
import { DEFAULT_HUB_ENDPOINT } from '../../model/hub/hub';

const ENDPOINT_KEY = 'memorywalker.hubEndpoint';
const LAST_ID_KEY = 'memorywalker.hubModel';

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // not kept: the page works without it
  }
}

export const loadHubEndpoint = (): string => read(ENDPOINT_KEY) || DEFAULT_HUB_ENDPOINT;
export const saveHubEndpoint = (endpoint: string): void => write(ENDPOINT_KEY, endpoint);
export const loadLastHubModel = (): string => read(LAST_ID_KEY) ?? '';
export const saveLastHubModel = (id: string): void => write(LAST_ID_KEY, id);
