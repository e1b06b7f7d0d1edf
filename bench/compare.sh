#!/usr/bin/env bash
# gguflow against a reference runtime's llama-bench (llama.cpp, ik_llama.cpp) on one model, in
# one sitting: the two alternate round by round (gguflow, reference, gguflow, reference, ...) so
# that machine noise falls on both, with the same prompt sizes, generation lengths, thread
# counts and repetitions. Prints one table: per test and thread count, the median over the rounds
# of each side's per-round median tokens/s, its spread (min..max over the rounds), gguflow /
# reference per round and the median ratio; then the reference's build and the exact commands.
#
#   bench/compare.sh GGUFLOW_BIN_DIR MODEL.gguf [ROUNDS]       (default 3 rounds)
#
# Environment:
#   REFERENCE_BENCH  path of the reference llama-bench; unset or missing: gguflow alone (said so)
#   PROMPTS          prompt sizes, comma-separated (default 64,512)
#   GEN              generation lengths (default 128; 0: none)
#   THREADS          thread counts (default 1,2)
#   REPS             repetitions per run on each side (default 3)
#   GGUFLOW_ARGS     extra `gguflow bench` arguments (e.g. "--kernels avx2")
#   REFERENCE_ARGS   extra llama-bench arguments (e.g. "-rtr 1"); default none: its defaults
#   OUT              folder for the raw JSON of every run (default: a new temporary folder)
#   REFERENCE_VERSION  what the reference is (e.g. "ik_llama.cpp 8337e4cd3"), printed with its
#                    build fields: a reference built from an exported tree (git archive) reports
#                    build_commit "unknown", so its version has to be given
#
# Both sides define ppN as one N-token prompt from an empty cache and tgN as N single-token steps
# from an empty cache; both warm up once before timing. The reference's KV cache is its default
# (llama.cpp: f16) unless REFERENCE_ARGS says otherwise; gguflow's is f32 unless GGUFLOW_ARGS
# passes -ctk/-ctv.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,25p' "$0" >&2
  exit 2
fi
bin="$1"; model="$2"; rounds="${3:-3}"
prompts="${PROMPTS:-64,512}"; gen="${GEN:-128}"; threads="${THREADS:-1,2}"; reps="${REPS:-3}"
reference="${REFERENCE_BENCH:-}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
[ -x "$bin/gguflow" ] || { echo "bench/compare.sh: no gguflow in '$bin'" >&2; exit 2; }
[ -f "$model" ] || { echo "bench/compare.sh: no model file '$model'" >&2; exit 2; }
if [ -n "$reference" ] && [ ! -x "$reference" ]; then
  echo "bench/compare.sh: REFERENCE_BENCH '$reference' is not an executable; measuring gguflow alone" >&2
  reference=""
fi
[ -n "$reference" ] || echo "bench/compare.sh: no reference llama-bench (REFERENCE_BENCH): gguflow alone" >&2

# shellcheck disable=SC2206
ours=("$bin/gguflow" bench --model "$model" -p "$prompts" -n "$gen" -t "$threads" -r "$reps"
      --bandwidth-mib 16 --format json ${GGUFLOW_ARGS:-})
# shellcheck disable=SC2206
theirs=("$reference" -m "$model" -p "$prompts" -n "$gen" -t "$threads" -r "$reps" -o json ${REFERENCE_ARGS:-})
for ((i = 1; i <= rounds; i++)); do
  "${ours[@]}" > "$out/gguflow.$i.json" 2> "$out/gguflow.$i.log"
  echo "round $i/$rounds: gguflow done" >&2
  if [ -n "$reference" ]; then
    "${theirs[@]}" > "$out/reference.$i.json" 2> "$out/reference.$i.log"
    echo "round $i/$rounds: reference done" >&2
  fi
done

python3 - "$out" "$rounds" "${reference:+yes}" "${REFERENCE_VERSION:-}" <<'PY'
import json, statistics, sys
out, rounds, with_reference = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "yes"
reference_version = sys.argv[4]

def ours(i):
    return {(r["test"], r["threads"]): r["tokens_per_s_median"] for r in json.load(open(f"{out}/gguflow.{i}.json"))}

def theirs(i):
    rows = {}
    for r in json.load(open(f"{out}/reference.{i}.json")):
        test = f"pp{r['n_prompt']}" if r["n_gen"] == 0 else f"tg{r['n_gen']}"
        rows[(test, r["n_threads"])] = statistics.median(r["samples_ts"])
    return rows

def cell(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}..{max(values):.1f})"

a = [ours(i) for i in range(1, rounds + 1)]
b = [theirs(i) for i in range(1, rounds + 1)] if with_reference else None
if b:
    print("| test | threads | gguflow tok/s | reference tok/s | gguflow / reference per round | median |")
    print("|---|---:|---:|---:|---|---:|")
else:
    print("| test | threads | gguflow tok/s |")
    print("|---|---:|---:|")
for key in a[0]:
    mine = [r[key] for r in a]
    if not b:
        print(f"| {key[0]} | {key[1]} | {cell(mine)} |")
        continue
    if any(key not in r for r in b):
        print(f"| {key[0]} | {key[1]} | {cell(mine)} | (not run) | | |")
        continue
    ref = [r[key] for r in b]
    ratios = [x / y for x, y in zip(mine, ref)]
    print(f"| {key[0]} | {key[1]} | {cell(mine)} | {cell(ref)} | "
          f"{' '.join(f'{q:.2f}' for q in ratios)} | **{statistics.median(ratios):.2f}x** |")
print()
print(f"medians over {rounds} rounds of each run's median; (min..max) over the rounds")
first = json.load(open(f"{out}/gguflow.1.json"))[0]
print(f"gguflow: kernels {first['kernels']}, graph {first['graph']}, KV cache {first['kv_cache_summary']}")
if b:
    r = json.load(open(f"{out}/reference.1.json"))[0]
    fields = ["build_commit", "build_number", "cpu_info", "model_type", "n_batch", "n_ubatch",
              "type_k", "type_v", "flash_attn"]
    named = [f"version {reference_version}"] if reference_version else []
    print("reference: " + ", ".join(named + [f"{f} {r[f]}" for f in fields if f in r]))
print(f"raw JSON: {out}")
PY
if [ -n "$reference" ]; then
  echo "commands: ${ours[*]}" ; echo "          ${theirs[*]}"
else
  echo "command: ${ours[*]}"
fi
