// The matmul op: y[r] = dot(weight row r, x) (+ bias[r]), the weight read quantized from the
// model (or the plugin's packed copy of it) through the kernel table.
#include "ops/error.h"
#include "ops/matmul.h"
#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };                 // inputs
enum : size_t { kWeight = 0, kBias = 1 };  // weights

std::string matmul_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, kWeight, 2));
  const Shape& x = *q.inputs[kX];
  const Shape& w = *q.weights[kWeight];
  if (x[0] != w[0])
    return "inner dimension mismatch: expected the input's ne0 to equal the weight's ne0 (" +
           std::to_string(w[0]) + "), found " + shape_of(q, false, kX) + " and " +
           shape_of(q, true, kWeight);
  if (q.weights[kBias]) {
    const Shape& b = *q.weights[kBias];
    if (b.rank() != 1 || b[0] != w[1])
      return "expected bias of shape [" + std::to_string(w[1]) + "] (the weight's ne1), found " +
             shape_of(q, true, kBias);
  }
  out->push_back(Shape{{w[1], x[1]}});
  return "";
}

// Rows a thread's share should be a multiple of: a packed weight's group (any split gives the
// same results; whole groups are the fast case).
int64_t row_unit(const WeightView& w) { return w.pack_rows ? w.pack_rows : 1; }

BoundOp bind_matmul(Binder& b) {
  const GguflowKernels& k = b.kernels();
  try {
    check_matmul_supported(k, b.weight(kWeight), b.weight_name(kWeight));
  } catch (const Error& e) {
    throw error(b.where(), ": ", e.what());
  }
  // Read at run time: the session may swap in a packed copy after binding.
  const WeightView* slot = b.weight_slot(kWeight, /*matmul=*/true);
  const float* bias = b.f32_weight(kBias);
  const size_t act_bytes = activation_row_bytes(k, *slot);
  const bool per_token = has_token_dim(*b.input_shape(kX));
  // The lm-head of a prompt whose caller wants only the last logits: one row instead of T
  // (for Qwen2.5-0.5B the lm-head is ~28 % of a token's multiply-adds).
  const bool last_row_capable = per_token && b.writes_graph_output();
  const Parallel& par = b.parallel();
  BoundOp bound;
  bound.scratch_bytes = {act_bytes * static_cast<size_t>(b.max_tokens())};  // encoded x
  bound.writes_last_output_only = last_row_capable;
  bound.run = [&k, &par, slot, bias, per_token, last_row_capable](const StepView& s,
                                                                  const NodeIo& io) {
    const WeightView& w = *slot;
    int64_t n_act = s.rows(per_token);
    const float* x = at<const float>(s, io.inputs[kX]);
    if (last_row_capable && s.last_output_only) {
      x += (n_act - 1) * w.n;
      n_act = 1;
    }
    std::byte* act = at<std::byte>(s, io.scratch[0]);
    // Encode the activation rows, then the output rows. The encoding is split across threads
    // in pieces of elementwise size only: a server step's 8 rows of 896 encode in ~2 us, less
    // than a fork/join costs.
    const size_t stride = activation_row_bytes(k, w);
    parallel_elementwise_rows(par, n_act, w.n, [&](int64_t a0, int64_t a1) {
      quantize_activations(k, w, x + a0 * w.n, a1 - a0, act + a0 * stride);
    });
    float* y = at<float>(s, io.outputs[0]);
    parallel_row_units(par, w.n_rows, row_unit(w), w.row_bytes, n_act, [&](int64_t r0, int64_t r1) {
      matmul_rows(k, w, act, n_act, r0, r1, bias, y, w.n_rows);
    });
  };
  return bound;
}

}  // namespace

const OpSchema& matmul_op() {
  static const OpSchema op{
      "matmul", OpKind::kMatmul, "y[r] = dot(weight row r, x) (+ bias[r]); the weight stays quantized",
      {{"x", false, DType::kF32, "[k, T]"}},
      {{"weight", false, "[k, n], any GGML type"}, {"bias", true, "[n] (qwen2 Q/K/V)"}},
      {},
      {{"out", DType::kF32}},
      "x [k, T], weight [k, n], bias? [n] -> [n, T]",
      matmul_shape, bind_matmul, {}};
  return op;
}

}  // namespace gguflow::ops
