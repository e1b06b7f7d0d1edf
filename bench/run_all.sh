#!/usr/bin/env bash
# Reproduces the issue-9 performance table in one command (about 2 minutes on an idle 2-core
# machine; the Q4_K_M and Q8_0 models are synthesized first when missing, ~10-60 s each):
#
#   bench/run_all.sh [BUILD_DIR] [MODEL_DIR]
#
# BUILD_DIR holds bin/gguflow and the kernel plugins (default: ./build). MODEL_DIR (default:
# BUILD_DIR/bench-models) receives the Qwen2.5-0.5B-shaped models (`gguflow synth --preset
# qwen2.5-0.5b --type Q4_K_M|Q8_0`) and the JSON results. It prints, in Markdown:
#   1. gguflow bench, Q4_K_M, kernels forced to avx2: pp64, pp512, tg128 at 1 and 2 threads;
#   2. gguflow bench, Q8_0, avx2: tg128 at 2 threads;
#   3. time to first token of a 64-token prompt including load: wall time of a whole
#      `gguflow run --tokens <64 ids> --greedy 1` process (start, mmap + graph binding, session,
#      prefill, first greedy token), median of 3 runs, page cache warm;
#   4. peak RSS during tg128 against 1.05 x file size + KV cache.
# Environment: REPS (default 3) timed repetitions per test; KERNELS (default avx2);
# THREADS (default 1,2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build="$(cd "${1:-$root/build}" && pwd)"
models="${2:-$build/bench-models}"
reps="${REPS:-3}"
kernels="${KERNELS:-avx2}"
threads="${THREADS:-1,2}"
gguflow="$build/bin/gguflow"
[ -x "$gguflow" ] || { echo "run_all.sh: $gguflow not found; build first" >&2; exit 1; }
mkdir -p "$models"
q4="$models/qwen2.5-0.5b-Q4_K_M.gguf"
q8="$models/qwen2.5-0.5b-Q8_0.gguf"
for spec in "Q4_K_M:$q4" "Q8_0:$q8"; do
  type="${spec%%:*}"; file="${spec#*:}"
  if [ ! -s "$file" ]; then
    echo "synthesizing $file" >&2
    "$gguflow" synth --preset qwen2.5-0.5b --type "$type" -o "$file" > /dev/null
  fi
done

echo "# gguflow issue-9 table ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "## 1. Q4_K_M: gguflow bench -p 64,512 -n 128 -t $threads -r $reps --kernels $kernels"
echo
"$gguflow" bench --model "$q4" -p 64,512 -n 128 -t "$threads" -r "$reps" --kernels "$kernels" \
  --ctx 512 --json "$models/q4_k_m.json"
echo
echo "## 2. Q8_0: gguflow bench -p 0 -n 128 -t 2 -r $reps --kernels $kernels"
echo
"$gguflow" bench --model "$q8" -p 0 -n 128 -t 2 -r "$reps" --kernels "$kernels" --ctx 512 \
  --json "$models/q8_0.json"

echo
echo "## 3. Time to first token, 64-token prompt, including load (2 threads, ctx 512)"
echo
ids="$(seq -s, 100 163)"  # 64 token ids
times=()
for i in 1 2 3; do
  start=$(date +%s.%N)
  "$gguflow" run --model "$q4" --tokens "$ids" --greedy 1 --threads 2 --ctx 512 \
    --kernels "$kernels" > /dev/null
  end=$(date +%s.%N)
  times+=("$(awk "BEGIN { print $end - $start }")")
done
sorted=($(printf '%s\n' "${times[@]}" | sort -g))
printf 'gguflow run --tokens <64 ids> --greedy 1: %.3f s median (runs: %s s)\n' "${sorted[1]}" \
  "$(printf '%.3f ' "${times[@]}")"

echo
echo "## 4. Peak RSS during tg128 vs 1.05 x file size + KV cache"
echo
python3 - "$models/q4_k_m.json" "$models/q8_0.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    for row in json.load(open(path)):
        if not row["test"].startswith("tg"):
            continue
        budget = 1.05 * row["model_file_bytes"] + row["kv_cache_bytes"]
        print("%s %s %d thread(s): peak RSS %.1f MiB; file %.1f MiB + KV %.1f MiB; "
              "budget 1.05 x file + KV = %.1f MiB; ratio to budget %.3f" % (
              row["model"].rsplit("/", 1)[-1], row["test"], row["threads"],
              row["peak_rss_bytes"] / 2**20, row["model_file_bytes"] / 2**20,
              row["kv_cache_bytes"] / 2**20, budget / 2**20, row["peak_rss_bytes"] / budget))
PY
