#!/usr/bin/env bash
# Installs the Debian 12 packages gguflow builds and tests with (only those missing).
set -euo pipefail
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
packages=(build-essential cmake ninja-build ccache libtbb-dev libyaml-cpp-dev libhwy-dev
          libboost-dev libboost-filesystem-dev libgtest-dev libbenchmark-dev graphviz
          libcli11-dev libcpp-httplib-dev nlohmann-json3-dev pkg-config
          clang libfuzzer-14-dev libclang-rt-14-dev  # these three: tools/fuzz.sh
          haproxy                                    # tests/deploy, docs/DEPLOY.md
          python3-dev pybind11-dev python3-numpy     # python/ (GGUFLOW_PYTHON)
          python3-distributed)                       # python/gguflow/dask.py
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# The server tests drive `gguflow serve` with the official openai npm client (tests/server):
# Node.js and npm from Debian when the machine has none, then the locked package.
if ! command -v npm >/dev/null 2>&1; then
  echo "installing: nodejs npm"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm
fi
# Only that test needs the package: without the npm registry (an offline machine) it reports
# SKIPPED and everything else goes on, except in CI (.ci/run sets GGUFLOW_CI=1), which must run it.
if ! npm ci --prefix "$(dirname "$0")/../tests/server" --no-audit --no-fund; then
  if [ "${GGUFLOW_CI:-0}" = 1 ]; then
    echo "install-deps.sh: npm ci failed (tests/server needs the openai package)" >&2
    exit 1
  fi
  echo "install-deps.sh: warning: npm ci failed; the ServerOpenAiClient test will report SKIPPED" >&2
fi
