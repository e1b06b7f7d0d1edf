// The state behind `gguflow.Model`: one mapped GGUF file, its tokenizer, the kernel plugin, and
// sessions made when first needed: the generation graph's (generate, logits) and one Embedder per
// (pooling, normalize) pair. Python-free, so the binding file (module.cc) only converts types.
//
//   PythonModel m({.path = "stories260K.gguf"});
//   std::string text = m.generate("Once upon a time", {.n_predict = 32, .sampling = {.temperature = 0}});
//
// Every method is the runtime's own code path: generation is runner::Generator on the graph
// runner::load_generation_graph binds (as `gguflow run`), embedding is embed::Embedder::embed_batch
// (as `gguflow embed`). Not thread-safe: the binding holds a mutex per model around each call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/embed/embedder.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/runner/generation_graph.h"
#include "runtime/runner/sampler_settings.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::python {

struct ModelOptions {
  std::string path;
  std::string graph;    // generation graph; "" = the shipped one for the architecture
  int threads = 0;      // 0: every core
  int64_t ctx = 0;      // 0: min(model context, 4096)
  std::string kernels;  // plugin name; "" = $GGUFLOW_KERNELS, else the best for this CPU
};

struct GenerateRequest {
  int64_t n_predict = -1;               // < 0: until EOS or the context is full
  runner::SamplerOverrides sampling;    // unset fields: the graph's `sampler:` section
  bool parse_special = false;
};

struct EmbedRequest {
  std::string pooling;    // "" = the graph's default
  std::string normalize;  // "l2", "none"; "" = the graph's default (l2)
};

struct EmbedResult {
  int64_t dim = 0;
  std::vector<float> values;  // [texts][dim]
};

class PythonModel {
 public:
  // Opens the file and chooses the kernel plugin (searched in the folder the build put them in,
  // then where the CLI looks); binds options.graph when given. Throws gguflow::Error with the
  // CLI's messages.
  explicit PythonModel(const ModelOptions& options);

  std::vector<TokenId> tokenize(std::string_view text, bool add_special, bool parse_special) const;
  std::string detokenize(const std::vector<TokenId>& ids) const;

  // The continuation of `prompt` (without the prompt), as `gguflow run --no-echo` prints it.
  // `on_text` gets each whole piece as it comes. Each call starts a fresh sequence.
  std::string generate(std::string_view prompt, const GenerateRequest& request,
                       const std::function<void(std::string_view)>& on_text = {});
  // Logits after every id, [ids.size()][n_vocab], one prefill of a fresh sequence.
  std::vector<float> logits(const std::vector<TokenId>& ids, int64_t* n_vocab);
  // One pooled row per text, as `gguflow embed` writes them (texts cut to the context).
  EmbedResult embed(const std::vector<std::string>& texts, const EmbedRequest& request);

  const std::string& path() const { return options_.path; }
  int64_t vocab_size() const { return static_cast<int64_t>(tokenizer_.vocab_size()); }
  const plugins::SelectedKernels& kernels() const { return *kernels_; }

 private:
  struct Generation {
    runner::GenerationGraph graph;
    std::unique_ptr<exec::Session> session;
  };

  ModelOptions options_;
  std::shared_ptr<const GgufFile> file_;
  Tokenizer tokenizer_;
  const plugins::SelectedKernels* kernels_ = nullptr;
  std::unique_ptr<Generation> generation_;  // made at the first generate/logits
  std::map<std::pair<std::string, std::string>, std::unique_ptr<embed::Embedder>> embedders_;

  Generation& generation();
};

// Where the binding looks for kernel plugins: the build's plugin folder first (the module is not
// next to them), then plugins::default_search_dirs().
std::vector<std::filesystem::path> plugin_search_dirs();

}  // namespace gguflow::python
