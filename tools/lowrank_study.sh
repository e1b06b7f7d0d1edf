#!/usr/bin/env bash
# The low-rank KV study of docs/LOWRANK_KV.md in one command: spectrum (table + SVG) and an
# energy sweep (calibrate on one text, evaluate on another; table + SVG).
#   tools/lowrank_study.sh [MODEL.gguf] [CALIB.txt] [EVAL.txt] [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
gguflow="${GGUFLOW:-$here/build/bin/gguflow}"
model="${1:-$here/../shared/data/models/stories260K.gguf}"
calib="${2:-$here/../shared/data/text/calib.txt}"
eval_text="${3:-$here/../shared/data/text/eval.txt}"
out="${4:-lowrank-study}"
mkdir -p "$out"
"$gguflow" kv spectrum --model "$model" --text "$calib" --svg "$out/spectrum.svg"
echo
"$gguflow" kv eval --model "$model" --calib-text "$calib" --text "$eval_text" \
  --sweep 0.5,0.8,0.9,0.95,0.99,1 --work-dir "$out" --svg "$out/sweep.svg"
