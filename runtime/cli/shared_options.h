// Options that several commands share, declared once so that their names (llama.cpp's short
// forms as aliases), environment defaults and help read the same everywhere (docs/CLI.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/cli/args.h"
#include "runtime/exec/session.h"

namespace gguflow::cli {

// -m, --model FILE; $GGUFLOW_MODEL when not given.
Args& model_option(Args& args, const std::string& help);
// For commands whose first argument is the model file (inspect, lower, tensor): -m FILE says
// it too, as llama.cpp's tools do, and $GGUFLOW_MODEL when neither is given. Returns the model
// path; `rest` receives the remaining positional arguments, which must number `n_rest` (a
// UsageError otherwise).
std::string model_argument(const Args& args, size_t n_rest, std::vector<std::string>* rest);
// Declares -m, --model for model_argument.
Args& model_alias_option(Args& args);

// -t, --threads N; $GGUFLOW_THREADS when not given; 0 = every core. `metavar` "N,..." for
// bench's list of counts.
Args& threads_option(Args& args, const std::string& metavar = "N");
// The --threads value checked against [0, kMaxThreads].
int threads_value(const Args& args);
// `requested` (> 0), or most_threads() with a warning on stderr when it asks for more (a session
// would get no more than that anyway, and a report must not name threads that never ran).
int lowered_threads(int requested);
// The most threads this process runs at once (oneTBB's limit): what "every core" (0) means.
int most_threads();
// -c, --ctx-size (alias --ctx) N.
Args& ctx_option(Args& args, const std::string& help, const std::string& default_value = "0");
// --kernels NAME (default: $GGUFLOW_KERNELS, else the best plugin).
Args& kernels_option(Args& args);
// --set NAME=VALUE, repeatable.
Args& set_option(Args& args);
// The --set values as name/value pairs; a malformed one (no '=') is a UsageError.
std::vector<std::pair<std::string, std::string>> set_values(const Args& args);
// -ctk, --cache-type-k TYPE and -ctv, --cache-type-v TYPE (llama.cpp's spellings): the KV cache
// element types, f32 (default), f16, q8_0 or q4_0.
Args& cache_type_options(Args& args);
// Sets options->cache_type_k/v from those given; a UsageError naming the allowed types for
// another value. Those not given stay unset (the graph's state attribute, else f32).
void cache_type_values(const Args& args, exec::SessionOptions* options);

}  // namespace gguflow::cli
