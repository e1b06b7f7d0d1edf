// The low-rank attention ops' graph-facing rules, shared by kv_project (keys after RoPE) and
// kv_project_rope (keys before RoPE): weight slots, the shape rule, the state check and the
// checks every bind makes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/attention_op.h"
#include "ops/kv_project.h"
#include "ops/op_binder.h"

namespace gguflow::ops {

enum : size_t { kKBasis = 0, kKMean = 1, kVBasis = 2, kVMean = 3 };  // weight slots

// The four weight slots as both ops declare them.
std::vector<WeightSpec> low_rank_weights();

// Attention's checks, then each basis [kv_row, r] with 1 <= r <= kv_row and each mean [kv_row].
std::string kv_project_shape(const ShapeQuery& q, std::vector<Shape>* out);

// The state must fit the node as for attention; its rows are the bases' ranks (their ne1), f32.
std::string check_low_rank_state(const ShapeQuery& node, const Attrs& state, KvLayout* layout);

// What both binds read once: plain causal attention attributes (others are refused), F32 bases
// and an f32 cache (clear errors naming the node and `op` otherwise).
struct LowRankBinding {
  AttentionShape shape;
  std::shared_ptr<const LowRankBasis> k, v;
  KvCacheView cache;
};
LowRankBinding bind_low_rank(Binder& b, const char* op);

// The first part of both ops' step: checks that the step holds the one sequence the op keeps
// (the session refuses slots and ragged steps for these ops), then appends the new tokens'
// coordinates to the cache. Returns the step's positions [T]; centred: kv_row floats of scratch.
const int32_t* store_low_rank_step(const LowRankBinding& lr, const StepView& s, const NodeIo& io,
                                   float* centred);

}  // namespace gguflow::ops
