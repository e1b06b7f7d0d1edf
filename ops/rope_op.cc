// The rope op: rotary position embedding of every head of x at the step's positions.
#include "ops/rope_op.h"

#include <cstring>

#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

constexpr Choice<RopePairing> kPairings[] = {{"normal", RopePairing::kNormal},
                                            {"neox", RopePairing::kNeox}};

}  // namespace

const AttrList<RopeAttrs>& rope_attr_list() {
  static const AttrList<RopeAttrs> list =
      AttrList<RopeAttrs>()
          .required("head_dim", &RopeAttrs::head_dim, "values per head")
          .required("n_rot", &RopeAttrs::n_rot, "rotated values per head")
          .optional("base", &RopeAttrs::base, 10000.0, "frequency base")
          .choice("mode", &RopeAttrs::pairing, kPairings, RopePairing::kNormal,
                  "pairing: normal (llama) or neox (qwen2)");
  return list;
}

std::string check_rope_attrs(const ShapeQuery& q, const RopeAttrs& a, size_t freq_factors_slot) {
  if (!(a.base > 0))  // the frequencies are base^(-2i/n_rot): a base <= 0 gives nan
    return "expected base > 0, found " + std::to_string(a.base);
  if (a.n_rot <= 0 || a.n_rot > a.head_dim || a.n_rot % 2 != 0)
    return "expected n_rot to be even and in 2.." + std::to_string(a.head_dim) +
           " (head_dim), found " + std::to_string(a.n_rot);
  if (q.weights.size() > freq_factors_slot && q.weights[freq_factors_slot]) {
    const Shape& f = *q.weights[freq_factors_slot];
    if (f.rank() != 1 || f[0] != a.n_rot / 2)
      return "expected freq_factors of shape [" + std::to_string(a.n_rot / 2) + "] (n_rot / 2, n_rot " +
             std::to_string(a.n_rot) + "), found " + shape_of(q, true, freq_factors_slot);
  }
  return "";
}

namespace {

enum : size_t { kX = 0, kPositions = 1 };  // inputs
enum : size_t { kFreqFactors = 0 };         // weights

std::string rope_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kPositions, 1));
  const RopeAttrs a = rope_attr_list().parse(*q.attrs);
  const Shape& x = *q.inputs[kX];
  if (a.head_dim <= 0 || x[0] % a.head_dim != 0)
    return "expected head_dim (" + std::to_string(a.head_dim) +
           ") to divide the input's ne0, found " + shape_of(q, false, kX);
  GGUFLOW_SHAPE_TRY(check_rope_attrs(q, a, kFreqFactors));
  if ((*q.inputs[kPositions])[0] != x[1])
    return "expected one position per input row, found " + shape_of(q, false, kX) + " and " +
           shape_of(q, false, kPositions);
  out->push_back(x);
  return "";
}

BoundOp bind_rope(Binder& b) {
  const RopeAttrs a = rope_attr_list().parse(b.attrs());
  const int64_t head_dim = a.head_dim, n_rot = a.n_rot;
  const float base = static_cast<float>(a.base);
  const RopePairing pairing = a.pairing;
  const int64_t row = row_length(*b.input_shape(kX));
  const int64_t n_heads = row / head_dim;
  const float* factors = b.f32_weight(kFreqFactors);  // nullptr when absent
  const GguflowKernels& k = b.kernels();
  return {{sizeof(float) * static_cast<size_t>(n_rot * b.max_tokens())},  // cos, sin per token
          [&k, head_dim, n_rot, base, factors, pairing, row, n_heads](const StepView& s,
                                                                      const NodeIo& io) {
            const int32_t* pos = at<const int32_t>(s, io.inputs[kPositions]);
            float* cos_sin = at<float>(s, io.scratch[0]);
            float* y = at<float>(s, io.outputs[0]);
            rope_cos_sin(pos, s.n_tokens, n_rot, base, cos_sin, factors);
            std::memcpy(y, at<const float>(s, io.inputs[kX]), sizeof(float) * row * s.n_tokens);
            rope(k, y, s.n_tokens, n_heads, head_dim, n_rot, cos_sin, pairing);
          }};
}

}  // namespace

const OpSchema& rope_op() {
  static const OpSchema op{
      "rope", OpKind::kPosition,
      "rotary position embedding per head; normal pairs (2i, 2i+1), neox pairs (i, i+n_rot/2)",
      {{"x", false, DType::kF32, "[head_dim * heads, T]"},
       {"positions", false, DType::kI32, "[T]", Feed::kPositions}},
      {{"freq_factors", true,
        "[n_rot/2]: theta_i is divided by factor i (Llama 3.x rope_freqs.weight)"}},
      rope_attr_list().specs(),
      {{"out", DType::kF32}},
      "x [head_dim * heads, T], positions [T], freq_factors? [n_rot/2] -> [head_dim * heads, T]",
      rope_shape, bind_rope, {}};
  return op;
}

}  // namespace gguflow::ops
