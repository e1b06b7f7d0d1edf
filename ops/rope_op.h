// The rope op's graph-facing rules, shared with ops that rotate keys themselves
// (kv_project_rope rotates keys it rebuilds from a low-rank cache): typed attributes and
// their checks.
#pragma once

#include <string>

#include "ops/op_attrs.h"
#include "ops/rope.h"

namespace gguflow::ops {

struct RopeAttrs {
  int64_t head_dim = 0;
  int64_t n_rot = 0;
  double base = 0;
  RopePairing pairing = RopePairing::kNormal;
};
// head_dim, n_rot, base, mode.
const AttrList<RopeAttrs>& rope_attr_list();

// n_rot even in 2..head_dim, and the optional weight at `freq_factors_slot`, when bound,
// [n_rot / 2]. "" or what was expected and found.
std::string check_rope_attrs(const ShapeQuery& q, const RopeAttrs& a, size_t freq_factors_slot);

}  // namespace gguflow::ops
