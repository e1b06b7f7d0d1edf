#include "runtime/cli/shared_options.h"

#include <oneapi/tbb/global_control.h>

#include <cstdio>
#include <cstdlib>

#include "runtime/core/console.h"
#include "runtime/graph/load.h"

namespace gguflow::cli {

Args& model_option(Args& args, const std::string& help) {
  return args.option("-m,--model", "FILE", help).env("GGUFLOW_MODEL");
}

std::string model_argument(const Args& args, size_t n_rest, std::vector<std::string>* rest) {
  std::vector<std::string> words = args.positionals();
  std::string model;
  const char* from_env = std::getenv("GGUFLOW_MODEL");
  if (args.has("--model")) {
    model = args.get("--model");
  } else if (words.size() > n_rest) {
    model = words.front();
    words.erase(words.begin());
  } else if (from_env && *from_env) {
    // Read here, not through the option's env(): a set variable would otherwise count as -m
    // and push the MODEL.gguf argument into the others.
    model = from_env;
  } else if (!words.empty()) {  // `tensor M.gguf` without its NAME blamed the model
    throw usage_error("expected the model file and ", n_rest, " argument(s) after it, found only ", words.size(),
                      " argument(s) ('", words.front(), "'); the model may also come from -m or $GGUFLOW_MODEL");
  } else {
    throw usage_error("expected the model file: MODEL.gguf, -m MODEL.gguf or $GGUFLOW_MODEL");
  }
  if (words.size() != n_rest)
    throw usage_error("expected ", n_rest, " argument(s) after the model, found ", words.size());
  if (rest) *rest = std::move(words);
  return model;
}

Args& model_alias_option(Args& args) {
  return args.option("-m,--model", "FILE",
                     "the model file (instead of the MODEL.gguf argument; without either: "
                     "$GGUFLOW_MODEL)");
}

Args& threads_option(Args& args, const std::string& metavar) {
  return args.option("-t,--threads", metavar, "worker threads (default: every core)")
      .env("GGUFLOW_THREADS");
}

int most_threads() {
  return static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

int lowered_threads(int requested) {
  const int most = most_threads();
  if (requested <= most) return requested;
  console::start_stderr_line();
  std::fprintf(stderr, "gguflow: warning: --threads %d: this machine runs at most %d threads at once; using %d\n",
               requested, most, most);
  return most;
}

int threads_value(const Args& args) {
  if (!args.has("--threads")) return 0;
  return lowered_threads(static_cast<int>(args.get_int_in("--threads", 0, kMaxThreads)));
}

Args& ctx_option(Args& args, const std::string& help, const std::string& default_value) {
  return args.option("-c,--ctx-size,--ctx", "N", help, default_value);
}

Args& kernels_option(Args& args) {
  return args.option("--kernels", "NAME",
                     "force a kernel plugin (default: $GGUFLOW_KERNELS, else the best)");
}

Args& set_option(Args& args) {
  return args.option("--set", "NAME=VALUE", "override a graph parameter (repeatable)");
}

std::vector<std::pair<std::string, std::string>> set_values(const Args& args) {
  return as_usage([&] { return graph::parse_set_options(args.all("--set")); });
}

Args& cache_type_options(Args& args) {
  const std::string types = ops::kv_cache_type_names();
  return args
      .option("-ctk,--cache-type-k", "TYPE",
              "KV cache element type of the keys: " + types + " (default: the graph's, else f32)")
      .option("-ctv,--cache-type-v", "TYPE",
              "KV cache element type of the values: " + types + " (default: the graph's, else f32)");
}

void cache_type_values(const Args& args, exec::SessionOptions* options) {
  const auto parse = [&](const char* option) -> std::optional<ops::KvCacheType> {
    if (!args.has(option)) return std::nullopt;
    const std::string value = args.get(option);
    const auto type = ops::find_kv_cache_type(value);
    if (!type)
      throw usage_error(option, ": expected one of ", ops::kv_cache_type_names(), ", found '", value, "'");
    return type;
  };
  options->cache_type_k = parse("--cache-type-k");
  options->cache_type_v = parse("--cache-type-v");
}

}  // namespace gguflow::cli
