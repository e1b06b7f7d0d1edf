// The kv_project_rope op: attention over a low-rank cache of keys before RoPE
// (ops/kv_project_rope.h). Its node takes the keys before the rope node would rotate them, the
// bases of a `gguflow kv calibrate --keys pre-rope` side file, and the rope attributes of the
// model, since it rotates the keys it rebuilds; values as kv_project.
#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "ops/error.h"
#include "ops/kv_project_op.h"
#include "ops/kv_project_rope.h"
#include "ops/rope_op.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kFreqFactors = 4 };  // weight slot after the four low-rank ones

std::vector<WeightSpec> weights() {
  std::vector<WeightSpec> w = low_rank_weights();
  w.push_back({"freq_factors", true, "[n_rot/2]: theta_i is divided by factor i (as rope)"});
  return w;
}

std::vector<AttrSpec> attr_specs() {
  std::vector<AttrSpec> a = attention_attr_list().specs();
  const auto& rope = rope_attr_list().specs();
  a.insert(a.end(), rope.begin(), rope.end());
  return a;
}

// kv_project's rule (k is the keys before rotation, same shape), then rope's attributes, whose
// head_dim must be the attention's (q's ne0 / n_head).
std::string kv_project_rope_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(kv_project_shape(q, out));
  const RopeAttrs r = rope_attr_list().parse(*q.attrs);
  const int64_t n_head = attention_attr_list().parse(*q.attrs).n_head;
  const int64_t head_dim = (*q.inputs[kAttnQ])[0] / n_head;
  if (r.head_dim != head_dim)
    return "expected head_dim " + std::to_string(head_dim) + " (q's ne0 / n_head, " +
           shape_of(q, false, kAttnQ) + " / " + std::to_string(n_head) + "), found " +
           std::to_string(r.head_dim);
  return check_rope_attrs(q, r, kFreqFactors);
}

BoundOp bind_kv_project_rope(Binder& b) {
  const LowRankBinding lr = bind_low_rank(b, "kv_project_rope");
  const RopeAttrs ra = rope_attr_list().parse(b.attrs());
  // cos/sin of every cache row (= position 0..n_ctx-1), once: [n_ctx][n_rot].
  auto cos_sin = std::make_shared<std::vector<float>>(static_cast<size_t>(b.n_ctx() * ra.n_rot));
  {
    std::vector<int32_t> positions(static_cast<size_t>(b.n_ctx()));
    std::iota(positions.begin(), positions.end(), 0);
    rope_cos_sin(positions.data(), b.n_ctx(), ra.n_rot, static_cast<float>(ra.base), cos_sin->data(),
                 b.f32_weight(kFreqFactors));
  }
  const KeyRotation rot{ra.n_rot, ra.pairing, cos_sin->data()};
  const int64_t per_thread = kv_project_rope_scratch_floats(*lr.v, b.n_ctx());
  const int64_t row = lr.shape.kv_row();
  const GguflowKernels& k = b.kernels();
  const Parallel& par = b.parallel();
  return {{sizeof(float) * static_cast<size_t>(per_thread * b.max_threads()),  // per thread
           sizeof(float) * static_cast<size_t>(row),                            // centred row
           sizeof(float) * static_cast<size_t>(b.n_ctx() * row)},               // rebuilt keys
          [&k, &par, lr, cos_sin, rot, per_thread, row](const StepView& s, const NodeIo& io) {
            const int32_t* pos = store_low_rank_step(lr, s, io, at<float>(s, io.scratch[1]));
            // Every key any token of the step sees: rows 0..max position.
            const int64_t n_rows = *std::max_element(pos, pos + s.n_tokens) + 1;
            float* keys = at<float>(s, io.scratch[2]);  // [n_rows][kv_row]
            parallel_rows(par, n_rows, 16, [&](int64_t r0, int64_t r1) {
              kv_project_rope_keys(k, lr.shape, *lr.k, rot, lr.cache, r0, r1, keys + r0 * row);
            });
            const float* q = at<const float>(s, io.inputs[kAttnQ]);
            float* out = at<float>(s, io.outputs[0]);
            float* scratch = at<float>(s, io.scratch[0]);
            parallel_rows(par, s.n_tokens * lr.shape.n_head, 1, [&](int64_t t0, int64_t t1) {
              kv_project_rope_heads(k, lr.shape, *lr.v, keys, q, pos, lr.cache, t0, t1,
                                    scratch + par.thread_index() * per_thread, out);
            });
          }};
}

}  // namespace

const OpSchema& kv_project_rope_op() {
  static const OpSchema op{
      "kv_project_rope", OpKind::kAttention,
      "attention over a low-rank cache of keys before RoPE: appends c = basis^T (x - mean) of "
      "the un-rotated k and of v, rebuilds each key basis c + mean and rotates it at its "
      "position, read-out as kv_project",
      attention_inputs(),
      weights(),
      attr_specs(),
      {{"out", DType::kF32}},
      "as kv_project (k before rotation); head_dim = q's ne0 / n_head, freq_factors? [n_rot/2] "
      "-> [hd * n_head, T]",
      kv_project_rope_shape, bind_kv_project_rope, {"kv_cache", "cache", check_low_rank_state}};
  return op;
}

}  // namespace gguflow::ops
