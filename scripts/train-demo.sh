#!/usr/bin/env bash
# Trains the demo checkpoint (public/models/demo.safetensors) with the project's own commands, on
# expert demonstrations under four memory editors (none, compact, window, stack; budget 100 tokens).
#
#  1-2. `lookup` (two hops, one distractor fact, 20 filler characters): SFT with exact tree replay
#       (packed-4d), 1,500 updates on 1,600 episodes then 2,000 more on 3,200, one cosine schedule.
#       The model learns the framing: prompts, actions, observations, summaries, answers.
#  3.   `collect` (three pages, no decoys, 20 filler characters) with two-digit page numbers:
#       800 packed-4d updates on 1,600 episodes (fresh optimizer).
#  4.   The demo task, `collect` with single-digit pages: 800 packed-4d updates on 3,200 episodes.
#  5-7. The flattened tapes as well as the live views, as a pretrained model has read transcripts:
#       short alternating runs of naive-full (the physical tape) and packed-4d (the live views) SFT,
#       150 + 150 updates then 200 + 100 on the same 3,200 episodes at a constant 5e-4, then 100 + 50
#       on 3,200 fresh ones at 2.5e-4.
#
# About 1.6 hours on SwiftShader (2 CPU cores).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.demo-data}
mkdir -p "$out" public/models
mw() { node bin/mw.js "$@"; }

# Demonstrations: one file per editor, consecutive seeds (the `none` editor has no budget).
demos() { # file-prefix env episodes-per-editor first-seed
  local seed=$4
  for editor in none compact window stack; do
    local budget=(--budget 100)
    [ "$editor" = none ] && budget=()
    mw generate --policy expert --env "$2" --editor "$editor" "${budget[@]}" --n "$3" --seed "$seed" --out "$out/$1-$editor.jsonl"
    seed=$((seed + 1))
  done
}

# Stages 1-2: lookup.
lookup=lookup:hops=2,distractors=1,filler=20
demos expert "$lookup" 400 21
demos expert2 "$lookup" 400 31
cat "$out"/expert-{compact,none,stack,window}.jsonl > "$out/stage1.jsonl"
cat "$out/stage1.jsonl" "$out"/expert2-{compact,none,stack,window}.jsonl > "$out/stage2.jsonl"
mw train --method packed-4d --objective sft --data "$out/stage1.jsonl" \
  --config small --steps 1500 --batch 8 --lr 3e-3 --warmup 30 --seed 1 \
  --ckpt-out "$out/lookup.safetensors" --metrics "$out/metrics-1.jsonl"
# Stage 2 resumes stage 1 (weights, AdamW state, seed, batch) with the schedule stretched to 3,500.
mw train --method packed-4d --objective sft --data "$out/stage2.jsonl" \
  --ckpt-in "$out/lookup.safetensors" --steps 2000 --lr 3e-3 --lr-total 3500 \
  --ckpt-out "$out/lookup.safetensors" --metrics "$out/metrics-2.jsonl"

# Stage 3: collect with two-digit pages, from the lookup weights (a fresh optimizer: no state beside them).
demos collect20 collect:pages=3,decoys=0,filler=20,pool=20 400 41
cat "$out"/collect20-{none,compact,window,stack}.jsonl > "$out/collect20.jsonl"
cp "$out/lookup.safetensors" "$out/collect20.safetensors"
mw train --method packed-4d --objective sft --data "$out/collect20.jsonl" --ckpt-in "$out/collect20.safetensors" \
  --steps 400 --batch 8 --lr 3e-3 --warmup 20 --lr-total 1200 --seed 1 \
  --ckpt-out "$out/collect20.safetensors" --metrics "$out/metrics-3.jsonl"
mw train --method packed-4d --objective sft --data "$out/collect20.jsonl" --ckpt-in "$out/collect20.safetensors" \
  --steps 400 --lr 3e-3 --lr-total 1200 --ckpt-out "$out/collect20.safetensors" --metrics "$out/metrics-3.jsonl"

# Stage 4: the demo task (collect, single-digit pages).
demos demo collect:pages=3,decoys=0,filler=20,pool=9 800 51
cat "$out"/demo-{none,compact,window,stack}.jsonl > "$out/demo.jsonl"
cp "$out/collect20.safetensors" "$out/demo.safetensors"
mw train --method packed-4d --objective sft --data "$out/demo.jsonl" --ckpt-in "$out/demo.safetensors" \
  --steps 800 --batch 8 --lr 2e-3 --warmup 20 --seed 2 \
  --ckpt-out "$out/demo.safetensors" --metrics "$out/metrics-4.jsonl"

# Stages 5-7: tapes and live views, alternating. Each stage starts a fresh optimizer.
alternate() { # data lr rounds naive-full-updates packed-4d-updates naive-full-seed0 packed-4d-seed0
  rm -f "$out/demo.optim.safetensors"
  for i in $(seq 1 "$3"); do
    for pass in "naive-full $4 $(($6 + i))" "packed-4d $5 $(($7 + i))"; do
      read -r method steps seed <<< "$pass"
      mw train --method "$method" --objective sft --data "$1" --ckpt-in "$out/demo.safetensors" \
        --steps "$steps" --batch 8 --lr "$2" --warmup 0 --lr-total 100000 --seed "$seed" \
        --ckpt-out "$out/demo.safetensors" --metrics "$out/metrics-alternate.jsonl"
    done
  done
}
alternate "$out/demo.jsonl" 5e-4 15 10 10 100 100
alternate "$out/demo.jsonl" 5e-4 10 20 10 200 300
demos fresh collect:pages=3,decoys=0,filler=20,pool=9 800 71
cat "$out"/fresh-{none,compact,window,stack}.jsonl > "$out/fresh.jsonl"
alternate "$out/fresh.jsonl" 2.5e-4 5 20 10 200 300

cp "$out/demo.safetensors" public/models/demo.safetensors
