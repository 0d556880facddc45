// Registers TypeScript (tsx) and the `?raw` import hook, so Node runs src/ as Vite does.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

register('./raw-loader.mjs', import.meta.url);
registerTsx();
