// Tiny random model folders in each family's published layout, written as real files by tests: Qwen3
// bf16 with a tied head and q/k norms, Llama f32 untied in 2 shards with an index, Qwen2 f16 with q/k/v
// biases. Each has a config.json, generation_config.json, tokenizer_config.json with a chat template
// (our own ChatML-style and Llama-3-style templates, tool calls included) and a small byte-level BPE
// tokenizer.json of the `tokenizers` JSON schema. The stored (rounded) values come back for the reference.

import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type FamilyConfig, familyParameters, parseFamilyConfig } from '../model/family/config';
import { createRng } from '../util/prng';
import { safetensorsHeader, type TensorSpec } from '../util/safetensors';

export type FamilyFolderKind = 'qwen3' | 'llama' | 'qwen2';

// ---------------------------------------------------------------------------------------------
// The tokenizer: GPT-2's byte-to-character table (what the ByteLevel pre-tokenizer and decoder use),
// 256 byte tokens, a few merges, then the added tokens.

function byteToChar(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + extra++);
  return out;
}

/** Merges in rank order; every merged token becomes a vocabulary entry (ids 256..). */
const MERGES: readonly [string, string][] = [
  ['h', 'e'],
  ['l', 'l'],
  ['he', 'll'],
  ['hell', 'o'],
  ['Ġ', 'w'],
  ['o', 'r'],
  ['Ġw', 'or'],
  ['l', 'd'],
  ['Ġwor', 'ld'],
  ['Ġ', 't'],
  ['Ġt', 'he'],
  ['i', 'n'],
  ['e', 'r'],
  ['u', 's'],
  ['us', 'er'],
  ['a', 's'],
  ['as', 's'],
  ['i', 's'],
  ['ass', 'is'],
  ['t', 'a'],
  ['n', 't'],
  ['assis', 'ta'],
  ['assista', 'nt'],
  ['Ġ', 'f'],
  ['Ġf', 'i'],
  ['l', 'e'],
  ['Ġfi', 'le'],
];

export interface AddedTokenSpec {
  content: string;
  special: boolean;
}

const CHATML_ADDED: readonly AddedTokenSpec[] = [
  { content: '<|endoftext|>', special: true },
  { content: '<|im_start|>', special: true },
  { content: '<|im_end|>', special: true },
  { content: '<tool_call>', special: false },
  { content: '</tool_call>', special: false },
  { content: '<tool_response>', special: false },
  { content: '</tool_response>', special: false },
];

const LLAMA_ADDED: readonly AddedTokenSpec[] = [
  { content: '<|begin_of_text|>', special: true },
  { content: '<|end_of_text|>', special: true },
  { content: '<|start_header_id|>', special: true },
  { content: '<|end_header_id|>', special: true },
  { content: '<|eot_id|>', special: true },
  { content: '<|python_tag|>', special: true },
];

/** A byte-level BPE tokenizer.json: vocabulary of 256 bytes, MERGES, then `added` (ids in that order). */
export function tinyTokenizerJson(added: readonly AddedTokenSpec[]): { json: Record<string, unknown>; ids: Map<string, number> } {
  const chars = byteToChar();
  const ids = new Map<string, number>();
  chars.forEach((c, b) => {
    ids.set(c, b);
  });
  for (const [a, b] of MERGES) ids.set(a + b, ids.size);
  const vocab = Object.fromEntries(ids);
  const addedTokens = added.map(({ content, special }) => {
    const id = ids.size;
    ids.set(content, id);
    return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special };
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: ' ?\\p{L}+| ?\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+' },
          behavior: 'Isolated',
          invert: false,
        },
        byteLevel,
      ],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: MERGES.map(([a, b]) => [a, b]),
    },
  };
  return { json, ids };
}

// ---------------------------------------------------------------------------------------------
// Chat templates, our own, in the two styles the families publish: ChatML (Qwen) and header ids (Llama 3).

const ARGS = '{% if call.arguments is string %}{{ call.arguments }}{% else %}{{ call.arguments | tojson }}{% endif %}';
/** A line break right after a tag, where the template engine's trim_blocks would eat a literal one. */
const NL = "{{ '\\n' }}";

/**
 * ChatML: <|im_start|>role\n…<|im_end|>\n; tools listed in the system turn, calls in <tool_call>,
 * consecutive tool results in one user turn of <tool_response> blocks. Whitespace is explicit (no `-`).
 */
export const CHATML_TEMPLATE = [
  '{% if tools %}<|im_start|>system\n',
  "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}",
  'You can use these tools, each given as a JSON schema:',
  `{% for tool in tools %}${NL}{{ tool | tojson }}{% endfor %}${NL}`,
  'To use one, answer with <tool_call>\n{"name": NAME, "arguments": ARGS}\n</tool_call><|im_end|>\n',
  "{% elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n",
  '{% endif %}',
  '{% for message in messages %}',
  "{% if message.role == 'system' and loop.first %}",
  "{% elif message.role == 'user' or message.role == 'system' %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n",
  "{% elif message.role == 'assistant' %}<|im_start|>assistant\n",
  '{% if message.content %}{{ message.content }}{% endif %}',
  '{% if message.tool_calls %}{% for tc in message.tool_calls %}',
  '{% if tc.function %}{% set call = tc.function %}{% else %}{% set call = tc %}{% endif %}',
  `{% if message.content or not loop.first %}${NL}{% endif %}`,
  `<tool_call>\n{"name": "{{ call.name }}", "arguments": ${ARGS}}\n</tool_call>`,
  `{% endfor %}{% endif %}<|im_end|>${NL}`,
  "{% elif message.role == 'tool' %}",
  "{% if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}",
  `${NL}<tool_response>\n{{ message.content }}\n</tool_response>`,
  `{% if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>${NL}{% endif %}`,
  '{% endif %}',
  '{% endfor %}',
  `{% if add_generation_prompt %}<|im_start|>assistant${NL}{% endif %}`,
].join('');

/** Llama 3 style: bos, then <|start_header_id|>role<|end_header_id|>\n\n…<|eot_id|>; tool results as role ipython. */
export const LLAMA_TEMPLATE = [
  '{{ bos_token }}',
  `{% if tools %}<|start_header_id|>system<|end_header_id|>${NL}${NL}Tools (JSON schemas):`,
  `{% for tool in tools %}${NL}{{ tool | tojson }}{% endfor %}<|eot_id|>`,
  '{% endif %}',
  '{% for message in messages %}',
  `{% if message.role == 'tool' %}<|start_header_id|>ipython<|end_header_id|>${NL}${NL}{{ message.content }}<|eot_id|>`,
  `{% elif message.role == 'assistant' and message.tool_calls %}<|start_header_id|>assistant<|end_header_id|>${NL}${NL}`,
  `{% if message.content %}{{ message.content }}${NL}{% endif %}`,
  '{% for tc in message.tool_calls %}{% if tc.function %}{% set call = tc.function %}{% else %}{% set call = tc %}{% endif %}',
  `<|python_tag|>{"name": "{{ call.name }}", "parameters": ${ARGS}}{% endfor %}<|eot_id|>`,
  `{% else %}<|start_header_id|>{{ message.role }}<|end_header_id|>${NL}${NL}{{ message.content }}<|eot_id|>`,
  '{% endif %}',
  '{% endfor %}',
  `{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>${NL}${NL}{% endif %}`,
].join('');

// ---------------------------------------------------------------------------------------------
// config.json per family, as transformers writes it (tiny sizes).

function configJson(kind: FamilyFolderKind, ids: Map<string, number>): Record<string, unknown> {
  const common = {
    attention_dropout: 0.0,
    hidden_act: 'silu',
    hidden_size: 16,
    initializer_range: 0.02,
    intermediate_size: 24,
    max_position_embeddings: 4096,
    num_attention_heads: 4,
    num_hidden_layers: 2,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    transformers_version: '4.51.3',
    use_cache: true,
    vocab_size: 320,
  };
  if (kind === 'qwen3') {
    return {
      architectures: ['Qwen3ForCausalLM'],
      ...common,
      attention_bias: false,
      bos_token_id: ids.get('<|endoftext|>'),
      eos_token_id: ids.get('<|im_end|>'),
      head_dim: 8,
      max_window_layers: 2,
      model_type: 'qwen3',
      rope_scaling: null,
      rope_theta: 1000000,
      sliding_window: null,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      use_sliding_window: false,
    };
  }
  if (kind === 'qwen2') {
    return {
      architectures: ['Qwen2ForCausalLM'],
      ...common,
      bos_token_id: ids.get('<|endoftext|>'),
      eos_token_id: ids.get('<|im_end|>'),
      max_window_layers: 2,
      model_type: 'qwen2',
      rope_scaling: { type: 'linear', factor: 2.0 },
      rope_theta: 1000000.0,
      sliding_window: 64,
      tie_word_embeddings: false,
      torch_dtype: 'float16',
      use_sliding_window: false,
    };
  }
  return {
    architectures: ['LlamaForCausalLM'],
    ...common,
    attention_bias: false,
    bos_token_id: ids.get('<|begin_of_text|>'),
    eos_token_id: [ids.get('<|end_of_text|>'), ids.get('<|eot_id|>')],
    mlp_bias: false,
    model_type: 'llama',
    pretraining_tp: 1,
    rope_scaling: { factor: 8.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 32, rope_type: 'llama3' },
    rope_theta: 500000.0,
    tie_word_embeddings: false,
    torch_dtype: 'float32',
  };
}

// ---------------------------------------------------------------------------------------------
// Weights: float32 → bf16 (round to nearest even) or f16, and the value each stores.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

function toBf16(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

function toF16(x: number): number {
  const sign = x < 0 ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a < 2 ** -24 / 2) return sign;
  if (a < 2 ** -14) return sign | Math.round(a / 2 ** -24); // subnormal
  let e = Math.floor(Math.log2(a));
  let m = Math.round((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e++;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

function fromF16(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  return e === 0 ? sign * m * 2 ** -24 : sign * (1 + m / 1024) * 2 ** (e - 15);
}

type Dtype = 'BF16' | 'F16' | 'F32';

/** The stored bytes of `values` and the float32 values they hold. */
function encode(values: Float32Array, dtype: Dtype): { bytes: Uint8Array; stored: Float32Array } {
  if (dtype === 'F32') return { bytes: new Uint8Array(values.buffer.slice(0)), stored: values };
  const halves = new Uint16Array(values.length);
  const stored = new Float32Array(values.length);
  const bits = new Uint32Array(stored.buffer);
  for (let i = 0; i < values.length; i++) {
    halves[i] = dtype === 'BF16' ? toBf16(values[i]) : toF16(values[i]);
    if (dtype === 'BF16') bits[i] = halves[i] << 16;
    else stored[i] = fromF16(halves[i]);
  }
  return { bytes: new Uint8Array(halves.buffer), stored };
}

function safetensorsFile(tensors: readonly { spec: TensorSpec; bytes: Uint8Array }[]): Uint8Array {
  const head = safetensorsHeader(
    tensors.map((t) => t.spec),
    { format: 'pt' },
  );
  const out = new Uint8Array(head.length + tensors.reduce((n, t) => n + t.bytes.length, 0));
  out.set(head);
  let at = head.length;
  for (const { bytes } of tensors) {
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

export interface FamilyFolder {
  dir: string;
  config: FamilyConfig;
  /** Every parameter as the float32 values stored in the folder (after bf16 / f16 rounding). */
  tensors: Map<string, Float32Array>;
  /** Token ids of the tokenizer's entries by their content (`hello`, `Ġworld`, `<|im_start|>`). */
  ids: Map<string, number>;
  chatTemplate: string;
}

export const FOLDER_DTYPE: Readonly<Record<FamilyFolderKind, Dtype>> = { qwen3: 'BF16', llama: 'F32', qwen2: 'F16' };

/**
 * Writes a tiny random model folder of `kind` under `dir` (created) and returns what it holds. Weights:
 * norm weights near 1, the rest N(0, 0.3²), seeded.
 */
export function writeFamilyFolder(dir: string, kind: FamilyFolderKind, seed = 1): FamilyFolder {
  mkdirSync(dir, { recursive: true });
  const llama = kind === 'llama';
  const { json: tokenizer, ids } = tinyTokenizerJson(llama ? LLAMA_ADDED : CHATML_ADDED);
  const configJsonValue = configJson(kind, ids);
  const config = parseFamilyConfig(configJsonValue, basename(dir));
  const chatTemplate = llama ? LLAMA_TEMPLATE : CHATML_TEMPLATE;
  const write = (file: string, value: unknown) => writeFileSync(join(dir, file), `${JSON.stringify(value, null, 2)}\n`);
  write('config.json', configJsonValue);
  write('tokenizer.json', tokenizer);
  write(
    'generation_config.json',
    llama
      ? {
          bos_token_id: ids.get('<|begin_of_text|>'),
          eos_token_id: [ids.get('<|end_of_text|>'), ids.get('<|eot_id|>')],
          do_sample: true,
          temperature: 0.6,
          top_p: 0.9,
          transformers_version: '4.51.3',
        }
      : {
          bos_token_id: ids.get('<|endoftext|>'),
          eos_token_id: [ids.get('<|im_end|>'), ids.get('<|endoftext|>')],
          do_sample: true,
          temperature: 0.7,
          top_k: 20,
          top_p: 0.8,
          transformers_version: '4.51.3',
        },
  );
  const added = tokenizer.added_tokens as { id: number }[];
  write('tokenizer_config.json', {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(added.map(({ id, ...rest }) => [String(id), rest])),
    bos_token: llama ? '<|begin_of_text|>' : null,
    chat_template: chatTemplate,
    clean_up_tokenization_spaces: false,
    eos_token: llama ? '<|eot_id|>' : '<|im_end|>',
    errors: 'replace',
    model_max_length: 4096,
    pad_token: llama ? null : '<|endoftext|>',
    tokenizer_class: llama ? 'PreTrainedTokenizerFast' : 'Qwen2Tokenizer',
    unk_token: null,
  });

  const rng = createRng(seed);
  const dtype = FOLDER_DTYPE[kind];
  const tensors = new Map<string, Float32Array>();
  const encoded: { spec: TensorSpec; bytes: Uint8Array }[] = [];
  for (const { name, shape } of familyParameters(config)) {
    const values = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const norm = /norm\.weight$/.test(name);
    for (let i = 0; i < values.length; i++) values[i] = norm ? 1 + 0.2 * rng.normal() : 0.3 * rng.normal();
    const { bytes, stored } = encode(values, dtype);
    tensors.set(name, stored);
    encoded.push({ spec: { name, dtype, shape }, bytes });
  }
  // As published: sorted by name within a file (safetensors writers sort keys).
  encoded.sort((a, b) => (a.spec.name < b.spec.name ? -1 : 1));
  if (llama) {
    const half = Math.ceil(encoded.length / 2);
    const shards = [encoded.slice(0, half), encoded.slice(half)];
    const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    const weightMap: Record<string, string> = {};
    let totalSize = 0;
    shards.forEach((shard, s) => {
      writeFileSync(join(dir, names[s]), safetensorsFile(shard));
      for (const t of shard) {
        weightMap[t.spec.name] = names[s];
        totalSize += t.bytes.length;
      }
    });
    write('model.safetensors.index.json', { metadata: { total_size: totalSize }, weight_map: weightMap });
  } else {
    writeFileSync(join(dir, 'model.safetensors'), safetensorsFile(encoded));
  }
  return { dir, config, tensors, ids, chatTemplate };
}
