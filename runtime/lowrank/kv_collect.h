// Collecting cached keys and values: a model run over text through its default generate graph
// (graph_choice.h; graphs/decode.yaml for llama, qwen2 and mistral), each layer's KV cache
// (post-rope keys, as attention sees them, and values) read back after every prefill chunk and
// accumulated per layer (or per KV head) into PCA statistics. Keys before RoPE are the cached
// ones rotated back: row p turned by -theta at position p, with the attributes of the rope node
// that rotated them (so exactly the model's rotation, undone to float rounding).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "plugins/abi/kernel_abi.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/lowrank/kv_projection.h"
#include "runtime/lowrank/pca.h"

namespace gguflow::lowrank {

// A model opened for a study, with the kernels and threads to run it.
struct StudyModel {
  std::string path;
  std::shared_ptr<const GgufFile> file;
  const GguflowKernels* kernels = nullptr;
  int n_threads = 0;  // 0: every core
  int64_t n_layer = 0, n_head_kv = 0, head_dim = 0;
  std::string name;  // general.name ("" when absent)
  bool quiet = false;  // no progress lines (report)

  static StudyModel open(const std::string& path, const GguflowKernels& kernels, int n_threads);
};

// One progress line on stderr, "gguflow kv: <line>", unless m.quiet: a study runs the model over
// its texts many times (a sweep of 15 caches over 2,000 tokens of a 0.6 B model takes tens of
// minutes on two cores) and the user should see which run it is in and how long each took.
void report(const StudyModel& m, const std::string& line);

// Reads a UTF-8 text file and tokenizes it with the model's tokenizer (BOS as the model wants).
// Throws naming the file when it cannot be read or is empty.
std::vector<int32_t> tokenize_text_file(const StudyModel& m, const std::string& path);

// Per layer (and group: the layer, or each KV head), statistics of K and of V.
struct KvSamples {
  Granularity granularity = Granularity::kLayer;
  KeyPosition keys = KeyPosition::kPostRope;
  int64_t n_layer = 0, groups = 0, group_dim = 0;
  int64_t tokens = 0;                   // vectors seen per group
  std::vector<CovarianceAccumulator> k;  // [n_layer * groups], index layer * groups + group
  std::vector<CovarianceAccumulator> v;
};

// Runs `tokens` in chunks of `ctx` tokens (0: all at once; the cache restarts per chunk) and
// accumulates every cached key/value row, keys after or before RoPE.
KvSamples collect_kv(const StudyModel& m, std::span<const int32_t> tokens, int64_t ctx,
                     Granularity granularity, KeyPosition keys = KeyPosition::kPostRope);

// The minimum vectors per group PCA accepts: twice the dimension, so the covariance is
// estimated from more samples than it has degrees of freedom per row.
int64_t min_samples_for(int64_t dim);

}  // namespace gguflow::lowrank
