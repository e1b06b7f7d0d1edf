#include "runtime/server/served_model.h"

#include <filesystem>

#include "ops/error.h"
#include "runtime/graph/graph_choice.h"

namespace gguflow::server {

ServedModel::ServedModel(const ModelOptions& options) : path_(options.model_path) {
  if (path_.empty()) throw error("serve: expected a model (-m FILE or $GGUFLOW_MODEL)");
  file_ = GgufFile::open(path_);
  id_ = options.alias.empty() ? std::filesystem::path(path_).stem().string() : options.alias;
  tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*file_));
  plugins::SelectOptions kernel_options;
  kernel_options.forced = options.kernels;
  kernels_ = &plugins::select_kernels(kernel_options);

  exec::SessionOptions session_options;
  session_options.n_threads = options.n_threads;
  session_options.n_ctx = options.n_ctx;
  session_options.n_slots = options.n_slots;
  session_options.cache_type_k = options.cache_type_k;
  session_options.cache_type_v = options.cache_type_v;
  session_options.pack_weights = true;  // the engine packs before its first step (batch invariance)
  // A model whose architecture has no generation graph (an encoder) serves embeddings only;
  // one that has a graph (given, or shipped for its architecture) must load for generation, so
  // a bad --ctx, --parallel or --set is a startup error, not a server that refuses every
  // completion.
  std::string graph_path = options.graph_path;
  if (graph_path.empty()) {
    try {
      graph_path = graph::default_graph_path(*file_, graph::Job::kGenerate);
    } catch (const Error& e) {
      why_no_generation_ = e.what();
    }
  }
  if (!graph_path.empty()) {
    graph::LoadOptions load;
    load.set = options.set;
    generation_ = runner::load_generation_graph(file_, graph_path, load);
    session_ = std::make_unique<exec::Session>(generation_.graph, *kernels_->table, session_options);
    runner::check_logits_output(generation_, *session_, tokenizer_->vocab_size());
    if (session_->max_batch() < session_->n_slots())
      throw error("--ctx ", session_->n_ctx(), " holds fewer tokens than --parallel ",
                  session_->n_slots(), " (one step feeds a token of every request): raise --ctx");
  }
  if (session_) chat_template_ = ChatTemplate::detect(*file_, tokenizer_->vocab());

  try {
    embed::EmbedderOptions embed_options;
    embed_options.session.n_threads = options.n_threads;
    embed_options.session.n_ctx = options.n_ctx;
    embed_options.batch_tokens = 4096;
    embedder_ = std::make_unique<embed::Embedder>(file_, embed_options, *kernels_->table);
  } catch (const Error& e) {
    why_no_embedding_ = e.what();
  }
  if (!session_ && !embedder_)
    throw error("serve: ", path_, " loads for neither generation (", why_no_generation_,
                ") nor embedding (", why_no_embedding_, ")");
}

std::vector<int32_t> ServedModel::embed_tokens(const std::string& text) const {
  return embedder_->tokenize(text);
}

std::vector<embed::Embedding> ServedModel::embed(std::vector<std::vector<int32_t>> token_lists) {
  std::lock_guard lock(embed_mutex_);
  return embedder_->embed_batch(std::move(token_lists));
}

}  // namespace gguflow::server
