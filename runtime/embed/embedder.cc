#include "runtime/embed/embedder.h"

#include <algorithm>
#include <limits>

#include "ops/normalize.h"
#include "ops/pool.h"
#include "ops/error.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"

namespace gguflow::embed {
namespace {

std::shared_ptr<const graph::Graph> load_embed_graph(std::shared_ptr<const GgufFile> model,
                                                     const EmbedderOptions& options) {
  graph::LoadOptions load;
  load.job = graph::Job::kEmbed;
  // Checked here so that a typo is named as the option, not as a graph attribute.
  if (!options.pooling.empty()) {
    ops::parse_pool_mode(options.pooling);
    load.set.emplace_back("pooling", options.pooling);
  }
  if (!options.normalize.empty()) {
    ops::parse_normalize_mode(options.normalize);
    load.set.emplace_back("normalize", options.normalize);
  }
  load.set.insert(load.set.end(), options.set.begin(), options.set.end());
  const std::string path =
      options.graph_path.empty() ? graph::default_graph_path(*model, graph::Job::kEmbed) : options.graph_path;
  return std::make_shared<const graph::Graph>(graph::load_graph(path, std::move(model), load));
}

std::string string_param(const graph::Graph& g, std::string_view name) {
  const graph::Param* p = g.find_param(name);
  if (!p) return "";
  return ops::attr_to_string(p->value);
}

}  // namespace

Embedder::Embedder(std::shared_ptr<const GgufFile> model, const EmbedderOptions& options,
                   const GguflowKernels& kernels)
    : graph_(load_embed_graph(model, options)), tokenizer_(Tokenizer::from_gguf(*model)) {
  const ops::Shape& out = graph_->tensors[graph_->outputs[0]].shape;
  per_token_ = std::find(out.dims.begin(), out.dims.end(), ops::kTokenDim) != out.dims.end();
  exec::SessionOptions session = options.session;
  // One text is one graph step whatever its length (the session caps the batch at the context):
  // an encoder's bidirectional attention over two steps would hide the second step's tokens
  // from the first's. A pooled graph already runs as one step; per-token output (pooling none)
  // would otherwise be cut into batches.
  if (per_token_) session.max_batch = std::numeric_limits<int64_t>::max();
  if (options.batch_tokens > 0) {
    // Several texts per step (each still whole): the budget is the step's size; a text's
    // tokens never span steps.
    batch_tokens_ = options.batch_tokens;
    session.max_batch = options.batch_tokens;
    session.max_sequences = options.batch_tokens;
  }
  session_ = std::make_unique<exec::Session>(graph_, kernels, session);
  dim_ = session_->output_width();
  pooling_ = string_param(*graph_, "pooling");
  normalize_ = string_param(*graph_, "normalize");
}

std::vector<int32_t> Embedder::tokenize(std::string_view text) const {
  return tokenizer_.encode(text);
}

void Embedder::fit_to_context(std::vector<int32_t>& tokens, Embedding& e) const {
  GGUFLOW_CHECK(!tokens.empty());
  e.n_tokens_input = static_cast<int64_t>(tokens.size());
  e.n_tokens = std::min(e.n_tokens_input, max_tokens());
  // A WordPiece text ends with the [SEP] the tokenizer appended: a cut text keeps it as its last
  // token, as an encoder was trained to see ([CLS] ... [SEP]).
  const TokenId sep = tokenizer_.vocab().separator();
  const bool keep_sep = e.truncated() && tokenizer_.vocab().kind() == VocabKind::kWordPiece &&
                        sep != kNoToken && tokens.back() == sep && e.n_tokens >= 2;
  tokens.resize(static_cast<size_t>(e.n_tokens));
  if (keep_sep) tokens.back() = sep;
}

Embedding Embedder::embed_tokens(std::vector<int32_t> tokens) {
  Embedding e;
  fit_to_context(tokens, e);
  session_->reset();  // a fresh sequence: positions from 0, no earlier text in the cache
  if (per_token_) {
    session_->prefill(tokens, &e.values);
  } else {
    std::span<const float> row = session_->prefill(tokens);
    e.values.assign(row.begin(), row.end());
  }
  e.n_rows = static_cast<int64_t>(e.values.size()) / dim_;
  GGUFLOW_CHECK(e.n_rows * dim_ == static_cast<int64_t>(e.values.size()));
  return e;
}

std::vector<Embedding> Embedder::embed_batch(std::vector<std::vector<int32_t>> texts) {
  std::vector<Embedding> result(texts.size());
  if (batch_tokens_ <= 0) {
    for (size_t i = 0; i < texts.size(); ++i) result[i] = embed_tokens(std::move(texts[i]));
    return result;
  }
  for (size_t i = 0; i < texts.size(); ++i) fit_to_context(texts[i], result[i]);
  // Greedy packing in order: a step takes texts while they fit in the budget (at least the
  // context, so every cut text fits in a step of its own).
  std::vector<float> outputs;
  for (size_t first = 0; first < texts.size();) {
    size_t last = first;
    int64_t tokens = 0;
    while (last < texts.size() &&
           (last == first || tokens + static_cast<int64_t>(texts[last].size()) <= session_->max_batch()) &&
           static_cast<int64_t>(last - first) < session_->max_sequences()) {
      tokens += static_cast<int64_t>(texts[last].size());
      ++last;
    }
    std::vector<std::span<const int32_t>> step(texts.begin() + static_cast<std::ptrdiff_t>(first),
                                               texts.begin() + static_cast<std::ptrdiff_t>(last));
    outputs.clear();
    session_->evaluate_sequences(step, outputs);
    size_t at = 0;
    for (size_t i = first; i < last; ++i) {
      const size_t rows = per_token_ ? texts[i].size() : 1;
      const size_t floats = rows * static_cast<size_t>(dim_);
      result[i].values.assign(outputs.begin() + static_cast<std::ptrdiff_t>(at),
                              outputs.begin() + static_cast<std::ptrdiff_t>(at + floats));
      result[i].n_rows = static_cast<int64_t>(rows);
      at += floats;
    }
    first = last;
  }
  return result;
}

}  // namespace gguflow::embed
