// Tour slice: the guided tour's step and its setup, applied through the other slices' actions as a
// person would (open the example, select the target and method, load the demo model, configure a
// run). A step that needs WebGPU waits for the probe and, without WebGPU, stops with the reason.
// Moving on while a setup is in flight abandons it: only the newest step's setup finishes.
import { DEMO_MODEL } from '../../run/config';
import { TOUR_STEPS } from '../core/tourSteps';
import { dismissTourOffer, tourOfferDismissed } from '../persist/tourOffer';
import type { Slice, TourSlice, WorkbenchState } from './types';

let runs = 0;

const CLOSED = { tourStep: null, tourApplied: null, tourBusy: false, tourBlocked: null, tourError: null };

/** Resolves once the page's WebGPU probe has an answer. */
function probed(get: () => WorkbenchState, subscribe: (listener: (s: WorkbenchState) => void) => () => void): Promise<void> {
  if (get().gpu.kind !== 'probing') return Promise.resolve();
  return new Promise((resolve) => {
    const stop = subscribe((s) => {
      if (s.gpu.kind === 'probing') return;
      stop();
      resolve();
    });
  });
}

export const createTourSlice: Slice<TourSlice> = (set, get, api) => ({
  ...CLOSED,
  tourOffer: !tourOfferDismissed(),

  dismissTourOffer() {
    dismissTourOffer();
    set({ tourOffer: false });
  },

  async tourGo(n) {
    const number = Math.max(1, Math.min(TOUR_STEPS.length, Math.round(n)));
    const step = TOUR_STEPS[number - 1];
    const run = ++runs;
    const current = () => run === runs && get().tourStep === number;
    if (get().tourOffer) get().dismissTourOffer(); // a tour taken (from the offer, the top bar or a link) answers the offer
    set({ tourStep: number, tourApplied: number, tourBusy: true, tourBlocked: null, tourError: null });
    try {
      if (step.needs === 'webgpu') {
        await probed(get, api.subscribe);
        if (!current()) return;
        const gpu = get().gpu;
        if (gpu.kind === 'unavailable') return set({ tourBusy: false, tourBlocked: gpu.message });
      }
      const { setup } = step;
      const s = get();
      if (!(s.source?.kind === 'example' && s.source.name === setup.example)) {
        const opened = await s.openExample(setup.example, { target: setup.target });
        if (!current()) return;
        if (!opened) throw new Error(get().loadError ?? `the example ${setup.example} did not open`);
      }
      if (setup.rollout !== undefined && get().rolloutIndex !== setup.rollout) await get().selectRollout(setup.rollout, setup.target);
      if (!current()) return;
      const now = get();
      if (setup.target !== null) now.selectTarget(setup.target);
      now.setMethod(setup.method);
      if (setup.rows) now.setRows(setup.rows);
      if (setup.color) now.setColorBy(setup.color);
      if (setup.model === 'demo' && !get().model) {
        if (!(await get().useDemoModel())) throw new Error(get().driftError ?? 'the demo checkpoint did not load');
        if (!current()) return;
      }
      if (setup.train) {
        if (get().trainConfig.checkpoint !== DEMO_MODEL.name) await get().trainUseDemoModel();
        if (!current()) return;
        get().setTrainConfig({ methods: setup.train.methods });
      }
      if (current()) set({ tourBusy: false });
    } catch (error) {
      if (current()) set({ tourBusy: false, tourError: error instanceof Error ? error.message : String(error) });
    }
  },
  tourNext() {
    const { tourStep, tourBlocked } = get();
    if (tourStep !== null && tourStep < TOUR_STEPS.length && !tourBlocked) void get().tourGo(tourStep + 1);
  },
  tourBack() {
    const { tourStep } = get();
    if (tourStep !== null && tourStep > 1) void get().tourGo(tourStep - 1);
  },
  endTour() {
    runs++;
    get().dismissTourOffer(); // a tour opened from a link may end without tourGo: its end answers the offer too
    set(CLOSED);
  },
});
