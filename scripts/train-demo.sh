#!/usr/bin/env bash
# Trains the demo checkpoint (public/models/demo.safetensors) with the project's own commands:
# expert demonstrations of the `lookup` task (two hops, one distractor fact per observation, 20
# filler characters) under four memory editors (budget 100 tokens, so every episode is edited
# once), then SFT with exact tree replay (packed-4d) in two stages: 1,500 updates on 1,600 episodes,
# then 2,000 more on 3,200 (the first set and 1,600 fresh ones), one cosine schedule over all 3,500.
# Takes about an hour on SwiftShader (2 CPU cores).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.demo-data}
env=lookup:hops=2,distractors=1,filler=20
mkdir -p "$out" public/models

# Demonstrations: one file per editor and seed (the `none` editor has no budget).
demos() { # prefix first-seed
  local seed=$2
  for editor in none compact window stack; do
    local budget=(--budget 100)
    [ "$editor" = none ] && budget=()
    node bin/mw.js generate --policy expert --env "$env" --editor "$editor" "${budget[@]}" --n 400 --seed "$seed" --out "$out/$1-$editor.jsonl"
    seed=$((seed + 1))
  done
}
demos expert 21
demos expert2 31
cat "$out"/expert-{compact,none,stack,window}.jsonl > "$out/stage1.jsonl"
cat "$out/stage1.jsonl" "$out"/expert2-{compact,none,stack,window}.jsonl > "$out/stage2.jsonl"

node bin/mw.js train --method packed-4d --objective sft --data "$out/stage1.jsonl" \
  --config small --steps 1500 --batch 8 --lr 3e-3 --warmup 30 --seed 1 \
  --ckpt-out public/models/demo.safetensors --metrics "$out/demo-metrics-1.jsonl"
# Stage 2 resumes stage 1 (weights, AdamW state, seed, batch) with the schedule stretched to 3,500.
node bin/mw.js train --method packed-4d --objective sft --data "$out/stage2.jsonl" \
  --ckpt-in public/models/demo.safetensors --steps 2000 --lr 3e-3 --lr-total 3500 \
  --ckpt-out public/models/demo.safetensors --metrics "$out/demo-metrics-2.jsonl"
