// `gguflow run GRAPH.yaml --model M --tokens 1,2,3 [--dump-logits FILE] [--greedy N]`:
// evaluates token ids as one prompt through a graph on the oneTBB flow-graph executor.
// The logic lives in runtime/exec/run_tokens.cc; this file parses options and picks kernels.
#include <cstdio>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/core/error.h"
#include "runtime/exec/run_tokens.h"
#include "runtime/exec/token_io.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"

namespace gguflow::cli {

int run_run(int argc, char** argv) {
  Args args("run GRAPH.yaml --model MODEL.gguf --tokens IDS [options]",
            "Evaluates token ids as one prompt (one batch) and writes the logits of every "
            "position, then optionally continues greedily.");
  args.positional("GRAPH.yaml", "the graph to run, e.g. graphs/decode.yaml")
      .positional_count(1, 1)
      .option("--model", "FILE", "GGUF model the graph is bound to")
      .option("--tokens", "IDS", "comma-separated token ids, e.g. 1,403,407")
      .option("--dump-logits", "FILE", "write f32 little-endian [n_tokens][n_vocab] here")
      .option("--greedy", "N", "then decode N tokens greedily and print their ids", "0")
      .option("--threads", "N", "worker threads (default: every core)", "0")
      .option("--ctx", "N", "context length: KV cache slots (default: min(model, 4096))", "0")
      .option("--kernels", "NAME", "force a kernel plugin (default: $GGUFLOW_KERNELS, else the best)")
      .option("--set", "NAME=VALUE", "override a graph parameter (repeatable)")
      .flag("--verbose", "print the plugin, buffer sizes and timings to stderr");
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model")) throw error("run: --model FILE is required");
  if (!args.has("--tokens")) throw error("run: --tokens IDS is required");

  exec::RunTokensRequest request;
  request.graph_path = args.positionals()[0];
  request.model_path = args.get("--model");
  request.set = graph::parse_set_options(args.all("--set"));
  request.tokens = exec::parse_token_ids(args.get("--tokens"));
  request.dump_logits = args.get("--dump-logits");
  request.greedy_steps = args.get_int("--greedy");
  request.session.n_threads = static_cast<int>(args.get_int("--threads"));
  request.session.n_ctx = args.get_int("--ctx");
  request.verbose = args.has("--verbose");

  plugins::SelectOptions kernel_options;
  kernel_options.forced = args.get("--kernels");
  const plugins::SelectedKernels& kernels = plugins::select_kernels(kernel_options);
  if (request.verbose) std::fprintf(stderr, "kernels: %s\n", kernels.describe().c_str());
  exec::run_tokens(request, *kernels.table, stdout, stderr);
  return 0;
}

}  // namespace gguflow::cli
