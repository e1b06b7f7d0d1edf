#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, -DGGUFLOW_FUZZ=ON: clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, every UB check fatal) in build-fuzz, assembles their seed corpora
# from the shared test data and the repository, runs each target for SECONDS (default 60) and
# fails on any finding. docs/RELIABILITY.md ("Fuzzing") explains the targets and records runs.
#
# Usage: tools/fuzz.sh [SECONDS]        e.g. tools/fuzz.sh 3600 for the hour per target of issue 23
# Environment:
#   BUILD_DIR           build folder (default build-fuzz)
#   JOBS                parallel build jobs (default: nproc)
#   FUZZ_TARGETS        the targets to run, space-separated (default: all five)
#   GGUFLOW_TEST_DATA   the shared data folder (default ../shared/data beside the source tree)
#   FUZZ_NICE           nice level of the fuzzers (default 0)
# Output, per target, under $BUILD_DIR/fuzz-work/: seeds/T (rebuilt every run), corpus/T (what
# the fuzzer found interesting; kept between runs, so later runs start from it), findings/T
# (crash-*, timeout-*, oom-*, leak-* inputs of this run), logs/T.log. Each target runs single-process
# (no -jobs/-workers) with -timeout=30 s per input and libFuzzer's default -rss_limit_mb=2048.
# Exit status: 0 when no target found anything, 1 otherwise (the findings are listed).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
seconds="${1:-60}"
build_dir="${BUILD_DIR:-build-fuzz}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
data="${GGUFLOW_TEST_DATA:-$root/../shared/data}"
targets="${FUZZ_TARGETS:-fuzz_gguf_reader fuzz_graph_loader fuzz_tokenizer fuzz_plugin_file fuzz_server_request}"
nice_level="${FUZZ_NICE:-0}"

if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "tools/fuzz.sh: SECONDS must be a positive integer, found '$seconds'" >&2
  exit 2
fi
if [ ! -d "$data/models" ] || [ ! -d "$data/vocab" ]; then
  echo "tools/fuzz.sh: the shared test data is not at $data (set GGUFLOW_TEST_DATA)" >&2
  exit 2
fi
data="$(cd "$data" && pwd)"

# ---- build -------------------------------------------------------------------------------------
# -O1 -g without NDEBUG: the usual optimisation for fuzzing (fast enough, readable stacks).
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DGGUFLOW_FUZZ=ON -DGGUFLOW_BUILD_TESTS=OFF \
  -DGGUFLOW_BUILD_BENCH=OFF -DGGUFLOW_TEST_DATA="$data" >/dev/null
cmake --build "$build_dir" -j "$jobs" --target gguflow_fuzz
bin="$root/$build_dir/bin"
work="$root/$build_dir/fuzz-work"

# ---- seed corpora (rebuilt each run from the shared files: nothing of ../shared is committed) --
rm -rf "$work/seeds"
mkdir -p "$work/seeds" "$work/corpus" "$work/findings" "$work/logs"
seeds="$work/seeds"

# GGUF reader: every model, vocabulary and malformed GGUF up to the input size limit...
gguf_max_len=1310720  # 1.25 MiB: the stories260K files and the smaller synth/vocab files fit
mkdir -p "$seeds/fuzz_gguf_reader"
find "$data/models" "$data/vocab" "$data/malformed" -name '*.gguf' -size -"$((gguf_max_len / 1024 + 1))"k \
  -exec cp {} "$seeds/fuzz_gguf_reader/" \;
# ...and small files the target writes with the project's GgufWriter (fuzz/gguf_seeds.h): each
# tensor type, each value type, a tiny vocabulary of each tokenizer kind and pre-tokenizer.
GGUFLOW_FUZZ_WRITE_SEEDS="$seeds/fuzz_gguf_reader" "$bin/fuzz_gguf_reader"

# Graph loader: byte 0 chooses the model (fuzz/fuzz_graph_loader.cc kModels), the rest is YAML.
base_separator=$'\n#%base.yaml\n'
mkdir -p "$seeds/fuzz_graph_loader"
model_digit() {
  case "$1" in
    gemma2) echo 2 ;; gemma3) echo 3 ;; phi3) echo 4 ;; qwen3) echo 5 ;; bert) echo 6 ;;
    nomic-bert) echo 7 ;; *) echo 0 ;;
  esac
}
for g in graphs/*.yaml; do
  name="$(basename "$g" .yaml)"
  { printf '%s' "$(model_digit "$name")"; cat "$g"; } > "$seeds/fuzz_graph_loader/shipped-$name"
done
{ printf 1; cat graphs/decode.yaml; } > "$seeds/fuzz_graph_loader/shipped-decode-qwen2"
for g in "$data"/malformed/*.yaml; do
  { printf 0; cat "$g"; } > "$seeds/fuzz_graph_loader/malformed-$(basename "$g" .yaml)"
done
for g in fuzz/seeds/graph_loader/*.yaml; do
  { printf 0; cat "$g"; printf '%s' "$base_separator"; cat graphs/decode.yaml; } \
    > "$seeds/fuzz_graph_loader/derived-$(basename "$g" .yaml)"
done

# Tokenizers: byte 0 = vocabulary (fuzz_tokenizer.cc kVocabularies: spm, gpt-2, qwen2, bert,
# gpt-2 with the llama-bpe and the default pre-tokenizer), byte 1 = options (0x0b: BOS/EOS,
# special tokens parsed, sequence start); then the strings of the vocabularies' test vectors one
# by one, and the shared texts.
mkdir -p "$seeds/fuzz_tokenizer"
vectors="$data/vocab/ggml-vocab-llama-spm.gguf.inp"
LC_ALL=C awk -v RS='\n__ggml_vocab_test__\n' -v dir="$seeds/fuzz_tokenizer/vector-" \
  '{ f = dir NR; printf "%s", $0 > f; close(f) }' "$vectors"
for f in "$seeds"/fuzz_tokenizer/vector-*; do
  for header in 0000 0100 0200 0300 0400 0500 000b 010b 020b 030b; do
    { printf "\\x${header:0:2}\\x${header:2:2}"; cat "$f"; } > "$f.$header"
  done
  rm "$f"
done
for t in "$data"/text/*.txt; do
  for header in 0000 0100 0200 0300 0400 0500; do
    { printf "\\x${header:0:2}\\x${header:2:2}"; cat "$t"; } > "$seeds/fuzz_tokenizer/text-$(basename "$t" .txt).$header"
  done
done

# Plugin files: the malformed plugin, a small library with a target section compiled here, and
# the kernel plugins of other build folders when they exist (the Release pass of .ci/run).
mkdir -p "$seeds/fuzz_plugin_file"
cp "$data"/malformed/plugin_dir/*.so "$seeds/fuzz_plugin_file/"
for target in AVX2 SSE4 EMU128 NOT_A_TARGET; do
  clang -shared -fPIC -O1 -s -nostdlib -Wl,-z,noseparate-code -DGGUFLOW_SEED_TARGET="\"$target\"" \
    -o "$seeds/fuzz_plugin_file/seed-$target.so" fuzz/seeds/plugin_file/target_section.c
done
for so in build/bin/libgguflow-kernels-*.so build-asan/bin/libgguflow-kernels-*.so; do
  [ -f "$so" ] && cp "$so" "$seeds/fuzz_plugin_file/$(basename "$(dirname "$(dirname "$so")")")-$(basename "$so")"
done
plugin_max_len=4194304  # the Highway plugins are ~1-2 MB; libFuzzer's default would truncate them

# Server requests: the committed JSON bodies (byte 0: the endpoint).
mkdir -p "$seeds/fuzz_server_request"
cp fuzz/seeds/server_request/* "$seeds/fuzz_server_request/"

# ---- run ---------------------------------------------------------------------------------------
status=0
summary=()
for t in $targets; do
  if [ ! -x "$bin/$t" ]; then
    echo "tools/fuzz.sh: no fuzz target $bin/$t" >&2
    exit 2
  fi
  rm -rf "$work/findings/$t"  # findings of an earlier run are in its log; fixed ones are tests now
  mkdir -p "$work/corpus/$t" "$work/findings/$t" "$seeds/$t"
  extra=()
  case "$t" in
    fuzz_gguf_reader) extra+=(-max_len="$gguf_max_len") ;;
    fuzz_graph_loader) extra+=(-dict="$root/fuzz/graph_loader.dict") ;;
    fuzz_plugin_file) extra+=(-max_len="$plugin_max_len") ;;
  esac
  echo "== $t: $seconds s (seeds: $(ls "$seeds/$t" | wc -l), corpus so far: $(ls "$work/corpus/$t" | wc -l))"
  log="$work/logs/$t.log"
  set +e
  GGUFLOW_TEST_DATA="$data" nice -n "$nice_level" "$bin/$t" -max_total_time="$seconds" -timeout=30 \
    -print_final_stats=1 -artifact_prefix="$work/findings/$t/" "${extra[@]}" \
    "$work/corpus/$t" "$seeds/$t" > "$log" 2>&1
  rc=$?
  set -e
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
  last="$(grep -E '^#[0-9]+' "$log" | tail -1)"
  corp="$(printf '%s' "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p')"
  cov="$(printf '%s' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')"
  findings="$(ls "$work/findings/$t" | wc -l)"
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    verdict="FINDING (exit $rc)"
    grep -E 'ERROR: |SUMMARY: |fuzz finding:|deadly signal|Test unit written' "$log" | head -20 || true
  else
    verdict="ok"
  fi
  summary+=("$(printf '%-18s %6ss %12s %9s %16s %7s %7s  %s' "$t" "$seconds" "${runs:-?}" "${speed:-?}" \
    "${corp:-?}" "${cov:-?}" "${rss:-?}MB" "$verdict")")
done

echo
printf '%-18s %7s %12s %9s %16s %7s %7s  %s\n' target time executions exec/s "corpus (n/bytes)" cov rss result
for line in "${summary[@]}"; do echo "$line"; done
if [ "$status" -ne 0 ]; then
  echo "tools/fuzz.sh: findings (reproduce with $bin/TARGET FILE):"
  find "$work/findings" -type f | sed 's/^/  /'
fi
exit "$status"
