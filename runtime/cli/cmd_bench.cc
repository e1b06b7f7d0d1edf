// `gguflow bench --model M [-p 64,512] [-n 32,128] [-t 1,2] [-r 5] [--kernels K] [--graph G]
// [--ctx C] [--format md|json|csv]`: prefill and decode throughput in the manner of llama-bench,
// with the streaming read bandwidth and each decode row's roofline fraction.
// The logic lives in runtime/bench/; this file parses options and picks kernels.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "runtime/bench/bench_format.h"
#include "runtime/bench/bench_runner.h"
#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "runtime/core/console.h"
#include "ops/error.h"
#include "runtime/core/input_registry.h"
#include "runtime/core/output_file.h"
#include "runtime/plugins/kernel_plugins.h"

namespace gguflow::cli {
namespace {

// "64,512" -> {64, 512}; throws naming the option for anything but integers.
std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string word = text.substr(start, comma - start);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (word.empty() || used != word.size())
      throw usage_error(option, " expects comma-separated integers, found '", text, "'");
    values.push_back(v);
    start = comma + 1;
  }
  return values;
}

}  // namespace

int run_bench(int argc, char** argv) {
  Args args("bench -m MODEL.gguf [options]",
            "Measures prefill (ppN: one N-token prompt) and decode (tgN: N single-token steps) "
            "throughput, each from an empty cache, once as a warm-up and then -r times: median, "
            "min and max tokens/s, and the peak RSS (VmHWM, reset before each test where the "
            "kernel allows, else the peak since start). The streaming read bandwidth is "
            "measured first at 1 and at each -t thread count (median of 5 passes over --bandwidth-mib MiB); "
            "each tg row reports roofline = (weight bytes read per token / bandwidth at its "
            "thread count) / (seconds per token) = tokens/s x weight bytes per token / "
            "bandwidth, where weight bytes per token counts every weight matrix once and one "
            "row of the embedding table.");
  model_option(args, "GGUF model to measure")
      .option("-p,--n-prompt", "N,...", "prompt sizes of the pp tests (0: none)", "512")
      .option("-n,--n-gen", "N,...", "token counts of the tg tests (0: none)", "128")
      .option("-t,--threads", "N,...", "thread counts, 0: every core (default: every core)").env("GGUFLOW_THREADS")
      .option("-r,--repetitions", "N", "timed repetitions of each test after one warm-up", "5")
      .option("--kernels", "NAME", "force a kernel plugin (default: $GGUFLOW_KERNELS, else the best)")
      .option("--graph", "FILE", "graph to run (default: the shipped graph for the model's architecture)")
      .option("-c,--ctx-size,--ctx", "N", "KV cache slots (default: max(512, largest test))", "0")
      .option("-d,--n-depth", "N", "tokens prefilled (untimed) before each test: tg at that context depth", "0")
      .option("--scheduler", "NAME", "flow_graph or topological_loop (same nodes)", "flow_graph")
      .option("-o,--output,--format", "FMT", "md (table), json (list of rows) or csv, as llama-bench's -o", "md")
      .flag("--json", "print the rows as one JSON document (--format json)")
      .option("--json-file", "FILE", "also write the rows as JSON to FILE (whatever --format is)")
      .option("--bandwidth-mib", "N", "buffer read by the bandwidth measurement, MiB", "256")
      .positional_count(0, 0);
  cache_type_options(args);
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model")) throw usage_error("-m/--model FILE is required");

  bench::BenchConfig config;
  config.model_path = args.get("--model");
  config.graph_path = args.get("--graph");
  config.prompt_sizes = parse_int_list("-p", args.get("-p"));
  config.gen_sizes = parse_int_list("-n", args.get("-n"));
  if (args.has("-t"))
    for (int64_t t : parse_int_list("-t", args.get("-t"))) {
      // 0: every core, as for every other command's -t (and $GGUFLOW_THREADS=0).
      if (t < 0 || t > kMaxThreads)
        throw usage_error("-t: thread counts must be 0..", kMaxThreads, " (0: every core), found ", t);
      const int threads = t == 0 ? most_threads() : lowered_threads(static_cast<int>(t));
      // Lowered counts can repeat (-t 2,64 on two cores): each is measured once.
      if (std::find(config.threads.begin(), config.threads.end(), threads) == config.threads.end())
        config.threads.push_back(threads);
    }
  const int64_t reps = args.get_int("-r");
  if (reps < 1 || reps > 100000) throw usage_error("-r must be 1..100000, found ", reps);
  config.repetitions = static_cast<int>(reps);
  config.n_ctx = args.get_int_in("--ctx", 0, exec::kMaxContext);
  config.n_depth = args.get_int_in("--n-depth", 0, exec::kMaxContext);
  exec::SessionOptions cache_types;
  cache_type_values(args, &cache_types);
  config.cache_type_k = cache_types.cache_type_k;
  config.cache_type_v = cache_types.cache_type_v;
  const std::string scheduler = args.get("--scheduler");
  if (scheduler == "flow_graph") config.scheduler = exec::Scheduler::kFlowGraph;
  else if (scheduler == "topological_loop") config.scheduler = exec::Scheduler::kTopologicalLoop;
  else throw usage_error("--scheduler must be flow_graph or topological_loop, found '", scheduler, "'");
  const int64_t bandwidth_mib = args.get_int("--bandwidth-mib");
  if (bandwidth_mib < 4 || bandwidth_mib > 65536)
    throw usage_error("--bandwidth-mib must be 4..65536, found ", bandwidth_mib);
  config.bandwidth_buffer_bytes = static_cast<size_t>(bandwidth_mib) << 20;
  if (args.has("--json") && args.has("--format") && args.get("--format") != "json")
    throw usage_error("--json prints JSON: expected no --format ", args.get("--format"), " with it");
  const bench::BenchFormat format = as_usage(
      [&] { return bench::parse_bench_format(args.has("--json") ? "json" : args.get("--format")); });
  as_usage([&] { bench::validate_bench_config(config); });

  plugins::SelectOptions kernel_options;
  kernel_options.forced = args.get("--kernels");
  const plugins::SelectedKernels& kernels = plugins::select_kernels(kernel_options);

  // Progress: one line rewritten in place on a terminal; a plain line per step elsewhere.
  const bool tty = console::is_terminal(stderr);
  const bench::BenchProgress progress = [tty](const std::string& message) {
    std::fprintf(stderr, tty ? "\r\033[K[bench] %s" : "[bench] %s\n", message.c_str());
    std::fflush(stderr);
  };
  // Opened before the benchmark, so a path that cannot be written fails now, not after it.
  std::optional<OutputFile> json_out;
  // So that --json-file cannot name an input (they are read after it is opened).
  remember_input_path(config.model_path);
  if (!config.graph_path.empty()) remember_input_path(config.graph_path);
  if (args.has("--json-file")) json_out.emplace(args.get("--json-file"));
  const bench::BenchReport report =
      bench::run_bench(config, *kernels.table, kernels.plugin.name, progress);
  if (tty) std::fprintf(stderr, "\r\033[K");
  const std::string text = bench::format_bench_report(report, format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (json_out) {  // temporary name + rename: a failed write keeps the old file
    const std::string json = bench::format_bench_report(report, bench::BenchFormat::kJson);
    if (std::fwrite(json.data(), 1, json.size(), json_out->stream()) != json.size())
      throw error(json_out->name(), ": write failed: ", std::strerror(errno));
    json_out->commit();
  }
  return 0;
}

}  // namespace gguflow::cli
