// Child process of checkpoint-kill.test.ts: saves checkpoint pairs of the default config to PATH in a
// loop until it is killed. Step s writes weights whose ln_f.bias[0] is s and optimizer state at step
// s, so a reader can tell which save each file came from. Prints "saved" once after its first save.

import { saveCheckpointPair, type OptimizerState } from './checkpoint';
import { nodeSha256, writeCheckpointPair } from './checkpoint-file';
import { presetConfig } from './config';
import { initWeights, parameterShapes } from './params';

const [path, from] = process.argv.slice(2);
const config = presetConfig('default');
const weights = initWeights(config, 0);
const state: OptimizerState = { step: 0, m: new Map(), v: new Map() };
for (const { name, shape } of parameterShapes(config)) {
  const n = shape.reduce((a, b) => a * b, 1);
  state.m.set(name, new Float32Array(n).fill(0.01));
  state.v.set(name, new Float32Array(n).fill(1e-4));
}
for (let step = Number(from); ; step++) {
  weights.tensors.get('ln_f.bias')![0] = step;
  state.step = step;
  writeCheckpointPair(path, saveCheckpointPair(weights, state, {}, nodeSha256));
  if (step === Number(from)) process.stdout.write('saved\n');
}
