// Text -> vector with an embedding graph (graphs/embed.yaml: decode.yaml without the lm-head,
// plus pool + normalize; graphs/bert.yaml and nomic-bert.yaml for encoders). One Embedder holds one bound graph, one Session (one executor, one
// arena, one KV cache) and the model's tokenizer; every text reuses them, with the sequence
// reset in between so no text sees another's keys and values.
//
//   Embedder e(GgufFile::open("m.gguf"), {.pooling = "mean"}, kernels);
//   Embedding v = e.embed("Once upon a time");   // v.values: [v.n_rows][e.dim()]
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/graph.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::embed {

struct EmbedderOptions {
  std::string graph_path;  // "" = the shipped embed graph for the model's architecture
  // The graph params `pooling` (mean|sum|last|first|cls|none) and `normalize` (l2|none);
  // "" keeps the graph's default (pooling: {arch}.pooling_type, else mean; normalize: l2).
  std::string pooling;
  std::string normalize;
  std::vector<std::pair<std::string, std::string>> set;  // further --set name=value
  exec::SessionOptions session;                          // threads, context
  // Token budget of one graph step holding several texts (embed_batch); 0: one text per step.
  int64_t batch_tokens = 0;
};

struct Embedding {
  int64_t n_tokens = 0;         // tokens evaluated (after truncation), BOS included
  int64_t n_tokens_input = 0;   // tokens the text made before truncation
  int64_t n_rows = 0;           // 1, or n_tokens when the graph keeps every token (pooling none)
  std::vector<float> values;    // [n_rows][dim], row-major

  bool truncated() const { return n_tokens < n_tokens_input; }
};

class Embedder {
 public:
  // Loads and binds the graph (with pooling/normalize as params) and builds the session.
  // Throws gguflow::Error for a bad graph, param value, model or kernel table.
  Embedder(std::shared_ptr<const GgufFile> model, const EmbedderOptions& options,
           const GguflowKernels& kernels);

  int64_t dim() const { return dim_; }                 // floats per output row
  bool per_token() const { return per_token_; }        // one row per token (pooling none)
  const std::string& pooling() const { return pooling_; }      // as bound ("" if not a param)
  const std::string& normalize() const { return normalize_; }  // as bound ("" if not a param)
  int64_t max_tokens() const { return session_->n_ctx(); }     // longer texts are truncated
  const graph::Graph& graph() const { return *graph_; }
  const exec::Session& session() const { return *session_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }

  // Token ids of `text` as the model's tokenizer makes them (BOS/EOS as the vocabulary says).
  std::vector<int32_t> tokenize(std::string_view text) const;
  // Evaluates the first max_tokens() ids as one fresh sequence (a WordPiece text cut there keeps
  // its final [SEP]). `tokens` must not be empty.
  Embedding embed_tokens(std::vector<int32_t> tokens);
  Embedding embed(std::string_view text) { return embed_tokens(tokenize(text)); }
  // Several texts' ids in as few graph steps as the batch budget allows (texts in order, each
  // cut as embed_tokens cuts it); bit for bit what embed_tokens gives each of them alone.
  std::vector<Embedding> embed_batch(std::vector<std::vector<int32_t>> texts);
  int64_t batch_tokens() const { return batch_tokens_; }  // 0: one text per step
  // Packs the session's weights now (Session::pack_weights: the same bits on x86, where the
  // packed types have panels). Worth it before many steps: one short text per step otherwise
  // packs every weight panel again in every product (~30 % of embedding 2,000 sentences one at
  // a time with bge-small); not for one text (a pass over the weights it never recovers). With
  // the shipped plugins packing cannot change a vector: on x86 row-major and packed weights share
  // the panel kernels' bits, and elsewhere nothing packs. A plugin whose packed products round
  // differently would make a text's vector depend on whether it came alone.
  void pack_weights() { session_->pack_weights(); }

 private:
  std::shared_ptr<const graph::Graph> graph_;
  std::unique_ptr<exec::Session> session_;
  Tokenizer tokenizer_;
  int64_t dim_ = 0;
  bool per_token_ = false;
  std::string pooling_, normalize_;
  int64_t batch_tokens_ = 0;

  // Cuts `tokens` to max_tokens() (keeping a WordPiece [SEP] last) and fills e's counts.
  void fit_to_context(std::vector<int32_t>& tokens, Embedding& e) const;
};

}  // namespace gguflow::embed
