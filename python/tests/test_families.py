"""The Llama, Qwen2 and Qwen3 modules against independent checks: a tree-packed batch gives every target the
log-probability its branch gets alone under a plain causal mask (and the positions are the batch's, not
arange), grouped-query attention equals full multi-head attention with the key/value heads repeated in the
weights, RoPE's rotate_half equals rotating each (i, i + HS/2) pair as a complex number, llama3 scaling's
frequencies worked out by hand; the folders (BF16 tied, F32 sharded, F16 with biases) read and write back
bit for bit; hf_inputs' additive 4D mask is the boolean one; and the torch modules give the log-probabilities
`mw score --ckpt MODEL-FOLDER` prints (the WGSL families)."""

from __future__ import annotations

import json
import math
import os
import subprocess

import pytest
import torch

import memorywalker as mw
from memorywalker.families import FamilyModel, family_config, load_family, rope_cos_sin, rope_inv_freq, rotate_half

from conftest import FIGURES, MW_ENTRY, NODE, ROOT

FAMILIES = ["qwen3", "llama", "qwen2"]


def logprobs(model, batch: mw.Batch, position_ids=None) -> torch.Tensor:
    with torch.no_grad():
        logits = model(batch.input_ids, batch.position_ids if position_ids is None else position_ids, mw.dense_mask(batch))
    return mw.target_logprobs(batch, logits)


def by_target(batch: mw.Batch, values: torch.Tensor) -> dict[tuple[int, int], float]:
    keys = zip(batch.rollout_index[batch.target_rows].tolist(), batch.target_physical_ids.tolist())
    return dict(zip(keys, values.tolist()))


def test_folders_read_as_written(tiny_folders):
    qwen3, llama, qwen2 = (load_family(str(tiny_folders[f]), dtype=None) for f in FAMILIES)
    assert sorted(os.listdir(tiny_folders["llama"])) == [
        "config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
    ]
    assert (qwen3.stored_dtype, llama.stored_dtype, qwen2.stored_dtype) == ("BF16", "F32", "F16")
    assert qwen3.model.embed_tokens.weight.dtype == torch.bfloat16 and qwen2.lm_head.weight.dtype == torch.float16
    names = dict(qwen3.named_parameters())
    assert "lm_head.weight" not in names and names["model.layers.1.self_attn.q_norm.weight"].shape == (16,)
    assert names["model.layers.0.self_attn.q_proj.weight"].shape == (64, 32)  # NH * head_dim 16 != C
    assert names["model.layers.0.self_attn.k_proj.weight"].shape == (32, 32)  # NKV 2 * 16
    assert "model.layers.0.self_attn.q_proj.bias" in dict(qwen2.named_parameters())
    assert "model.layers.0.self_attn.o_proj.bias" not in dict(qwen2.named_parameters())
    assert "model.layers.0.self_attn.q_proj.bias" not in dict(llama.named_parameters())
    index = json.loads((tiny_folders["llama"] / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"]) == set(dict(llama.named_parameters())) and len(set(index["weight_map"].values())) == 2
    # Loaded in float32 and written back: the stored bits, in the stored dtype.
    for family in FAMILIES:
        model = load_family(str(tiny_folders[family]))
        out = tiny_folders[family].parent / f"{family}-again"
        mw.save_family(model, str(out))
        again = load_family(str(out), dtype=None)
        assert again.stored_dtype == model.stored_dtype
        original = load_family(str(tiny_folders[family]), dtype=None)
        for (n, a), (_, b) in zip(original.named_parameters(), again.named_parameters()):
            assert a.dtype == b.dtype and torch.equal(a, b), n


@pytest.mark.parametrize("family", FAMILIES)
def test_tree_packed_logprobs_equal_each_branch_alone(tiny_folders, two_rollouts, export, family):
    """packed-4d (one forward over the trie, positions = depths) against logit-tree (every branch its own causal
    forward, positions 0, 1, ...), per target, in float64; then the same batch with arange positions differs."""
    model = load_family(str(tiny_folders[family]), dtype=torch.float64)
    worst = 0.0
    for file in ("two.jsonl", "rollouts.jsonl"):
        packed = mw.load_batch(str(export("packed-4d", file)))
        tree = mw.load_batch(str(export("logit-tree", file)))
        got, want = by_target(packed, logprobs(model, packed)), {}
        ends = tree.subtree_end.tolist()
        start = 0
        while start < tree.rows:  # each branch alone: a plain causal mask, nothing else in the forward
            end = ends[start]
            rows = torch.arange(start, end)
            causal = torch.ones(end - start, end - start, dtype=torch.bool).tril()
            with torch.no_grad():
                logits = model(tree.input_ids[rows], tree.position_ids[rows], causal)
            inside = (tree.target_rows >= start) & (tree.target_rows < end)
            lp = torch.log_softmax(logits[tree.target_rows[inside] - start], -1).gather(-1, tree.target_tokens[inside][:, None])[:, 0]
            keys = zip(tree.rollout_index[tree.target_rows[inside]].tolist(), tree.target_physical_ids[inside].tolist())
            want.update(zip(keys, lp.tolist()))
            start = end
        assert sorted(got) == sorted(want)
        worst = max(worst, max(abs(got[k] - want[k]) for k in want))
        spread = max(want.values()) - min(want.values())
        assert spread > 2, "the targets' log-probabilities differ: a real model, not a flat one"
    assert worst <= 1e-10
    arange = logprobs(model, packed, torch.arange(packed.rows))
    ignored = (arange - logprobs(model, packed)).abs().max().item()
    FIGURES[f"{family}: max |Δ logprob| tree-packed vs each branch alone (float64)"] = f"{worst:.1e}; with arange positions instead: {ignored:.2f}"
    assert ignored > 1e-2, "position_ids are honoured: the packed rows' own positions, not their row index"


def _with_config(model: FamilyModel, **changes) -> FamilyModel:
    raw = {**model.config.raw, **changes}
    return FamilyModel(family_config(raw)).to(torch.float64)


def test_grouped_query_attention_equals_multi_head_with_repeated_kv_weights(tiny_folders, two_rollouts, export):
    """Every key/value head of the 2-KV-head model copied to the query heads it serves gives a 4-head MHA model."""
    b = mw.load_batch(str(export("packed-4d", "two.jsonl")))
    for family in FAMILIES:
        gqa = load_family(str(tiny_folders[family]), dtype=torch.float64)
        c = gqa.config
        G = c.num_attention_heads // c.num_key_value_heads
        mha = _with_config(gqa, num_key_value_heads=c.num_attention_heads)
        state = {}
        for name, t in gqa.state_dict().items():
            if ".k_proj." in name or ".v_proj." in name:
                heads = t.reshape(c.num_key_value_heads, c.head_dim, *t.shape[1:])
                t = heads.repeat_interleave(G, dim=0).reshape(c.num_attention_heads * c.head_dim, *t.shape[1:])
            state[name] = t
        mha.load_state_dict(state)
        delta = (logprobs(gqa, b) - logprobs(mha, b)).abs().max().item()
        assert delta <= 1e-10, family


def test_rope_rotates_half_split_pairs_by_position_times_frequency():
    raw = {"architectures": ["LlamaForCausalLM"], "vocab_size": 8, "hidden_size": 16, "intermediate_size": 8, "num_hidden_layers": 1,
           "num_attention_heads": 2, "head_dim": 8, "rope_theta": 10000.0}
    c = family_config(raw)
    x = torch.randn(5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    pos = torch.tensor([0, 3, 1, 7, 40])
    cos, sin = rope_cos_sin(c, pos, torch.float64)
    got = x * cos + rotate_half(x) * sin
    # pair i is (x[i], x[i + 4]) as the complex number x[i] + j x[i+4], turned by pos * theta^(-2i/8)
    angle = pos[:, None].double() * 10000.0 ** (-torch.arange(4, dtype=torch.float64) * 2 / 8.0)
    z = torch.complex(x[:, :4], x[:, 4:]) * torch.polar(torch.ones(5, 4, dtype=torch.float64), angle)
    assert torch.allclose(got, torch.cat([z.real, z.imag], -1), atol=1e-12)
    # llama3 scaling, by hand: original context 64, low/high frequency factors 1/4 (wavelengths 64 and 16), factor 8.
    c3 = family_config({**raw, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                "original_max_position_embeddings": 64}})
    smooth = (64 / (2 * math.pi / 0.1) - 1) / 3  # wavelength 62.8 lies between 16 and 64: interpolated
    want = [1.0, (1 - smooth) * 0.1 / 8 + smooth * 0.1, 0.01 / 8, 0.001 / 8]  # 6.28 < 16 kept; 628, 6283 > 64 divided
    assert torch.allclose(rope_inv_freq(c3), torch.tensor(want, dtype=torch.float64), rtol=1e-12)
    linear = family_config({**raw, "rope_scaling": {"type": "linear", "factor": 4.0}})
    assert torch.allclose(rope_inv_freq(linear), torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64) / 4, rtol=1e-12)
    with pytest.raises(ValueError, match=r"config.json: rope_scaling type 'yarn' is not supported \(none, linear, llama3\)"):
        family_config({**raw, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})
    with pytest.raises(ValueError, match=r"architecture 'MistralForCausalLM' is not one of LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM"):
        family_config({**raw, "architectures": ["MistralForCausalLM"]})


def test_hf_inputs_are_the_tree_mask_in_the_4d_additive_form(tiny_folders, two_rollouts, export):
    b = mw.load_batch(str(export("packed-4d", "two.jsonl", 40)))
    model = load_family(str(tiny_folders["qwen2"]), dtype=torch.float64)
    assert b.sequences == 2
    for s in range(b.sequences):
        kw = mw.hf_inputs(b, s, dtype=torch.float64)
        seq = mw.packed_sequence(b, s)
        T = seq["input_ids"].shape[0]
        assert kw["input_ids"].shape == (1, T) and kw["attention_mask"].shape == (1, 1, T, T)
        assert torch.equal(kw["attention_mask"][0, 0] == 0, mw.dense_mask(b, sequence=s))
        assert kw["attention_mask"].min().item() == torch.finfo(torch.float64).min
        with torch.no_grad():
            additive = model(kw["input_ids"], kw["position_ids"], kw["attention_mask"])[0]
            boolean = model(seq["input_ids"], seq["position_ids"], mw.dense_mask(b, sequence=s))
        assert (additive - boolean).abs().max().item() <= 1e-12


@pytest.mark.parametrize("family", FAMILIES)
def test_torch_families_give_mw_scores_logprobs(tiny_folders, fixtures, export, family):
    """`mw score --ckpt FOLDER` (the WGSL families; a folder without tokenizer.json reads the byte rollouts its
    vocabulary of 272 names) against the torch module in float64: every method, every target, within 1e-4."""
    folder = str(tiny_folders[family])
    model = load_family(folder, dtype=torch.float64)
    worst = 0.0
    for method in ["naive-compressed", "naive-full", "logit-tree", "packed-4d"]:
        run = subprocess.run([NODE, MW_ENTRY, "score", "--ckpt", folder, str(fixtures / "rollouts.jsonl"), "--method", method, "--json"],
                             cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        want = {(r, t["id"]): t["logprob"] for r, rollout in enumerate(json.loads(run.stdout)) for t in rollout["targets"]}
        b = mw.load_batch(str(export(method, max_tokens=128)))
        got = by_target(b, logprobs(model, b))
        assert sorted(got) == sorted(want)
        worst = max(worst, max(abs(got[k] - want[k]) for k in want))
    FIGURES[f"{family}: max |Δ logprob| torch vs mw score, every method"] = f"{worst:.2e}"
    assert worst <= 1e-4
