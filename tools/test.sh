#!/usr/bin/env bash
# The whole test suite: configure, build, run every test with ctest and print its summary.
# Usage: tools/test.sh [extra cmake arguments], e.g. -DGGUFLOW_SANITIZE="address;undefined".
# BUILD_DIR (default build) chooses the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$jobs"
cd "$build_dir"
ctest --output-on-failure -j "$jobs" --timeout 900
