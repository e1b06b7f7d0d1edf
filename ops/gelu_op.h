// The gelu op's attributes, shared with gelu_mul: one `approx` enum, one Choice table.
#pragma once

#include "ops/gelu.h"
#include "ops/op_attrs.h"

namespace gguflow::ops {

struct GeluAttrs {
  GeluApprox approx = GeluApprox::kTanh;
};
const AttrList<GeluAttrs>& gelu_attr_list();

}  // namespace gguflow::ops
