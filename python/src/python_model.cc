#include "python/src/python_model.h"

#include "ops/error.h"
#include "runtime/graph/load.h"
#include "runtime/runner/generator.h"
#include "runtime/sampling/sampler.h"

namespace gguflow::python {
namespace {

// `gguflow embed`'s --batch-tokens default: the same steps give the same bits either way, and
// this many tokens per step keeps a batch of short texts in a few graph steps.
constexpr int64_t kEmbedBatchTokens = 4096;

}  // namespace

std::vector<std::filesystem::path> plugin_search_dirs() {
  std::vector<std::filesystem::path> dirs{GGUFLOW_PLUGIN_DIR};
  for (auto& d : plugins::default_search_dirs()) dirs.push_back(std::move(d));
  return dirs;
}

PythonModel::PythonModel(const ModelOptions& options)
    : options_(options),
      file_(GgufFile::open(options.path)),
      tokenizer_(Tokenizer::from_gguf(*file_)) {
  plugins::SelectOptions select;
  select.forced = options.kernels;
  select.search_dirs = plugin_search_dirs();
  kernels_ = &plugins::select_kernels(select);
  // A graph the caller named is bound now, so that a bad one fails here rather than at the
  // first generate(); the shipped one waits (an encoder has none, and may only embed).
  if (!options.graph.empty()) generation();
}

std::vector<TokenId> PythonModel::tokenize(std::string_view text, bool add_special,
                                           bool parse_special) const {
  EncodeOptions encode;
  encode.add_special = add_special;
  encode.parse_special = parse_special;
  return tokenizer_.encode(text, encode);
}

std::string PythonModel::detokenize(const std::vector<TokenId>& ids) const {
  for (TokenId id : ids)
    if (id < 0 || id >= static_cast<TokenId>(tokenizer_.vocab_size()))
      throw error("detokenize: expected token ids in [0, ", tokenizer_.vocab_size(), "), found ", id);
  return tokenizer_.decode(ids);
}

PythonModel::Generation& PythonModel::generation() {
  if (generation_) return *generation_;
  auto g = std::make_unique<Generation>();
  g->graph = runner::load_generation_graph(file_, options_.graph, graph::LoadOptions{});
  exec::SessionOptions session;
  session.n_threads = options_.threads;
  session.n_ctx = options_.ctx;
  g->session = std::make_unique<exec::Session>(g->graph.graph, *kernels_->table, session);
  runner::check_logits_output(g->graph, *g->session, tokenizer_.vocab_size());
  generation_ = std::move(g);
  return *generation_;
}

std::string PythonModel::generate(std::string_view prompt, const GenerateRequest& request,
                                  const std::function<void(std::string_view)>& on_text) {
  Generation& g = generation();
  sampling::SamplerConfig config = runner::apply_overrides(g.graph.sampler, request.sampling);
  if (!request.sampling.seed && !g.graph.sets_seed) config.seed = sampling::draw_seed();
  sampling::Sampler sampler(config);

  // As `gguflow run` does: the prompt with BOS as the vocabulary says; an empty one is BOS alone.
  std::vector<TokenId> ids = tokenize(prompt, true, request.parse_special);
  if (ids.empty()) {
    if (tokenizer_.vocab().bos() == kNoToken)
      throw error("prompt: expected text or a model with a BOS token to start from, found an "
                  "empty prompt and no BOS in ", options_.path);
    ids.push_back(tokenizer_.vocab().bos());
  }
  g.session->reset();
  runner::Generator generator(*g.session, tokenizer_, sampler);
  runner::GenerateOptions options;
  options.n_predict = request.n_predict;
  return generator.generate(ids, options, on_text).text;
}

std::vector<float> PythonModel::logits(const std::vector<TokenId>& ids, int64_t* n_vocab) {
  Generation& g = generation();
  if (ids.empty()) throw error("logits: expected at least one token id, found none");
  g.session->reset();
  std::vector<float> all;
  g.session->prefill(ids, &all);
  *n_vocab = g.session->output_width();
  return all;
}

EmbedResult PythonModel::embed(const std::vector<std::string>& texts, const EmbedRequest& request) {
  if (request.pooling == "none")
    throw error("embed: pooling 'none' gives one row per token; expected mean, sum, last, first "
                "or cls here (`gguflow embed --pooling none` writes per-token vectors)");
  std::unique_ptr<embed::Embedder>& embedder = embedders_[{request.pooling, request.normalize}];
  if (!embedder) {
    embed::EmbedderOptions options;
    options.pooling = request.pooling;
    options.normalize = request.normalize;
    options.session.n_threads = options_.threads;
    options.session.n_ctx = options_.ctx;
    options.batch_tokens = kEmbedBatchTokens;
    embedder = std::make_unique<embed::Embedder>(file_, options, *kernels_->table);
  }
  std::vector<std::vector<int32_t>> batch;
  batch.reserve(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    batch.push_back(embedder->tokenize(texts[i]));
    if (batch.back().empty())
      throw error("embed: text ", i, ": expected the text to make at least one token, found none");
  }
  EmbedResult result;
  result.dim = embedder->dim();
  result.values.reserve(texts.size() * static_cast<size_t>(result.dim));
  for (const embed::Embedding& e : embedder->embed_batch(std::move(batch)))
    result.values.insert(result.values.end(), e.values.begin(), e.values.end());
  return result;
}

}  // namespace gguflow::python
