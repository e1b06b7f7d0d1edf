// `gguflow embed --model M [--input FILE|-] [--pooling P] [--format jsonl|tsv|npy] [-o OUT]
// [--similarity]`: one vector per text through graphs/embed.yaml. The logic lives in
// runtime/embed/embed_run.cc; this file parses options and picks kernels.
#include <cstdio>

#include "ops/normalize.h"
#include "ops/pool.h"
#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/embed/embed_run.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"

namespace gguflow::cli {

int run_embed(int argc, char** argv) {
  Args args(
      "embed --model MODEL.gguf [--input FILE|-] [options]",
      "Embeds texts: the model's embedding graph (graphs/embed.yaml for decoders: decode.yaml "
      "without the lm-head, plus pool + normalize; graphs/bert.yaml and nomic-bert.yaml for "
      "encoders) gives one vector per text, written in input order.\n"
      "\n"
      "Input: one text per line, or JSON Lines with a string field \"text\" (--input-format; "
      "auto = jsonl for *.jsonl/*.ndjson). An empty text is an error naming its line unless "
      "--skip-empty is given, which leaves it out (its index is then absent from the output). "
      "Invalid UTF-8, NUL bytes (binary files) and JSONL lines without \"text\" are errors naming "
      "the line. A text longer than the context is cut to its first --ctx tokens with a warning "
      "naming the line (a WordPiece text keeps its final [SEP]); --no-truncate makes it an "
      "error.\n"
      "\n"
      "Output (-o FILE is written under a temporary name and renamed when complete):\n"
      "  jsonl  {\"index\": i, \"embedding\": [...]} per text; i = 0-based record (line) number\n"
      "  tsv    i<TAB>v0<TAB>v1... per text\n"
      "  npy    float32 array [n_texts, dim] (NumPy .npy)\n"
      "--pooling none keeps every token's vector: jsonl writes {\"index\": i, \"tokens\": T, "
      "\"embedding\": [[...] x T]}, tsv one line per token (i<TAB>position<TAB>values), npy is "
      "refused; with --normalize l2 each token vector has unit length.\n"
      "--similarity prints the cosine-similarity matrix to stdout (the vectors then go only to "
      "-o, when given).\n"
      "Progress: a bar on stderr when it is a terminal, else one summary line; throughput "
      "(texts/s, tokens/s) is printed at the end.");
  model_option(args, "GGUF model (a decoder, or a bert / nomic-bert encoder)")
      .option("-f,--file,--input", "FILE", "texts to embed, '-' for stdin", "-")
      .option("--input-format", "FMT", "auto, text or jsonl", "auto")
      .flag("--skip-empty", "leave empty texts out instead of stopping with an error")
      .option("--graph", "FILE", "embedding graph (default: the shipped embedding graph for the model's architecture)")
      .option("--pooling", "MODE",
              "mean, sum, last, first, cls or none (default: the model's {arch}.pooling_type, "
              "else mean)")
      .option("--normalize", "MODE", "l2 or none (default: l2)")
      .option("--format", "FMT", "jsonl, tsv or npy", "jsonl")
      .option("-o,--output", "FILE", "write the vectors here instead of stdout")
      .flag("--similarity", "print the cosine-similarity matrix of the texts")
      .option("--batch-size", "N", "texts per batch: one flush and one progress step each", "128")
      .option("--batch-tokens", "N",
              "token budget of one graph step holding several texts, each attending only to "
              "itself (0: one text per step; at least the context; same vectors either way)", "4096")
      .option("--progress", "WHEN", "auto (a bar on a terminal), bar or summary", "auto")
      .option("-c,--ctx-size,--ctx", "N", "context: the most tokens of a text evaluated (default: min(model, 4096))",
              "0")
      .flag("--truncate", "cut a text longer than the context, with a warning (the default)")
      .flag("--no-truncate", "a text longer than the context is an error naming its line")
      .flag("--verbose", "print the graph, sizes and the plugin to stderr");
  threads_option(args);
  cache_type_options(args);
  kernels_option(args);
  set_option(args);
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model")) throw usage_error("--model FILE is required");

  embed::EmbedRequest request;
  request.model_path = args.get("--model");
  request.embedder.graph_path = args.get("--graph");
  request.embedder.pooling = args.get("--pooling");
  request.embedder.normalize = args.get("--normalize");
  // The values' own checks, now (exit 2) rather than once the model has loaded.
  as_usage([&] {
    if (!request.embedder.pooling.empty()) ops::parse_pool_mode(request.embedder.pooling);
    if (!request.embedder.normalize.empty()) ops::parse_normalize_mode(request.embedder.normalize);
  });
  request.embedder.set = set_values(args);
  request.embedder.session.n_threads = threads_value(args);
  request.embedder.session.n_ctx = args.get_int_in("--ctx", 0, exec::kMaxContext);
  cache_type_values(args, &request.embedder.session);
  request.embedder.batch_tokens = args.get_int_in("--batch-tokens", 0, exec::kMaxContext);
  request.input_path = args.get("--input");
  request.input.format = as_usage([&] { return embed::parse_input_format(args.get("--input-format")); });
  request.input.skip_empty = args.has("--skip-empty");
  request.format = as_usage([&] { return embed::parse_output_format(args.get("--format")); });
  request.output_path = args.get("--output");
  request.similarity = args.has("--similarity");
  request.batch_size = args.get_int_in("--batch-size", 1, INT64_MAX);
  const std::string progress = args.get("--progress");
  if (progress == "auto") request.progress = embed::ProgressMode::kAuto;
  else if (progress == "bar") request.progress = embed::ProgressMode::kBar;
  else if (progress == "summary") request.progress = embed::ProgressMode::kSummary;
  else throw usage_error("--progress: expected auto, bar or summary, found '", progress, "'");
  request.verbose = args.has("--verbose");
  if (args.has("--truncate") && args.has("--no-truncate"))
    throw usage_error("expected one of --truncate and --no-truncate, found both");
  request.truncate = !args.has("--no-truncate");

  plugins::SelectOptions kernel_options;
  kernel_options.forced = args.get("--kernels");
  const plugins::SelectedKernels& kernels = plugins::select_kernels(kernel_options);
  embed::run_embed(request, *kernels.table, stdout, stderr);
  return 0;
}

}  // namespace gguflow::cli
