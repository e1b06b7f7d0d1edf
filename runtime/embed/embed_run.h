// The logic of `gguflow embed`: read every text (checked before any model work), embed them in
// batches through one Embedder (one Session, reset between texts), write one record per text in
// input order, flushed per batch, then the optional similarity table and the throughput line.
// runtime/cli/cmd_embed.cc only parses options and picks the kernel plugin.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "plugins/abi/kernel_abi.h"
#include "runtime/embed/embed_input.h"
#include "runtime/embed/embed_writer.h"
#include "runtime/embed/embedder.h"

namespace gguflow::embed {

enum class ProgressMode { kAuto, kBar, kSummary };  // auto: a bar when the log is a terminal

struct EmbedRequest {
  std::string model_path;        // --model
  EmbedderOptions embedder;      // --graph, --pooling, --normalize, --set, --threads, --ctx
  std::string input_path = "-";  // --input ("-" = stdin)
  InputOptions input;            // --input-format, --skip-empty
  OutputFormat format = OutputFormat::kJsonl;  // --format
  // -o: "" = stdout. With --similarity and no -o, only the table goes to stdout.
  std::string output_path;
  bool similarity = false;       // --similarity
  int64_t batch_size = 128;      // --batch-size: texts per batch (one flush, one progress step)
  ProgressMode progress = ProgressMode::kAuto;
  bool verbose = false;          // --verbose: graph and session sizes
  // --truncate (default): a text longer than the context is cut to it with a warning naming the
  // line; --no-truncate: such a text is an error naming the line.
  bool truncate = true;
};

struct EmbedSummary {
  int64_t texts = 0;       // embedded
  int64_t tokens = 0;      // evaluated (after truncation)
  int64_t truncated = 0;   // texts cut to the context
  int64_t skipped_empty = 0;
  double seconds = 0;      // embedding time (model load and input reading excluded)
};

// Throws gguflow::Error for bad input (model, graph, input file with line numbers, options).
// Warnings (truncation) and progress go to `log`.
EmbedSummary run_embed(const EmbedRequest& request, const GguflowKernels& kernels, FILE* out,
                       FILE* log);

}  // namespace gguflow::embed
