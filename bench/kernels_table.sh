#!/usr/bin/env bash
# The kernel-plugin table (decode as a fraction of the streaming bandwidth, prefill batching) in
# one command, from kernels_bench (about 4-5 minutes with the defaults on a 2-core machine):
#
#   bench/kernels_table.sh [BUILD_DIR]
#
# Runs kernels_bench (BUILD_DIR/bin, default ./build) with REPS repetitions (default 5) of every
# case, repetitions of different cases interleaved at random (so a slow minute of a shared
# machine spreads over all cases instead of sinking one), and prints two Markdown tables:
#   1. decode: weight GB/s and of_bw, the kernel's rate over the streaming-read rate measured
#      right next to it (kernels_bench pairs them round by round): median over repetitions of
#      each repetition's median, with the lowest and highest repetition;
#   2. several activation rows (8: a server step; 64, 512: prefill), per layout (row-major; packed, where the plugin packs the type): milliseconds
#      per product of mat_mat (batched) and of one mat_vec per activation row (one at a time),
#      and the batching ratio one-at-a-time / batched (ratio of the medians, with the lowest and
#      highest ratio of same-index repetitions).
# Environment: REPS; KERNELS (default avx2); THREADS (a regex, default "1|2"); CASES (a regex
# on the case names, default all, e.g. "decode" or "prefill"); MIN_TIME (seconds per
# repetition, default 0.3); OUT (the raw JSON, default BUILD_DIR/kernels_table.json).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
build="$(cd "${1:-$root/build}" && pwd)"
bench="$build/bin/kernels_bench"
[ -x "$bench" ] || { echo "kernels_table.sh: $bench not found; build first" >&2; exit 1; }
reps="${REPS:-5}"
kernels="${KERNELS:-avx2}"
threads="${THREADS:-1|2}"
cases="${CASES:-}"
min_time="${MIN_TIME:-0.3}"
out="${OUT:-$build/kernels_table.json}"

echo "# kernels_bench table ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
filter="$cases.*threads:($threads)/"
echo "GGUFLOW_KERNELS=$kernels kernels_bench --benchmark_filter='$filter' --benchmark_repetitions=$reps --benchmark_enable_random_interleaving=true --benchmark_min_time=$min_time"
echo
GGUFLOW_KERNELS="$kernels" "$bench" --benchmark_filter="$filter" \
  --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
  --benchmark_min_time="$min_time" --benchmark_out="$out" --benchmark_out_format=json \
  > /dev/null 2> "$out.log" || { cat "$out.log" >&2; exit 1; }

python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict

runs = defaultdict(list)  # (shape, mode, threads) -> repetition rows in index order
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") != "iteration" or b["name"].startswith("stream_read"):
        continue
    parts = b["name"].split("/")
    runs[(parts[0], parts[1], parts[-2])].append(b)
for rows in runs.values():
    rows.sort(key=lambda b: b.get("repetition_index", 0))

def med(xs):
    return statistics.median(xs)

order = {}
for (shape, _, _), rows in runs.items():
    order[shape] = min(order.get(shape, 1 << 30), rows[0]["family_index"])
shapes = sorted(order, key=order.get)
thread_counts = sorted({k[2] for k in runs}, key=lambda t: int(t.split(":")[1]))

def section(title, header, rows):
    if not rows:
        return
    print("## " + title)
    print()
    print(header)
    print("|" + "|".join("---" if h.strip() in ("case", "layout") or "min-max" in h else "---:"
                         for h in header.strip("|").split("|")) + "|")
    for row in rows:
        print(row)
    print()

decode_rows = []
for shape in shapes:
    for t in thread_counts:
        for mode, layout in (("decode", "row-major"), ("decode_packed", "packed")):
            rows = runs.get((shape, mode, t))
            if not rows:
                continue
            ratios = [b["of_bw"] for b in rows if "of_bw" in b]
            decode_rows.append("| %s | %s | %s | %.1f | **%.2f** (%.2f-%.2f) | %.1f |" % (
                shape, layout, t.split(":")[1], med([b["GB/s"] for b in rows]),
                med(ratios), min(ratios), max(ratios), med([b["stream"] for b in rows])))

section("Decode (one activation row)",
        "| case | layout | threads | GB/s | of_bw (min-max of repetitions) | stream GB/s |", decode_rows)

prefill_rows = []
ms = lambda b: b["real_time"] / 1e6  # kernels_bench reports ns
for shape in shapes:
    for layout, suffix in (("row-major", ""), ("packed", "_packed")):
        for rows_n in ("8", "64", "512"):
            for t in thread_counts:
                batched = runs.get((shape, "prefill%s%s" % (rows_n, suffix), t))
                single = runs.get((shape, "prefill%s%s_one_at_a_time" % (rows_n, suffix), t))
                if not batched or not single:
                    continue
                pair = [ms(s) / ms(b) for b, s in zip(batched, single)]
                prefill_rows.append("| %s | %s | %s | %s | %.2f | %.2f | **%.2fx** (%.2f-%.2f) |" % (
                    shape, layout, rows_n, t.split(":")[1], med(map(ms, batched)), med(map(ms, single)),
                    med(map(ms, single)) / med(map(ms, batched)), min(pair), max(pair)))
section("Several activation rows (8: a server step of 8 sequences; 64 and 512: prefill)",
        "| case | layout | rows | threads | batched ms | one at a time ms | ratio (min-max) |", prefill_rows)
PY
