// `gguflow kv spectrum|calibrate|eval`: how low-rank a model's KV cache is, a calibrated
// low-rank projection (.kvproj.gguf) for the family's low-rank graph (graphs/decode-lowrank-kv.yaml,
// qwen3-lowrank-kv.yaml, ...), and its error and
// memory against the full cache. The logic lives in runtime/lowrank/; this file parses options.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/lowrank/kv_calibrate.h"
#include "runtime/lowrank/kv_eval.h"
#include "runtime/lowrank/kv_sweep.h"
#include "runtime/plugins/kernel_plugins.h"

namespace gguflow::cli {
namespace {

using namespace gguflow::lowrank;

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

void add_common(Args& args) {
  model_option(args, "GGUF model");
  threads_option(args);
  kernels_option(args);
  args.flag("-q,--quiet", "no progress lines on stderr (each run of the model over a text, with its time)");
}

StudyModel open_model(const Args& args, const char* command) {
  if (!args.has("--model")) throw usage_error(command, ": -m/--model FILE is required");
  plugins::SelectOptions kernel_options;
  kernel_options.forced = args.get("--kernels");
  const plugins::SelectedKernels& kernels = plugins::select_kernels(kernel_options);
  StudyModel m = StudyModel::open(args.get("--model"), *kernels.table, threads_value(args));
  m.quiet = args.has("--quiet");
  return m;
}

constexpr const char* kKeysHelp =
    "keys as attention caches them (after RoPE) or before the rotation (for the family's "
    "-lowrank-kv-prerope graph, e.g. graphs/decode-lowrank-kv-prerope.yaml)";

std::string require(const Args& args, const char* option, const char* command) {
  if (!args.has(option)) throw usage_error(command, ": ", option, " is required");
  return args.get(option);
}

int spectrum(int argc, char** argv) {
  Args args("kv spectrum --model M --text FILE [--ctx N] [--keys pre-rope] [--json] [--svg FILE]",
            "Runs the model over the text and reports, per layer (or KV head) and for K and V, the "
            "cumulative energy of the top r principal directions of the cached vectors.");
  add_common(args);
  args.option("--text", "FILE", "UTF-8 text to run the model over")
      .option("--ctx", "N", "tokens per run (the cache restarts every N tokens; 0: all)", "0")
      .option("--granularity", "layer|head", "one basis per layer or per KV head", "layer")
      .option("--keys", "post-rope|pre-rope", kKeysHelp, "post-rope")
      .option("--svg", "FILE", "draw the energy curves (K and V panels, one line per layer)")
      .flag("--json", "JSON instead of a table");
  if (!args.parse(argc, argv)) return 0;
  const KeyPosition keys = parse_key_position(args.get("--keys"));
  const StudyModel m = open_model(args, "kv spectrum");
  const auto tokens = tokenize_text_file(m, require(args, "--text", "kv spectrum"));
  const KvAnalysis a = analyse(
      collect_kv(m, tokens, args.get_int("--ctx"), parse_granularity(args.get("--granularity")), keys));
  if (args.has("--json")) print_spectrum_json(a, base_name(m.path), stdout);
  else print_spectrum_text(a, base_name(m.path), stdout);
  if (args.has("--svg")) write_spectrum_svg(a, base_name(m.path), args.get("--svg"));
  return 0;
}

int calibrate(int argc, char** argv) {
  Args args("kv calibrate --model M --text FILE (--energy T | --rank R) [--keys pre-rope] -o M.kvproj.gguf",
            "Picks per layer (or head) the smallest rank reaching an energy threshold, for K and V "
            "separately (or one uniform rank), and writes bases, means and ranks as a GGUF side file "
            "for the model family's low-rank graph (graphs/decode-lowrank-kv.yaml, qwen3-lowrank-kv.yaml; "
            "with --keys pre-rope their -prerope variants).");
  add_common(args);
  args.option("--text", "FILE", "calibration text (UTF-8)")
      .option("--ctx", "N", "tokens per run (the cache restarts every N tokens; 0: all)", "0")
      .option("--energy", "T", "energy threshold in (0, 1]")
      .option("--rank", "R", "one uniform rank instead of a threshold")
      .option("--granularity", "layer|head", "one basis per layer or per KV head", "layer")
      .option("--max-rank", "R", "cap on any rank (0: none)", "0")
      .option("--keys", "post-rope|pre-rope", kKeysHelp, "post-rope")
      .option("-o,--output", "FILE", "the projection file to write");
  if (!args.parse(argc, argv)) return 0;
  const KeyPosition keys = parse_key_position(args.get("--keys"));
  CalibrateOptions o;
  if (args.has("--energy")) o.energy = args.get_double("--energy");
  if (args.has("--rank")) o.rank = args.get_int("--rank");
  o.max_rank = args.get_int("--max-rank");
  if (args.has("--energy") && !(o.energy > 0.0 && o.energy <= 1.0))
    throw usage_error("--energy: expected a threshold in (0, 1], found ", args.get("--energy"));
  if (args.has("--rank") && o.rank < 1) throw usage_error("--rank: expected a rank of at least 1, found ", o.rank);
  if (args.has("--energy") == args.has("--rank"))
    throw usage_error("expected exactly one of --energy T and --rank R, found ",
                      args.has("--energy") ? "both" : "neither");
  const std::string output = require(args, "--output", "kv calibrate");
  const std::string text = require(args, "--text", "kv calibrate");
  o.text_name = base_name(text);
  const StudyModel m = open_model(args, "kv calibrate");
  const Granularity granularity = as_usage([&] { return parse_granularity(args.get("--granularity")); });
  // --rank and --max-rank against this model's dimension now, not after the whole text has run.
  as_usage([&] {
    check_calibrate_options(o, granularity == Granularity::kHead ? m.head_dim : m.n_head_kv * m.head_dim);
  });
  const auto tokens = tokenize_text_file(m, text);
  const KvAnalysis a = analyse(collect_kv(m, tokens, args.get_int("--ctx"), granularity, keys));
  const KvProjection p = make_projection(a, o, m);
  write_kv_projection(p, output);
  std::printf("calibrated on %s: %lld tokens\n", o.text_name.c_str(), static_cast<long long>(a.tokens));
  print_schedule(p, stdout);
  std::printf("wrote %s\n", output.c_str());
  return 0;
}

int eval(int argc, char** argv) {
  Args args("kv eval --model M (--kv-proj P.gguf | --cache-types T,... | -ctk T -ctv T | --sweep T1,T2,... "
            "--calib-text FILE) --text FILE",
            "Compares the full f32 cache, a projected cache and/or caches in smaller element types, "
            "and a zeroed-cache control on the same tokens (text not used for calibration): KL from "
            "the full cache, top-1 agreement, perplexity, relative L2 of the logits, KV bytes per "
            "token and in all (what the session allocated). --sweep puts every method in one table "
            "(and one plot with --svg): f32, the --cache-types, low rank with keys after and/or "
            "before RoPE (--keys) at each energy threshold, and the zeroed control.");
  add_common(args);
  cache_type_options(args);
  args.option("--kv-proj", "FILE", "projection written by 'gguflow kv calibrate'")
      .option("--cache-types", "T,...",
              "evaluate a cache of each type (K and V): f16, q8_0, q4_0, f32 (--sweep: default f16,q8_0,q4_0)")
      .option("--text", "FILE", "evaluation text (UTF-8)")
      .option("--sweep", "T,...", "calibrate at these energy thresholds and compare every method")
      .option("--calib-text", "FILE", "calibration text for --sweep")
      .option("--keys", "K,...", "--sweep: low-rank keys post-rope, pre-rope or both", "post-rope,pre-rope")
      .option("--ctx", "N", "--sweep: calibration tokens per run (0: all)", "0")
      .option("--granularity", "layer|head", "--sweep: one basis per layer or per KV head", "layer")
      .option("--max-rank", "R", "--sweep: cap on any rank (0: none)", "0")
      .option("--work-dir", "DIR", "--sweep: where the projection files go", "kv-sweep")
      .option("--svg", "FILE", "--sweep: plot error vs KV bytes per token")
      .flag("--json", "JSON instead of a table");
  if (!args.parse(argc, argv)) return 0;
  const std::string text = require(args, "--text", "kv eval");
  if (args.has("--sweep")) {
    // Every value is checked before the model runs.
    if (args.has("--kv-proj") || args.has("--cache-type-k") || args.has("--cache-type-v"))
      throw usage_error("kv eval --sweep calibrates its own projections and takes element types from "
                        "--cache-types: expected no --kv-proj, -ctk or -ctv");
    SweepOptions o;
    o.thresholds = parse_thresholds(args.get("--sweep"));
    o.cache_types = parse_cache_types(args.has("--cache-types") ? args.get("--cache-types") : "f16,q8_0,q4_0",
                                      "--cache-types");
    o.max_rank = args.get_int("--max-rank");
    o.work_dir = args.get("--work-dir");
    const std::vector<KeyPosition> keys = parse_key_positions(args.get("--keys"));
    const Granularity granularity = parse_granularity(args.get("--granularity"));
    const std::string calib = require(args, "--calib-text", "kv eval --sweep");
    const StudyModel m = open_model(args, "kv eval");
    for (KeyPosition k : keys) projected_graph_path(*m.file, k);  // a missing graph fails now, not after the collection
    const auto calib_tokens = tokenize_text_file(m, calib);
    const auto eval_tokens = tokenize_text_file(m, text);
    std::vector<KvAnalysis> calibrations;
    for (KeyPosition k : keys)
      calibrations.push_back(analyse(collect_kv(m, calib_tokens, args.get_int("--ctx"), granularity, k)));
    const SweepResult r = run_sweep(m, calibrations, base_name(calib), eval_tokens, o);
    if (args.has("--json")) print_sweep_json(r, stdout);
    else print_sweep_text(r, stdout);
    if (args.has("--svg")) write_sweep_svg(r, args.get("--svg"));
    return 0;
  }
  // The caches to compare with the full one: a projection, types for both K and V, and the
  // -ctk/-ctv pair.
  std::vector<CacheTypes> cache_types;
  if (args.has("--cache-types"))
    for (ops::KvCacheType t : parse_cache_types(args.get("--cache-types"), "--cache-types"))
      cache_types.push_back({t, t});
  if (args.has("--cache-type-k") || args.has("--cache-type-v")) {
    exec::SessionOptions given;
    cache_type_values(args, &given);
    cache_types.push_back({given.cache_type_k.value_or(ops::KvCacheType::kF32),
                           given.cache_type_v.value_or(ops::KvCacheType::kF32)});
  }
  const std::string proj = args.get("--kv-proj");
  if (proj.empty() && cache_types.empty())
    throw usage_error("kv eval: expected --kv-proj FILE, --cache-types T,..., -ctk/-ctv TYPE or --sweep");
  const StudyModel m = open_model(args, "kv eval");
  const auto tokens = tokenize_text_file(m, text);
  const EvalResult r = evaluate(m, proj, cache_types, tokens);
  if (args.has("--json")) print_eval_json(r, stdout);
  else print_eval_text(r, stdout);
  return 0;
}

}  // namespace

int run_kv(int argc, char** argv) {
  static constexpr const char* kUsage =
      "usage: gguflow kv spectrum|calibrate|eval [options]   (--help after one for its options)\n"
      "  spectrum   cumulative energy of the cached keys/values' principal directions\n"
      "  calibrate  per-layer ranks for an energy threshold -> a .kvproj.gguf side file\n"
      "  eval       full vs projected / f16 / q8_0 / q4_0 vs zeroed cache: KL, top-1, perplexity, bytes;\n"
      "             --sweep: every method (types, low rank post-/pre-RoPE per energy) in one table\n";
  if (argc < 1) {  // as a bare `gguflow`: the usage on stderr, a usage error
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!std::strcmp(argv[0], "--help") || !std::strcmp(argv[0], "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::string sub = argv[0];
  if (sub == "spectrum") return spectrum(argc - 1, argv + 1);
  if (sub == "calibrate") return calibrate(argc - 1, argv + 1);
  if (sub == "eval") return eval(argc - 1, argv + 1);
  throw usage_error("expected a subcommand spectrum, calibrate or eval, found '", sub, "'");
}

}  // namespace gguflow::cli
