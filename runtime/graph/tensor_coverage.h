// Does a graph read the whole model? A model holding tensors that no node reads is one the graph
// does not implement: a qwen3 model run through the llama graph would skip its Q/K norms and
// still produce plausible-looking text. Checked on every load (load.cc), so no command can run
// a model on a graph that ignores part of it.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph/graph.h"

namespace gguflow::graph {

// True when `name` matches `pattern`: equal, or with each '*' standing for any run of characters
// (dots included: "blk.*.attn_q_norm.weight" covers every layer).
bool matches_pattern(std::string_view pattern, std::string_view name);

// The model's tensors (in file order) that no node of `g` binds as a weight from the model file
// and that `g.unused` does not list. Tensors only measured by a `dim(...)` param do not count as
// read; weights bound from side files (LoadOptions::weight_files) are not the model's.
std::vector<std::string> unread_tensors(const Graph& g);

// Throws gguflow::Error naming up to ten unread tensors, the graph, what it implements and the
// model's architecture. A model without tensors (tokenizer-only GGUF) passes.
void check_reads_model(const Graph& g);

// Throws gguflow::Error when the graph lists `architectures:` and the model's
// general.architecture is not among them (a model without one is left to the graph's params).
// Checked after check_reads_model: Gemma 1 and Granite files have llama's tensor names, so only
// the family tells them apart, and llama's graph would run them without their embedding scale,
// GELU or multipliers.
void check_implements_architecture(const Graph& g);

// The same for metadata that changes the forward pass of every family alike and that no shipped
// graph computes: rope scaling (`{arch}.rope.scaling.type` other than none, a
// `{arch}.rope.scaling.factor` or `{arch}.rope.scale_linear` other than 0 and 1, unless the type
// is none). A model that declares it is refused unless the graph reads the key in a param or an
// attribute (`metadata_read`, "{arch}" expanded): a Qwen2.5 file with YaRN ran with plain rope,
// byte for byte as without it. (Gemma 3 4B and larger declare linear scaling of 8, which
// gemma3.yaml does not compute: refused.)
void check_reads_forward_metadata(const GgufFile& model, const std::set<std::string>& metadata_read,
                                  const std::string& graph_file);

}  // namespace gguflow::graph
