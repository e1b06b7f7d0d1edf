// What `gguflow serve` loads once at start: the model file, its tokenizer, the kernel plugin,
// the generation graph and its multi-slot session (when the architecture has a generate graph),
// the chat template (when the model has one) and an embedder (when it has an embed graph).
// An encoder (BERT) serves embeddings only; a decoder serves all three endpoints.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/embed/embedder.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/runner/generation_graph.h"
#include "runtime/tokenizer/chat_template.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::server {

struct ModelOptions {
  std::string model_path;
  std::string alias;        // the id clients name; "" = the file name without .gguf
  std::string graph_path;   // generation graph; "" = the shipped one for the architecture
  std::vector<std::pair<std::string, std::string>> set;  // --set name=value (generation graph)
  std::string kernels;      // "" = $GGUFLOW_KERNELS, else the best plugin
  int n_threads = 0;        // 0: every core
  int64_t n_ctx = 0;        // per slot; 0: min(model, 4096)
  int64_t n_slots = 1;      // --parallel
  // -ctk/-ctv: the KV cache element types of the generation session (unset: the graph's, f32).
  std::optional<ops::KvCacheType> cache_type_k, cache_type_v;
};

class ServedModel {
 public:
  // Throws gguflow::Error when the model loads for neither generation nor embedding (with both
  // reasons), or when --graph was given and does not load.
  explicit ServedModel(const ModelOptions& options);

  const std::string& id() const { return id_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const plugins::SelectedKernels& kernels() const { return *kernels_; }

  // Generation: null session when the model has no generate graph (why_no_generation() says).
  exec::Session* session() { return session_.get(); }
  const std::string& why_no_generation() const { return why_no_generation_; }
  const std::string& graph_path() const { return generation_.path; }
  const sampling::SamplerConfig& sampler_defaults() const { return generation_.sampler; }
  const std::optional<ChatTemplate>& chat_template() const { return chat_template_; }

  // Embedding: null when the model has no embed graph. embed() serializes callers (one session).
  bool can_embed() const { return embedder_ != nullptr; }
  const std::string& why_no_embedding() const { return why_no_embedding_; }
  std::vector<embed::Embedding> embed(std::vector<std::vector<int32_t>> token_lists);
  std::vector<int32_t> embed_tokens(const std::string& text) const;
  int64_t embed_dim() const { return embedder_ ? embedder_->dim() : 0; }
  int64_t embed_max_tokens() const { return embedder_ ? embedder_->max_tokens() : 0; }

 private:
  std::string id_, path_;
  std::shared_ptr<const GgufFile> file_;
  std::unique_ptr<Tokenizer> tokenizer_;
  const plugins::SelectedKernels* kernels_ = nullptr;
  runner::GenerationGraph generation_;
  std::unique_ptr<exec::Session> session_;
  std::string why_no_generation_;
  std::optional<ChatTemplate> chat_template_;
  std::mutex embed_mutex_;
  std::unique_ptr<embed::Embedder> embedder_;
  std::string why_no_embedding_;
};

}  // namespace gguflow::server
