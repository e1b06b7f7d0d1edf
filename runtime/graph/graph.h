// The expanded graph: the contract between the YAML front end (load, extends, repeat, params,
// binding to a GGUF file, validation) and the executor.
//
// A `Graph` is fully resolved for one model: every node is concrete (repeats expanded, `{i}`
// substituted, optional weights bound or absent), every attribute is a typed value, every
// activation has a shape with the token dimension symbolic, and nodes are in a topological
// order. Nothing here refers to YAML. Tensors are SSA values: re-assigning a name in YAML makes a
// new version, so `x` version 3 is a different tensor from `x` version 2.
//
// Shapes are ne0 first (GGUF order), see ops/op_schema.h: `[n_embd, T]` is T rows of n_embd.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/kv_cache_type.h"
#include "ops/op_registry.h"
#include "ops/op_schema.h"
#include "runtime/gguf/gguf_file.h"

namespace gguflow::graph {

using ops::AttrValue;
using ops::DType;
using ops::kTokenDim;
using ops::Shape;

// A place in a YAML file; line and column are 1-based (0 when unknown).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  std::string to_string() const;  // "graphs/decode.yaml:12:7"
};

// One SSA value.
struct Tensor {
  std::string name;  // as written in YAML: "x"
  int version = 0;   // 0 for the first assignment of `name`, then 1, 2, ...
  Shape shape;       // ne0 first, kTokenDim for T
  DType dtype = DType::kF32;
  int producer = -1;  // index into Graph::nodes, -1 for a graph input
  std::vector<int> consumers;  // node indices reading it, ascending

  std::string id() const;  // "x" for version 0, "x@3" otherwise (unique in the graph)
};

// A node's weight slot bound to a tensor of the model.
struct WeightBinding {
  std::string tensor;            // GGUF tensor name: "blk.0.attn_q.weight"
  uint32_t type = 0;             // GGML type id (plugins/abi/ggml_type.h)
  std::vector<uint64_t> dims;    // ne0 first, as in the GGUF tensor table
  const GgufTensorInfo* info = nullptr;  // into `file` (never null)
  // The file holding it: Graph::model_file, or one of Graph::weight_files (e.g. a --kv-proj
  // side file). Never null in a built graph.
  const GgufFile* file = nullptr;
};

struct Node {
  std::string name;  // unique in the graph: "blk.0.attn_q"
  const ops::OpSchema* schema = nullptr;  // the op (ops/op_registry.h)
  // One entry per schema input slot: a tensor index, or -1 for an absent optional input.
  std::vector<int> inputs;
  // One entry per schema output: tensor indices.
  std::vector<int> outputs;
  // One entry per schema weight slot; nullopt for an optional weight the model lacks.
  std::vector<std::optional<WeightBinding>> weights;
  ops::Attrs attrs;  // every declared attribute (defaults filled), typed
  int state = -1;    // index into Graph::states for ops with a StateRule, else -1
  Location where;    // the YAML node it came from
  std::string group;  // innermost repeat instance, e.g. "blk.3" ("" outside a repeat); pictures

  const std::optional<WeightBinding>& weight(std::string_view slot) const;
  int input(std::string_view slot) const;  // tensor index or -1
};

// Declared side state that persists across steps.
struct State {
  std::string name;   // "kv.0"
  std::string kind;   // "kv_cache"
  // kv_cache: per cached token, n_head_kv vectors of head_dim for K and the same for V.
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  ops::Attrs attrs;   // every attribute as declared (n_head_kv, head_dim, and any others)
  // cache_type_k / cache_type_v as declared (f32, f16, q8_0, q4_0); unset: the session's
  // (SessionOptions::cache_type_k/v, --cache-type-k/-v), else f32. The session's own types,
  // when given, win: a command line overrides a graph.
  std::optional<ops::KvCacheType> cache_type_k, cache_type_v;
  // Floats per cached token in the K and V blocks, as the op writing the state needs them
  // (its StateRule: full rows for attention, ranks for kv_project); full rows without a writer.
  ops::KvLayout layout;
  Location where;
};

// A resolved parameter (from GGUF metadata, a default, or --set).
struct Param {
  std::string name;
  AttrValue value;  // int64, double or string
  std::string source;  // "llama.block_count", "default", "--set", "expression"
};

// Well-known parameters for sizing buffers, copied from the graph's params of the same names
// (graphs/decode.yaml defines them all). -1 / 0 / "" when the graph does not define one.
struct ModelParams {
  std::string arch;        // general.architecture
  int64_t n_layer = -1;
  int64_t n_embd = -1;
  int64_t n_head = -1;
  int64_t n_head_kv = -1;
  int64_t head_dim = -1;
  int64_t n_ff = -1;
  int64_t n_vocab = -1;
  int64_t n_ctx_train = -1;   // {arch}.context_length: the default context, before capping
  int64_t n_rot = -1;
  double rope_base = 0;
  std::string rope_mode;   // "normal" (llama) or "neox" (qwen2)
  double eps = 0;
};

struct Graph {
  std::string name;                 // `graph:` of the top file ("decode")
  std::vector<std::string> files;   // the YAML files it came from, top file first
  std::vector<Node> nodes;          // topological order
  std::vector<Tensor> tensors;
  std::vector<int> inputs;          // tensor indices of the declared inputs, in order
  std::vector<int> outputs;         // tensor indices of the declared outputs, in order
  std::vector<State> states;
  std::vector<Param> params;        // declaration order
  ModelParams model;
  std::shared_ptr<const GgufFile> model_file;  // weights point into it
  // Further files weights were bound from (LoadOptions::weight_files), kept alive with the graph.
  std::vector<std::shared_ptr<const GgufFile>> weight_files;
  // What the graph declares it is for (docs/GRAPH_LANGUAGE.md "Architectures and default graphs").
  std::vector<std::string> architectures;  // general.architecture values it implements
  std::string job;                         // "generate", "embed", or "" (a default for nothing)
  std::vector<std::string> unused;         // model tensors it leaves unread on purpose (names, '*' globs)

  int find_node(std::string_view name) const;    // -1 when absent
  int find_state(std::string_view name) const;   // -1 when absent
  // The latest version of `name`, or -1.
  int find_tensor(std::string_view name) const;
  const Param* find_param(std::string_view name) const;
};

}  // namespace gguflow::graph
