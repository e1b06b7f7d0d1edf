#!/usr/bin/env bash
# README's first command: install dependencies, build, and run the main job on a default model.
# Model: $GGUFLOW_MODEL if set, else ../shared/data/models/stories260K.gguf if present, else
# `gguflow run` synthesizes a small random-weight model into ~/.cache/gguflow (and says so).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc 2>/dev/null || echo 2)"
exec build/bin/gguflow run --prompt "Once upon a time" -n 64 --temp 0
