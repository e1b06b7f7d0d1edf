#!/usr/bin/env bash
# Two builds of gguflow against each other on one model, alternated A B A B in one sitting so
# that machine noise falls on both: `gguflow bench` pp and tg rows per round, then the median
# tokens/s of each build over the rounds, their spread (min..max) and the ratio B/A per round.
#
#   bench/compare_builds.sh A_BIN_DIR B_BIN_DIR MODEL.gguf [ROUNDS]
#
# *_BIN_DIR holds gguflow and its kernel plugins. Environment: GRAPH_A / GRAPH_B (a graph file
# for that build, e.g. a copy of the decode.yaml it shipped with; default: its own), BENCH_ARGS
# (default "-p 512 -n 128 -t 2 -r 3").
set -euo pipefail
a="$1"; b="$2"; model="$3"; rounds="${4:-4}"
args=${BENCH_ARGS:--p 512 -n 128 -t 2 -r 3}
out="$(mktemp -d)"
for ((i = 1; i <= rounds; i++)); do
  for side in A B; do
    dir="$a"; graph="${GRAPH_A:-}"
    if [ "$side" = B ]; then dir="$b"; graph="${GRAPH_B:-}"; fi
    # shellcheck disable=SC2086
    "$dir/gguflow" bench --model "$model" $args ${graph:+--graph "$graph"} --format json \
      > "$out/$side.$i.json" 2> /dev/null
    echo "round $i $side done" >&2
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(side, i):
    return {(r["test"], r["threads"]): r["tokens_per_s_median"] for r in json.load(open(f"{out}/{side}.{i}.json"))}
keys = list(rows("A", 1).keys())
print("| test | threads | A median tok/s (min..max) | B median tok/s (min..max) | B/A per round | B/A median |")
print("|---|---:|---:|---:|---|---:|")
for k in keys:
    a = [rows("A", i)[k] for i in range(1, rounds + 1)]
    b = [rows("B", i)[k] for i in range(1, rounds + 1)]
    ratios = [y / x for x, y in zip(a, b)]
    print(f"| {k[0]} | {k[1]} | {statistics.median(a):.1f} ({min(a):.1f}..{max(a):.1f}) | "
          f"{statistics.median(b):.1f} ({min(b):.1f}..{max(b):.1f}) | "
          f"{' '.join(f'{r:.3f}' for r in ratios)} | {statistics.median(ratios):.3f} |")
PY
