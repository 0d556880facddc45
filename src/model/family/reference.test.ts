import { describe, expect, it } from 'vitest';
import { randomFamilyWeights, tinyFamilyConfig } from '../../testing/familyWeights';
import { type FamilyConfig, ropeInverseFrequencies } from './config';
import { applyRopeRef, familyReferenceLogprobs, type FamilyWeights, type ModelInput } from './reference';

const causal = (n: number): number[] => Array(n).fill(n);

describe('RoPE', () => {
  it('rotates pair (d, d + HS/2) by position · invFreq[d] (rotate_half, not interleaved)', () => {
    const x = Float64Array.of(1, 0, 0, 0, 0, 1, 0, 0); // two rows, one head of 4
    applyRopeRef(x, [2, 3], [1, 0.01], 2, 1, 4);
    expect([...x.subarray(0, 4)].map((v) => +v.toFixed(12))).toEqual([Math.cos(2), 0, Math.sin(2), 0].map((v) => +v.toFixed(12)));
    expect([...x.subarray(4)].map((v) => +v.toFixed(12))).toEqual([0, Math.cos(0.03), 0, Math.sin(0.03)].map((v) => +v.toFixed(12)));
  });

  it('inverse frequencies: θ^(-2d/HS), linear divides by the factor, llama3 keeps short wavelengths and divides long ones', () => {
    const plain = ropeInverseFrequencies({ headDim: 4, ropeTheta: 10000, ropeScaling: { type: 'none' } });
    expect([...plain]).toEqual([1, 0.01]);
    const linear = ropeInverseFrequencies({ headDim: 4, ropeTheta: 10000, ropeScaling: { type: 'linear', factor: 4 } });
    expect([...linear]).toEqual([0.25, 0.0025]);
    // Llama 3.1's numbers: HS 128, θ 500000, factor 8, low 1, high 4, original 8192.
    const scaling = { type: 'llama3' as const, factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 };
    const f = ropeInverseFrequencies({ headDim: 128, ropeTheta: 500000, ropeScaling: scaling });
    const base = (d: number) => 500000 ** (-(2 * d) / 128);
    expect(f[0]).toBe(1); // wavelength 2π < 2048: kept
    expect(f[63]).toBeCloseTo(base(63) / 8, 18); // wavelength > 8192: divided by 8
    // d = 32: wavelength 2π · 500000^½ ≈ 4443 lies between 2048 and 8192: interpolated.
    const wavelen = (2 * Math.PI) / base(32);
    expect(wavelen).toBeGreaterThan(2048);
    expect(wavelen).toBeLessThan(8192);
    const smooth = (8192 / wavelen - 1) / 3;
    expect(f[32]).toBeCloseTo((1 - smooth) * (base(32) / 8) + smooth * base(32), 15);
  });
});

describe('family reference forward', () => {
  it('matches a hand computation: 1 layer, C 2, identity q/k/v/o, θ 1, silent MLP, tied head', () => {
    const eps = 1e-6;
    const config: FamilyConfig = {
      ...tinyFamilyConfig('LlamaForCausalLM'),
      vocabSize: 3,
      hiddenSize: 2,
      intermediateSize: 1,
      nLayer: 1,
      nHead: 1,
      nKvHead: 1,
      headDim: 2,
      ropeTheta: 1,
      rmsNormEps: eps,
      tieWordEmbeddings: true,
    };
    const I = [1, 0, 0, 1];
    const t = (name: string, v: number[]) => [`model.layers.0.${name}`, Float64Array.from(v)] as const;
    const weights: FamilyWeights = {
      config,
      tensors: new Map<string, ArrayLike<number>>([
        ['model.embed_tokens.weight', Float64Array.of(1, 0, 0, 1, 1, 1)],
        t('input_layernorm.weight', [1, 1]),
        t('self_attn.q_proj.weight', I),
        t('self_attn.k_proj.weight', I),
        t('self_attn.v_proj.weight', I),
        t('self_attn.o_proj.weight', I),
        t('post_attention_layernorm.weight', [1, 1]),
        t('mlp.gate_proj.weight', [0, 0]), // silu(0) = 0: the MLP adds nothing
        t('mlp.up_proj.weight', [5, 7]),
        t('mlp.down_proj.weight', [3, 2]),
        ['model.norm.weight', Float64Array.of(1, 1)],
      ]),
    };
    const rms = (v: number[]) => v.map((x) => x / Math.sqrt((v[0] * v[0] + v[1] * v[1]) / 2 + eps));
    const logSoftmax = (y: number[], tok: number) => {
      const logits = [y[0], y[1], y[0] + y[1]]; // E · y, E rows (1,0), (0,1), (1,1)
      return logits[tok] - Math.log(logits.reduce((s, l) => s + Math.exp(l), 0));
    };
    const r = 1 / Math.sqrt(0.5 + eps);
    // Row 0 sees itself only: x0 = e0 + v0 = (1 + r, 0).
    const y0 = rms([1 + r, 0]);
    // Row 1 at position 1: q1 = k1 = (0, r) turned by 1 radian = (−r sin 1, r cos 1); k0 = (r, 0).
    const s0 = (-r * r * Math.sin(1)) / Math.SQRT2;
    const s1 = (r * r) / Math.SQRT2;
    const p0 = Math.exp(s0) / (Math.exp(s0) + Math.exp(s1));
    const y1 = rms([p0 * r, 1 + (1 - p0) * r]);
    const got = familyReferenceLogprobs(weights, { tokens: [0, 1], positions: [0, 1], end: causal(2) }, [
      { predictor: 0, token: 2 },
      { predictor: 1, token: 0 },
      { predictor: 1, token: 2 },
    ]);
    expect(got[0]).toBeCloseTo(logSoftmax(y0, 2), 12);
    expect(got[1]).toBeCloseTo(logSoftmax(y1, 0), 12);
    expect(got[2]).toBeCloseTo(logSoftmax(y1, 2), 12);
    expect(got[0]).toBeCloseTo(-0.80785, 4); // ≈ √2 − log(2e^√2 + 1): logits (√2, 0, √2)
  });

  const families: FamilyConfig[] = [
    tinyFamilyConfig('Qwen3ForCausalLM'),
    tinyFamilyConfig('Qwen2ForCausalLM', { ropeScaling: { type: 'linear', factor: 2 } }),
    tinyFamilyConfig('LlamaForCausalLM', {
      ropeTheta: 500000,
      ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 32 },
    }),
  ];

  for (const config of families) {
    describe(config.architecture, () => {
      const weights = randomFamilyWeights(config, 7);
      const branchA = [5, 17, 42, 99, 3];
      const branchB = [5, 17, 42, 250, 61];

      it('a tree-packed batch gives each branch the log-probs it has alone, branches counting positions from the root', () => {
        // Shared prefix 5 17 42 (indices 0..2), then branch A's 99 3 (3..4) and branch B's 250 61 (5..6).
        const packed: ModelInput = { tokens: [5, 17, 42, 99, 3, 250, 61], positions: [0, 1, 2, 3, 4, 3, 4], end: [7, 7, 7, 5, 5, 7, 7] };
        const targets = [
          { predictor: 2, token: 99 },
          { predictor: 3, token: 3 },
          { predictor: 4, token: 11 },
          { predictor: 2, token: 250 },
          { predictor: 5, token: 61 },
          { predictor: 6, token: 11 },
        ];
        const got = familyReferenceLogprobs(weights, packed, targets);
        const alone = (tokens: number[]) =>
          familyReferenceLogprobs(weights, { tokens, positions: [0, 1, 2, 3, 4], end: causal(5) }, [
            { predictor: 2, token: tokens[3] },
            { predictor: 3, token: tokens[4] },
            { predictor: 4, token: 11 },
          ]);
        const a = alone(branchA);
        const b = alone(branchB);
        for (let j = 0; j < 3; j++) {
          expect(got[j]).toBeCloseTo(a[j], 10);
          expect(got[3 + j]).toBeCloseTo(b[j], 10);
        }
        // The branches really differ (the mask is what keeps them apart).
        expect(Math.abs(a[2] - b[2])).toBeGreaterThan(1e-3);
        // Without the mask (every index sees every earlier one) branch B's rows read branch A's tokens.
        const unmasked = familyReferenceLogprobs(weights, { ...packed, end: causal(7) }, targets);
        expect(Math.abs(unmasked[5] - b[2])).toBeGreaterThan(1e-3);
      });

      it('RoPE is relative: shifting every position by 9 leaves the log-probs unchanged, a lone query token does not', () => {
        const targets = [...branchA.map((token, i) => ({ predictor: Math.max(0, i - 1), token })), { predictor: 4, token: 11 }];
        const base = familyReferenceLogprobs(weights, { tokens: branchA, positions: [0, 1, 2, 3, 4], end: causal(5) }, targets);
        const shifted = familyReferenceLogprobs(weights, { tokens: branchA, positions: [9, 10, 11, 12, 13], end: causal(5) }, targets);
        for (let j = 0; j < targets.length; j++) expect(shifted[j]).toBeCloseTo(base[j], 10);
        const skewed = familyReferenceLogprobs(weights, { tokens: branchA, positions: [0, 1, 2, 3, 9], end: causal(5) }, targets);
        expect(Math.abs(skewed[5] - base[5])).toBeGreaterThan(1e-4);
        expect(skewed[3]).toBeCloseTo(base[3], 12); // rows before the moved one do not see it
      });
    });
  }

  it('grouped-query attention: 2 kv heads serving 4 query heads equal 4 kv heads that repeat them (transformers repeat_kv)', () => {
    const gqa = randomFamilyWeights(tinyFamilyConfig('Qwen2ForCausalLM'), 3);
    const config = { ...gqa.config, nKvHead: 4 };
    const tensors = new Map(gqa.tensors);
    const HS = config.headDim;
    for (let l = 0; l < config.nLayer; l++) {
      for (const p of ['k_proj', 'v_proj']) {
        for (const [suffix, row] of [
          ['weight', config.hiddenSize],
          ['bias', 1],
        ] as const) {
          const name = `model.layers.${l}.self_attn.${p}.${suffix}`;
          const src = gqa.tensors.get(name)!;
          const out = new Float32Array(4 * HS * row);
          for (let h = 0; h < 4; h++) out.set(src.subarray(Math.floor(h / 2) * HS * row, (Math.floor(h / 2) + 1) * HS * row), h * HS * row);
          tensors.set(name, out);
        }
      }
    }
    const input = { tokens: [1, 2, 3, 4], positions: [0, 1, 2, 3], end: causal(4) };
    const targets = [
      { predictor: 3, token: 8 },
      { predictor: 2, token: 4 },
    ];
    const a = familyReferenceLogprobs(gqa, input, targets);
    const b = familyReferenceLogprobs({ config, tensors }, input, targets);
    expect(b[0]).toBeCloseTo(a[0], 10);
    expect(b[1]).toBeCloseTo(a[1], 10);
  });

  it('Qwen3 normalizes q and k per head: scaling q_proj and k_proj by 4 changes nothing; without the norms it does', () => {
    const w = randomFamilyWeights(tinyFamilyConfig('Qwen3ForCausalLM', { rmsNormEps: 1e-12 }), 11); // eps ≈ 0: RMSNorm exactly scale-free
    const scaled = new Map(w.tensors);
    for (const name of w.tensors.keys())
      if (/(q|k)_proj\.weight$/.test(name))
        scaled.set(
          name,
          w.tensors.get(name)!.map((v) => 4 * v),
        );
    const input = { tokens: [4, 40, 44, 140], positions: [0, 1, 2, 3], end: causal(4) };
    const targets = [{ predictor: 3, token: 2 }];
    expect(familyReferenceLogprobs({ config: w.config, tensors: scaled }, input, targets)[0]).toBeCloseTo(familyReferenceLogprobs(w, input, targets)[0], 10);
    const llama = { ...w.config, architecture: 'LlamaForCausalLM' as const, qkNorm: false };
    const a = familyReferenceLogprobs({ config: llama, tensors: w.tensors }, input, targets)[0];
    const b = familyReferenceLogprobs({ config: llama, tensors: scaled }, input, targets)[0];
    expect(Math.abs(a - b)).toBeGreaterThan(1e-3);
  });

  it('Qwen2 with zero q/k/v biases scores as the same weights without biases; non-zero biases count', () => {
    const w = randomFamilyWeights(tinyFamilyConfig('Qwen2ForCausalLM'), 13);
    const zero = new Map(w.tensors);
    for (const name of w.tensors.keys()) if (name.endsWith('_proj.bias')) zero.set(name, new Float32Array(w.tensors.get(name)!.length));
    const input = { tokens: [7, 70, 77], positions: [0, 1, 2], end: causal(3) };
    const targets = [{ predictor: 2, token: 9 }];
    const noBias = familyReferenceLogprobs({ config: { ...w.config, qkvBias: false }, tensors: w.tensors }, input, targets)[0];
    expect(familyReferenceLogprobs({ config: w.config, tensors: zero }, input, targets)[0]).toBeCloseTo(noBias, 12);
    expect(Math.abs(familyReferenceLogprobs(w, input, targets)[0] - noBias)).toBeGreaterThan(1e-3);
  });

  it('Llama with attention_bias: the o_proj bias is added after the attention', () => {
    const w = randomFamilyWeights(tinyFamilyConfig('LlamaForCausalLM', { qkvBias: true, oBias: true }), 17);
    const zero = new Map(w.tensors);
    for (const name of w.tensors.keys()) if (name.endsWith('o_proj.bias')) zero.set(name, new Float32Array(w.config.hiddenSize));
    const input = { tokens: [3, 30, 33], positions: [0, 1, 2], end: causal(3) };
    const targets = [{ predictor: 2, token: 5 }];
    const withoutO = familyReferenceLogprobs({ config: { ...w.config, oBias: false }, tensors: w.tensors }, input, targets)[0];
    expect(familyReferenceLogprobs({ config: w.config, tensors: zero }, input, targets)[0]).toBeCloseTo(withoutO, 12);
    expect(Math.abs(familyReferenceLogprobs(w, input, targets)[0] - withoutO)).toBeGreaterThan(1e-3);
  });

  it('an untied head equal to the embedding scores as the tied model', () => {
    const tied = randomFamilyWeights(tinyFamilyConfig('Qwen3ForCausalLM'), 5);
    const tensors = new Map(tied.tensors);
    tensors.set('lm_head.weight', tied.tensors.get('model.embed_tokens.weight')!);
    const input = { tokens: [9, 8, 7], positions: [0, 1, 2], end: causal(3) };
    const targets = [{ predictor: 2, token: 123 }];
    const a = familyReferenceLogprobs(tied, input, targets);
    const b = familyReferenceLogprobs({ config: { ...tied.config, tieWordEmbeddings: false }, tensors }, input, targets);
    expect(b[0]).toBeCloseTo(a[0], 12);
    expect(() => familyReferenceLogprobs({ config: { ...tied.config, tieWordEmbeddings: false }, tensors: tied.tensors }, input, targets)).toThrow(
      'family reference: missing lm_head.weight',
    );
  });

  it('refuses a position past max_position_embeddings', () => {
    const w = randomFamilyWeights(tinyFamilyConfig('Qwen3ForCausalLM'), 1);
    expect(() => familyReferenceLogprobs(w, { tokens: [1], positions: [64], end: [1] }, [])).toThrow('position 64 at index 0 outside [0, 64)');
  });
});
