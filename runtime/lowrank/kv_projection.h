// The `.kvproj.gguf` side file: per layer, a low-rank basis and a mean for the cached keys and
// for the cached values, written by `gguflow kv calibrate` and read by the low-rank decode graph
// (graphs/decode-lowrank-kv.yaml binds its tensors as weights).
//
// Layout of one layer's K (V the same with `v`), d = n_head_kv * head_dim (the cache row):
//   blk.{i}.kv_proj_k.basis  F32 [d, r]  r rows of d values: row j is basis vector j (unit length)
//   blk.{i}.kv_proj_k.mean   F32 [d]     the mean the basis is centred on
// With granularity `head` each KV head g has its own basis of rank r_g over its own head_dim
// slice; the layer tensor stacks them block-diagonally (head 0's rows first, zero outside the
// head's slice), r = sum r_g. The ranks are also metadata (kvproj.k_ranks: n_layer entries, or
// n_layer * n_head_kv for `head`) so a reader can check the blocks.
//
// Keys are fitted after RoPE (as attention caches them; graphs/decode-lowrank-kv.yaml) or
// before it (`--keys pre-rope`; graphs/decode-lowrank-kv-prerope.yaml, which rotates the keys
// it rebuilds). kvproj.keys records which; pre-rope key tensors are named
// blk.{i}.kv_proj_k_pre.{basis,mean}, so that a file given to the other graph fails to bind
// (a missing tensor) instead of running with keys on the wrong side of the rotation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/gguf/gguf_file.h"

namespace gguflow::lowrank {

enum class Granularity { kLayer, kHead };
const char* granularity_name(Granularity g);         // "layer", "head"
Granularity parse_granularity(const std::string& s);  // throws for anything else

// One layer's basis for K or V.
struct LayerBasis {
  std::vector<int64_t> ranks;  // one per group: [1] (layer) or [n_head_kv] (head)
  std::vector<float> basis;    // [rank()][dim]: row j = basis vector j over the whole cache row
  std::vector<float> mean;     // [dim]
  int64_t rank() const;        // sum of ranks = rows of `basis`
};

enum class KeyPosition { kPostRope, kPreRope };
const char* key_position_name(KeyPosition k);          // "post-rope", "pre-rope"
KeyPosition parse_key_position(const std::string& s);  // throws for anything else
// The shipped graph that runs `model` with a projection of keys at `k`: its family's generate
// graph with "-lowrank-kv" (post-RoPE) or "-lowrank-kv-prerope" before ".yaml", beside it
// (decode.yaml: decode-lowrank-kv.yaml; qwen3.yaml: qwen3-lowrank-kv.yaml). A family without
// one is an error naming the file it would be, so that nothing runs the model through a graph
// of another family (which would leave its own tensors, such as qwen3's q/k norms, unread).
std::string projected_graph_path(const GgufFile& model, KeyPosition k);

struct KvProjection {
  // Source model, checked against the model a projection is used with.
  std::string model_name;          // general.name of the model ("" when it has none)
  std::string model_file;          // its file name (information only)
  std::string model_architecture;  // general.architecture
  int64_t n_layer = 0, n_head_kv = 0, head_dim = 0;
  // Settings it was made with.
  Granularity granularity = Granularity::kLayer;
  KeyPosition keys = KeyPosition::kPostRope;  // where the keys were taken
  double energy_threshold = 0;  // > 0 when ranks came from an energy threshold
  int64_t uniform_rank = 0;     // > 0 when one rank was given for every group
  int64_t max_rank = 0;         // cap on a group's rank (0: none)
  std::string calibration_text;    // file name of the calibration text
  int64_t calibration_tokens = 0;
  std::vector<LayerBasis> k, v;  // [n_layer]

  int64_t dim() const { return n_head_kv * head_dim; }  // cache row of one layer
  int64_t groups() const { return granularity == Granularity::kHead ? n_head_kv : 1; }
  // Floats cached per token over all layers: full = 2 * n_layer * dim(); projected = sum of ranks.
  int64_t full_floats_per_token() const { return 2 * n_layer * dim(); }
  int64_t projected_floats_per_token() const;
};

// Tensor names of layer `layer` (the graph YAML spells the same pattern); `keys` only changes
// the K names.
std::string basis_tensor_name(int64_t layer, char kv, KeyPosition keys);  // "blk.3.kv_proj_k.basis"
std::string mean_tensor_name(int64_t layer, char kv, KeyPosition keys);   // "blk.3.kv_proj_k_pre.mean"

// Writes `p` (checks its own consistency first: a broken projection is an invariant failure).
void write_kv_projection(const KvProjection& p, const std::string& path);

// Reads and validates a side file: keys present with the right types, tensor shapes agree with
// the ranks, head blocks are block-diagonal. Throws gguflow::Error naming the file, the key or
// tensor, what was expected and what was found.
KvProjection read_kv_projection(const GgufFile& file);
KvProjection read_kv_projection(const std::string& path);

// Throws gguflow::Error (naming both files, the quantity, expected and found) when the
// projection was made for another model: different general.name, architecture, block count,
// KV heads or head size.
void check_projection_matches_model(const KvProjection& p, const std::string& projection_path,
                                    const GgufFile& model);

}  // namespace gguflow::lowrank
