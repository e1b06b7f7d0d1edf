#!/usr/bin/env bash
# Sentence embeddings batched (texts packed into ragged steps, `--batch-tokens`) against one
# text per step (`--batch-tokens 0`), alternated A B A B in one sitting so that machine noise
# falls on both: texts/s of each per round, their medians and spread, and the ratio per round.
# Both runs write the same vectors (tests/embed: bit for bit); only the time differs.
#
#   bench/embed_batching.sh BUILD_DIR [MODEL.gguf] [TEXTS_FILE] [ROUNDS]
#
# MODEL: default a bge-small-shaped Q8_0 model synthesized once (`gguflow synth --preset
# bge-small --vocab ../shared/data/vocab/ggml-vocab-bert-bge.gguf`) into a temporary folder.
# TEXTS_FILE: default the non-empty lines of ../shared/data/text/calib.txt repeated to 2,000
# lines (the issue's workload; LINES changes the count). Environment: THREADS (default 2),
# BATCH_TOKENS (default 4096), SENTENCES=1 splits calib.txt into sentences first (short texts:
# where per-step costs would show), REFERENCE_EMBEDDING (a reference runtime's llama-embedding:
# run third in every round on the same model and file with `-t THREADS` and
# REFERENCE_EMBEDDING_ARGS, default "-b 512 -ub 512" (its context is the model's; a batch of
# the 4096-token budget makes its attention span all of the batch's texts, far slower);
# its texts/s from its own "prompt eval time", which like gguflow's figure leaves out model load).
set -euo pipefail
build="$1"; model="${2:-}"; texts="${3:-}"; rounds="${4:-5}"
threads="${THREADS:-2}"; budget="${BATCH_TOKENS:-4096}"
here="$(cd "$(dirname "$0")/.." && pwd)"
data="${GGUFLOW_TEST_DATA:-$here/../shared/data}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -z "$model" ]; then
  model="$work/bge-small-Q8_0.gguf"
  "$build/bin/gguflow" synth --preset bge-small --type Q8_0 \
    --vocab "$data/vocab/ggml-vocab-bert-bge.gguf" -o "$model" > /dev/null 2>&1
fi
if [ -z "$texts" ]; then
  texts="$work/texts.txt"
  python3 - "$data/text/calib.txt" "$texts" "${SENTENCES:-0}" "${LINES:-2000}" <<'PY'
import re, sys
lines = [l.strip() for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
if sys.argv[3] == "1":
    lines = [s for l in lines for s in re.split(r"(?<=[.!?])\s+", l) if s]
n = int(sys.argv[4])
out = (lines * (n // len(lines) + 1))[:n]
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(out) + "\n")
PY
fi
for ((i = 1; i <= rounds; i++)); do
  for side in one batched; do
    tokens=0; [ "$side" = batched ] && tokens="$budget"
    "$build/bin/gguflow" embed -m "$model" -f "$texts" -t "$threads" --batch-tokens "$tokens" \
      --progress summary -o "$work/out.$side.jsonl" 2> "$work/$side.$i.log"
    echo "round $i $side: $(tail -1 "$work/$side.$i.log")" >&2
  done
  cmp -s "$work/out.one.jsonl" "$work/out.batched.jsonl" || { echo "vectors differ" >&2; exit 1; }
  if [ -n "${REFERENCE_EMBEDDING:-}" ]; then
    # From the temporary folder: llama.cpp's tools write llama.log into the working directory.
    ref_bin="$(realpath "$REFERENCE_EMBEDDING")"; ref_model="$(realpath "$model")"; ref_texts="$(realpath "$texts")"
    # shellcheck disable=SC2086
    (cd "$work" && "$ref_bin" -m "$ref_model" -f "$ref_texts" -t "$threads" ${REFERENCE_EMBEDDING_ARGS:--b 512 -ub 512} \
      --embd-output-format array > "$work/out.reference" 2> "$work/reference.$i.log")
    echo "round $i reference: $(grep 'prompt eval time' "$work/reference.$i.log")" >&2
  fi
done
python3 - "$work" "$rounds" "$threads" "$budget" "$(grep -c . "$texts")" "${REFERENCE_EMBEDDING:-}" <<'PY'
import re, statistics, sys
work, rounds, threads, budget = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n_texts, reference = int(sys.argv[5]), sys.argv[6]
def rate(side, i):
    if side == "reference":
        ms = float(re.search(r"prompt eval time =\s*([0-9.]+) ms", open(f"{work}/reference.{i}.log").read()).group(1))
        return n_texts / (ms / 1000)
    line = open(f"{work}/{side}.{i}.log").read().strip().splitlines()[-1]
    return float(re.search(r"([0-9.]+) texts/s", line).group(1))
one = [rate("one", i) for i in range(1, rounds + 1)]
bat = [rate("batched", i) for i in range(1, rounds + 1)]
ratios = [b / a for a, b in zip(one, bat)]
print(f"| threads | one text per step: texts/s median (min..max) | batched ({budget} tokens): texts/s median (min..max) | batched/one per round | median |")
print("|---:|---:|---:|---|---:|")
print(f"| {threads} | {statistics.median(one):.1f} ({min(one):.1f}..{max(one):.1f}) | "
      f"{statistics.median(bat):.1f} ({min(bat):.1f}..{max(bat):.1f}) | "
      f"{' '.join(f'{r:.2f}' for r in ratios)} | {statistics.median(ratios):.2f} |")
if reference:
    ref = [rate("reference", i) for i in range(1, rounds + 1)]
    vs = [b / r for b, r in zip(bat, ref)]
    print()
    print(f"reference {reference}: texts/s median {statistics.median(ref):.1f} ({min(ref):.1f}..{max(ref):.1f}); "
          f"batched/reference per round {' '.join(f'{r:.2f}' for r in vs)}, median {statistics.median(vs):.2f}")
PY
