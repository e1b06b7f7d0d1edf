// The attention op's graph-facing rules, shared with the ops that attend over a cache of their
// own layout (kv_project): typed attributes, the shape rule and the kv_cache state check.
#pragma once

#include <string>
#include <vector>

#include "ops/attention.h"
#include "ops/op_attrs.h"
#include "ops/op_schema.h"

namespace gguflow::ops {

enum : size_t { kAttnQ = 0, kAttnK = 1, kAttnV = 2, kAttnPositions = 3 };  // input slots

struct AttentionAttrs {
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  std::string cache;  // the kv_cache state the node appends to
  int64_t window = 0;  // sliding window; 0: none
  double softcap = 0;  // score soft-cap; 0: none
  double scale = 0;    // factor of q . k; 0: 1/sqrt(head_dim)
  bool causal = true;  // false: bidirectional over the sequence (encoders)
};
const AttrList<AttentionAttrs>& attention_attr_list();

// The four input slots q, k, v, positions as both ops declare them.
std::vector<InputSpec> attention_inputs();

// q [hd * n_head, T], k, v [hd * n_head_kv, T], positions [T] -> [hd * n_head, T].
std::string attention_shape(const ShapeQuery& q, std::vector<Shape>* out);

// The head geometry of a node whose shapes passed attention_shape.
AttentionShape attention_geometry(const AttentionAttrs& a, const Shape& q);

// The scores' scale, soft-cap and window (attention.h) from the typed attributes.
AttentionScoring attention_scoring(const AttentionAttrs& a);

// The declared state's n_head_kv and head_dim must be the node's; `widths` = full rows.
std::string check_kv_state(const ShapeQuery& node, const Attrs& state, KvLayout* layout);

}  // namespace gguflow::ops
