#!/usr/bin/env bash
# The KV cache study of docs/LOWRANK_KV.md in one command: the spectrum of keys after and before
# RoPE and of values (tables + SVGs), then every cache method on one evaluation text (one table
# + one SVG: f32, f16, q8_0, q4_0, low rank post-/pre-RoPE at several energies, zeroed control).
#   tools/lowrank_study.sh [MODEL.gguf] [CALIB.txt] [EVAL.txt] [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
gguflow="${GGUFLOW:-$here/build/bin/gguflow}"
model="${1:-$here/../shared/data/models/stories260K.gguf}"
calib="${2:-$here/../shared/data/text/calib.txt}"
eval_text="${3:-$here/../shared/data/text/eval.txt}"
out="${4:-lowrank-study}"
mkdir -p "$out"
for keys in post-rope pre-rope; do
  "$gguflow" kv spectrum --model "$model" --text "$calib" --keys "$keys" --svg "$out/spectrum-$keys.svg"
  echo
done
"$gguflow" kv eval --model "$model" --calib-text "$calib" --text "$eval_text" \
  --sweep 0.5,0.8,0.9,0.95,0.99,0.999,1 --work-dir "$out" --svg "$out/sweep.svg"
