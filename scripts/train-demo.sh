#!/usr/bin/env bash
# Trains the demo checkpoint (public/models/demo.safetensors) with the project's own commands:
# expert demonstrations of the `lookup` task under four memory editors, then an SFT warm start
# with exact tree replay (packed-4d). Takes ~30 minutes on SwiftShader (2 CPU cores).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.demo-data}
mkdir -p "$out" public/models
seed=11
for editor in none compact window stack; do
  node bin/mw.js generate --policy expert --env lookup --editor "$editor" --n 150 --seed "$seed" --out "$out/expert-$editor.jsonl"
  seed=$((seed + 1))
done
cat "$out"/expert-{none,compact,window,stack}.jsonl > "$out/expert.jsonl"
node bin/mw.js train --method packed-4d --objective sft --data "$out/expert.jsonl" \
  --config small --steps 500 --batch 4 --lr 2e-3 --warmup 20 --seed 1 \
  --ckpt-out public/models/demo.safetensors --metrics "$out/demo-metrics.jsonl"
# A second stage from the first one's state: the schedule restarts at a lower peak.
node bin/mw.js train --method packed-4d --objective sft --data "$out/expert.jsonl" \
  --ckpt-in public/models/demo.safetensors --steps 400 --lr 1e-3 --warmup 10 --lr-total 900 \
  --ckpt-out public/models/demo.safetensors --metrics "$out/demo-metrics-2.jsonl"
