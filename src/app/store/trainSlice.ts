// Train slice: the page's mirror of the training worker: the draft run config (also in the URL
// fragment), the run, its status and progress, the metric history (one object appended in place,
// with a version number: charts subscribe to it and draw to canvas, React does not re-render per
// step), the episode being played and the last batch of each lane. Actions only send commands.
import { familyWeightsName } from '../load/checkpointFile';
import type { Method } from '../../plan/types';
import { appendRecords, createHistory } from '../core/history';
import { createLiveFollower, LIVE_SOURCE } from '../core/liveView';
import type { TrainReply, TrainRequest } from '../protocol/train';
import { createTrainClient, type TrainClient } from '../protocol/trainClient';
import { fetchShipped } from '../load/shipped';
import { configProblems, defaultRunConfig, DEMO_MODEL, PAPER_CLAIM, startingPointSettings, presetSizes, WEAK_MODEL, type RunConfig } from '../../run/config';
import type { MetricRecord } from '../../run/engine';
import type { Slice, TrainSlice } from './types';

let client: TrainClient | null = null;

export const createTrainSlice: Slice<TrainSlice> = (set, get) => {
  const follower = createLiveFollower(get, (json) => get().keepRollout(json, LIVE_SOURCE));
  /** Hands checkpoint bytes to the worker (which validates and keeps them) and starts the draft config from them. */
  const importCheckpoint = async (name: string, read: () => Promise<ArrayBuffer>, patch: Partial<RunConfig>): Promise<boolean> => {
    try {
      const bytes = new Uint8Array(await read());
      const reply = await ensure().request<Extract<TrainReply, { type: 'imported' }>>(
        (job) => ({ type: 'import-checkpoint', job, name, bytes }),
        [bytes.buffer],
      );
      set({ trainFiles: [...new Set([...get().trainFiles, reply.name])], trainBanner: null });
      get().setTrainConfig({ ...patch, checkpoint: reply.name });
      return true;
    } catch (error) {
      set({ trainBanner: { kind: 'notice', message: `${name}: ${(error as Error).message}` } });
      return false;
    }
  };
  /** A checkpoint shipped with the app (public/models), fetched. */
  const shipped = (file: string) => async () => (await fetchShipped(file)).arrayBuffer();
  const onReply = (reply: TrainReply) => {
    switch (reply.type) {
      case 'gpu':
        set({ trainGpu: reply.ok ? { kind: 'ready', adapter: reply.adapter, software: reply.software } : { kind: 'unavailable', message: reply.message } });
        break;
      case 'status':
        set({ trainStatus: reply.status });
        break;
      case 'run': {
        const history = createHistory(reply.history);
        const latest: Partial<Record<Method, MetricRecord>> = {};
        for (const [m, lane] of history.byMethod) if (lane.length) latest[m] = lane[lane.length - 1];
        // The run's step: its slowest lane's.
        const steps = Object.values(latest).map((r) => r.step);
        set({
          trainRun: reply.run,
          trainHistory: history,
          trainHistoryVersion: get().trainHistoryVersion + 1,
          trainLatest: latest,
          trainCheckpointStep: reply.run?.checkpointStep ?? 0,
          trainProgress: reply.run
            ? { step: steps.length ? Math.min(...steps) : 0, total: reply.run.config.steps, stepsPerSec: 0, tokensPerSec: 0, etaSec: null }
            : null,
          ...(reply.run ? { trainConfig: reply.run.config } : { trainBatches: {}, trainScores: null, trainLive: null }),
        });
        break;
      }
      case 'metrics': {
        appendRecords(get().trainHistory, reply.records);
        const latest = { ...get().trainLatest };
        for (const r of reply.records) latest[r.method] = r;
        set({ trainHistoryVersion: get().trainHistoryVersion + 1, trainLatest: latest, trainProgress: reply.progress });
        break;
      }
      case 'checkpointed':
        set({ trainCheckpointStep: reply.step });
        break;
      case 'batch':
        set({ trainBatches: { ...get().trainBatches, [reply.method]: { step: reply.step, rollouts: reply.rollouts } } });
        break;
      case 'live': {
        const { type: _, ...live } = reply;
        set({ trainLive: live });
        // The views follow the episode's structure (each action a new staircase step, each edit a
        // new branch); the action being decoded streams token by token in the live panel.
        if (get().trainFollow) follower.follow(reply.id, reply.events, reply.done);
        break;
      }
      case 'device-lost':
        set({ trainBanner: { kind: 'device-lost', message: `WebGPU device lost: ${reply.message}. Resuming from the last checkpoint on a new device…` } });
        break;
      case 'recovered':
        set({
          trainBanner: {
            kind: 'recovered',
            message: `WebGPU device lost and replaced (${reply.adapter}); the run resumed from its checkpoint at step ${reply.step}.`,
          },
        });
        break;
      case 'gpu-error':
        set({ trainBanner: { kind: 'notice', message: reply.message } });
        break;
    }
  };

  /**
   * The worker, started on first use with its hello (probe the device, restore a stored run). Whatever
   * starts it (the panel opening, the tour importing the demo checkpoint first), the hello goes first:
   * a worker started by an import and never greeted left the panel "starting the engine…" until a run began.
   */
  const ensure = () => {
    if (!client) {
      client = createTrainClient(onReply);
      client.send({ type: 'hello' });
    }
    return client;
  };

  /** Sends `request` to the run, or with no run, `start`'s request for the draft config if it can start (otherwise the reason, shown as a refusal). */
  const command = (request: TrainRequest, start: (config: RunConfig) => TrainRequest) => {
    const { trainRun, trainStatus, trainConfig } = get();
    if (trainStatus.phase === 'unavailable') return;
    if (trainRun) return ensure().send(request);
    const problems = configProblems(trainConfig);
    if (problems.length) set({ trainStatus: { phase: 'refused', reason: problems.join('; '), cause: 'refused' } });
    else ensure().send(start(trainConfig));
  };

  return {
    trainConfig: defaultRunConfig('tiny'),
    trainGpu: { kind: 'probing' },
    trainStatus: { phase: 'idle' },
    trainRun: null,
    trainProgress: null,
    trainHistory: createHistory(),
    trainHistoryVersion: 0,
    trainLatest: {},
    trainCheckpointStep: 0,
    trainBanner: null,
    trainLive: null,
    trainFollow: true,
    trainBatches: {},
    trainScores: null,
    trainFiles: [],

    trainConnect() {
      ensure();
    },
    setTrainConfig(patch) {
      if (get().trainRun) return; // a run's config is fixed: reset to change it
      const next = { ...get().trainConfig, ...patch };
      if (patch.preset && patch.preset !== get().trainConfig.preset) Object.assign(next, presetSizes(patch.preset), patch);
      set({ trainConfig: next, ...(get().trainStatus.phase === 'refused' ? { trainStatus: { phase: 'idle' } } : {}) });
    },
    trainPlay() {
      command({ type: 'play' }, (config) => ({ type: 'start', config }));
    },
    trainPause() {
      ensure().send({ type: 'pause' });
    },
    trainStepOnce() {
      command({ type: 'step' }, (config) => ({ type: 'step', config }));
    },
    trainReset() {
      ensure().send({ type: 'reset' });
      set({ trainBanner: null });
    },
    setTrainFollow(on) {
      if (!on) follower.cancel();
      set({ trainFollow: on });
    },
    async trainImportCheckpoint(file) {
      // Training runs GPT-2 (docs/model.md): the families' weights are refused in one line, before any is read.
      const family = await familyWeightsName(file);
      if (family) {
        const message = `${file.name}: a Llama / Qwen model (tensor ${family}): training runs GPT-2 checkpoints only; score with it in the drift panel ("Open model folder…")`;
        set({ trainBanner: { kind: 'notice', message } });
        return;
      }
      await importCheckpoint(file.name, () => file.arrayBuffer(), {});
    },
    async trainUseDemoModel() {
      await importCheckpoint(DEMO_MODEL.name, shipped(DEMO_MODEL.file), startingPointSettings(DEMO_MODEL.task));
    },
    async trainPaperClaim() {
      if (get().trainRun) return; // a run's config is fixed: reset first
      if (await importCheckpoint(WEAK_MODEL.name, shipped(WEAK_MODEL.file), startingPointSettings(PAPER_CLAIM))) get().trainPlay();
    },
    async trainExportCheckpoint(method) {
      const reply = await ensure().request<Extract<TrainReply, { type: 'checkpoint-file' }>>((job) => ({ type: 'export-checkpoint', job, method }));
      return { name: reply.name, weights: reply.weights, optimizer: reply.optimizer };
    },
    async trainContinueFrom(method, patch) {
      const reply = await ensure().request<Extract<TrainReply, { type: 'forked' }>>((job) => ({ type: 'fork-checkpoint', job, method }));
      ensure().send({ type: 'reset' });
      set({
        trainRun: null,
        trainFiles: [...new Set([...get().trainFiles, reply.name])],
        trainConfig: { ...get().trainConfig, ...patch, checkpoint: reply.name },
        trainBanner: { kind: 'notice', message: `Kept ${method}'s weights at step ${reply.step} as ${reply.name}; the next run starts from them.` },
      });
    },
    async trainInspect(method, id) {
      const reply = await ensure().request<Extract<TrainReply, { type: 'scores' }>>((job) => ({ type: 'score', job, method, id }));
      set({ trainScores: { method, id: reply.id, scores: reply.scores } });
      const rollout = await ensure().request<Extract<TrainReply, { type: 'rollout' }>>((job) => ({ type: 'rollout', job, method, id }));
      follower.cancel();
      const { view, selectedTarget, showRollout } = get();
      showRollout(rollout.rollout, { kind: 'file', name: `${id}.json` }, { target: view?.rollout.id === id ? selectedTarget : null });
    },
    dismissTrainBanner() {
      set({ trainBanner: null });
    },
  };
};
