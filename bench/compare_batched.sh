#!/usr/bin/env bash
# Batched decode, gguflow against a reference runtime's llama-batched-bench (llama.cpp,
# ik_llama.cpp), in one sitting: N sequences decoding together, one token each per step, for
# each N in STREAMS. The two sides alternate round by round (gguflow, reference, ...) so that
# machine noise falls on both. Prints, per N: each side's aggregate decode tokens/s as the median
# over the rounds with its spread (min..max), gguflow / reference per round and its median, and
# each side's N-stream aggregate over its own one stream.
#
#   bench/compare_batched.sh GGUFLOW_BIN_DIR MODEL.gguf [ROUNDS]     (default 3 rounds)
#
# Environment:
#   REFERENCE_BATCHED  path of the reference llama-batched-bench; unset or missing: gguflow alone
#   STREAMS            stream counts, comma-separated (default 1,2,4,8)
#   THREADS            threads on both sides (default 2)
#   REFERENCE_ARGS     extra llama-batched-bench arguments; default none: its defaults (f16 KV
#                      cache, flash attention as it decides)
#   REFERENCE_VERSION  what the reference is (e.g. "ik_llama.cpp 8337e4cd3")
#
# Both sides measure the same work: every sequence holds a 64-token prompt (untimed), then 32
# steps of one token per sequence are timed, so attention covers positions 64..95.
#   gguflow:   bench/slots_bench.cc's BM_DecodeSlots/N (Session::step_slots, the server's step;
#              weights packed; its own f32 KV cache), median of 3 repetitions per round;
#              "tokens/s" = N tokens per step.
#   reference: llama-batched-bench -npp 64 -ntg 32 -npl N: its S_TG column (N * 32 generated
#              tokens / their time), one run per round.
set -euo pipefail
bin="$(realpath "$1")"; model="$(realpath "$2")"; rounds="${3:-3}"
streams="${STREAMS:-1,2,4,8}"
threads="${THREADS:-2}"
ref="${REFERENCE_BATCHED:-}"
if [ -n "$ref" ] && [ -e "$ref" ]; then ref="$(realpath "$ref")"; fi
out="$(mktemp -d)"
filter="BM_DecodeSlots/(${streams//,/|})/"
for ((i = 1; i <= rounds; i++)); do
  GGUFLOW_BENCH_MODEL="$model" GGUFLOW_BENCH_THREADS="$threads" "$bin/slots_bench" \
    --benchmark_filter="$filter" --benchmark_format=json > "$out/gguflow.$i.json" 2> /dev/null
  echo "round $i gguflow done" >&2
  if [ -x "$ref" ]; then
    # Run in the output folder: the reference writes a llama.log where it runs. Its table goes
    # to its log (stderr).
    # shellcheck disable=SC2086
    (cd "$out" && "$ref" -m "$model" -c 4096 -b 2048 -ub 512 -npp 64 -ntg 32 -npl "$streams" -t "$threads" \
      ${REFERENCE_ARGS:-} > "$out/reference.$i.txt" 2>&1)
    echo "round $i reference done" >&2
  fi
done
python3 - "$out" "$rounds" "$streams" "${ref:+yes}" <<'PY'
import json, re, statistics, sys
out, rounds, streams, have_ref = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",")], sys.argv[4] == "yes"

def gguflow(i):
    rows = json.load(open(f"{out}/gguflow.{i}.json"))["benchmarks"]
    got = {}
    for r in rows:
        m = re.match(r"BM_DecodeSlots/(\d+)/.*_median$", r["name"])
        if m and r.get("aggregate_name") == "median":
            got[int(m.group(1))] = r["tokens/s"]
    return got

def reference(i):
    got = {}
    for line in open(f"{out}/reference.{i}.txt"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # | PP | TG | B | N_KV | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s |
        if len(cells) == 10 and cells[2].isdigit():
            got[int(cells[2])] = float(cells[7])
    return got

g = [gguflow(i) for i in range(1, rounds + 1)]
r = [reference(i) for i in range(1, rounds + 1)] if have_ref else None
def span(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}..{max(values):.1f})"
head = "| streams | gguflow tok/s median (min..max) | x own 1 stream |"
rule = "|---:|---:|---:|"
if r:
    head += " reference tok/s median (min..max) | x own 1 stream | gguflow / reference per round | median |"
    rule += "---:|---:|---|---:|"
print(head); print(rule)
for n in streams:
    gv = [x[n] for x in g]
    row = f"| {n} | {span(gv)} | {statistics.median(x[n] / x[streams[0]] for x in g):.2f} |"
    if r:
        rv = [x[n] for x in r]
        ratios = [a / b for a, b in zip(gv, rv)]
        row += (f" {span(rv)} | {statistics.median(x[n] / x[streams[0]] for x in r):.2f} |"
                f" {' '.join(f'{q:.2f}' for q in ratios)} | {statistics.median(ratios):.2f} |")
    print(row)
print(f"\n(x own 1 stream: against the {streams[0]}-stream aggregate of the same side and round)")
PY
if [ -x "$ref" ]; then
  echo "reference ${REFERENCE_VERSION:-$ref}: $ref -m $model -c 4096 -b 2048 -ub 512 -npp 64 -ntg 32 -npl $streams -t $threads ${REFERENCE_ARGS:-}"
else
  echo "no reference (REFERENCE_BATCHED unset or not executable): gguflow alone"
fi
echo "raw output: $out"
