// The training worker is greeted (hello: probe the device, restore a stored run) whatever starts it:
// the tour's step 10 imports the demo checkpoint before the panel opens, and a worker started by that
// import used to get no hello, so the panel said "starting the engine…" until a run began.
import { describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import { DEMO_MODEL, startingPointSettings } from '../../run/config';
import type { TrainRequest } from '../protocol/train';
import type { WorkbenchState } from './types';

const sent: TrainRequest[] = [];
vi.mock('../protocol/trainClient', () => ({
  createTrainClient: () => ({
    send: (request: TrainRequest) => void sent.push(request),
    request: async (make: (job: number) => TrainRequest) => {
      const request = make(1);
      sent.push(request);
      return { type: 'imported', job: 1, name: 'name' in request ? request.name : '' };
    },
  }),
}));
vi.mock('../load/shipped', () => ({ fetchShipped: async () => new Response(new Uint8Array(8)) }));

describe('the training worker', () => {
  it('gets its hello first when an import starts it, once, and Demo model sets every setting', async () => {
    const { createTrainSlice } = await import('./trainSlice');
    const store = create<WorkbenchState>()((...a) => createTrainSlice(...a) as WorkbenchState);
    store.getState().setTrainConfig({ methods: ['sdcc'], steps: 7, batch: 5, editor: 'window' }); // another preset's leftovers
    await store.getState().trainUseDemoModel();
    store.getState().trainConnect(); // the panel opens afterwards
    expect(sent.map((r) => r.type)).toEqual(['hello', 'import-checkpoint']);
    expect(store.getState().trainConfig).toMatchObject({ ...startingPointSettings(DEMO_MODEL.task), checkpoint: DEMO_MODEL.name });
  });
});
