// The kv_project op: attention over a low-rank KV cache (ops/kv_project.h). The bases are F32
// weights from a `gguflow kv calibrate` side file; the cache stores r_K + r_V floats per token.
// The rules it shares with kv_project_rope (shape, state, bind checks) are defined here too.
#include "ops/kv_project_op.h"

#include "ops/error.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {

std::vector<WeightSpec> low_rank_weights() {
  return {{"k_basis", false, "[kv_row, r_K]: r_K basis vectors for the keys (F32)"},
          {"k_mean", false, "[kv_row]: mean of the keys (F32)"},
          {"v_basis", false, "[kv_row, r_V]: r_V basis vectors for the values (F32)"},
          {"v_mean", false, "[kv_row]: mean of the values (F32)"}};
}

std::string kv_project_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(attention_shape(q, out));
  const int64_t kv_row = (*q.inputs[kAttnK])[0];
  for (size_t w : {kKBasis, kKMean, kVBasis, kVMean}) {
    const bool is_basis = w == kKBasis || w == kVBasis;
    GGUFLOW_SHAPE_TRY(need_rank(q, true, w, is_basis ? 2 : 1));
    const Shape& s = *q.weights[w];
    if (s[0] != kv_row || (is_basis && (s[1] < 1 || s[1] > kv_row)))
      return "expected " + std::string(is_basis ? "a basis [" : "a mean [") +
             std::to_string(kv_row) +
             (is_basis ? ", r] with 1 <= r <= " + std::to_string(kv_row) : std::string()) +
             "] (kv_row = the keys' ne0), found " + shape_of(q, true, w);
  }
  return "";
}

std::string check_low_rank_state(const ShapeQuery& node, const Attrs& state, KvLayout* layout) {
  GGUFLOW_SHAPE_TRY(check_kv_state(node, state, layout));
  layout->k = (*node.weights[kKBasis])[1];
  layout->v = (*node.weights[kVBasis])[1];
  layout->f32_only = true;  // coordinates are read with dot_f32 / axpy_f32
  layout->heads = 1;         // a row of coordinates spans every head (k_f32 / v_f32)
  return "";
}

LowRankBinding bind_low_rank(Binder& b, const char* op) {
  const AttentionAttrs a = attention_attr_list().parse(b.attrs());
  // The attribute list is attention's; the low-rank scores only do plain causal attention.
  if (a.window != 0 || a.softcap != 0 || a.scale != 0 || !a.causal)
    throw error(b.where(), ": ", op, " does plain causal attention: expected window, softcap "
                "and scale 0 and causal true (the defaults), found window ", a.window,
                ", softcap ", attr_to_string(a.softcap), ", scale ", attr_to_string(a.scale),
                ", causal ", a.causal ? "true" : "false");
  LowRankBinding r;
  r.shape = attention_geometry(a, *b.input_shape(kAttnQ));
  for (size_t slot : {kKBasis, kKMean, kVBasis, kVMean})
    if (b.weight(slot).type != GGML_TYPE_F32)
      throw error(b.where(), ": weight ", b.weight_name(slot), " has type ",
                  type_name(b.weight(slot).type), ": expected F32 (as gguflow kv calibrate writes)");
  r.k = std::make_shared<const LowRankBasis>(make_low_rank_basis(
      b.f32_weight(kKBasis), b.f32_weight(kKMean), b.weight(kKBasis).n_rows, r.shape));
  r.v = std::make_shared<const LowRankBasis>(make_low_rank_basis(
      b.f32_weight(kVBasis), b.f32_weight(kVMean), b.weight(kVBasis).n_rows, r.shape));
  r.cache = b.kv_cache();
  // The session refuses other types first (KvLayout::f32_only); this guards other binders.
  if (r.cache.k_type != KvCacheType::kF32 || r.cache.v_type != KvCacheType::kF32)
    throw error(b.where(), ": ", op, " stores low-rank coordinates in f32 only: expected cache "
                "types f32, found K ", kv_cache_type_name(r.cache.k_type), ", V ",
                kv_cache_type_name(r.cache.v_type));
  return r;
}

const int32_t* store_low_rank_step(const LowRankBinding& lr, const StepView& s, const NodeIo& io,
                                   float* centred) {
  GGUFLOW_CHECK(s.n_sequences == 1 && s.sequences[0].cache_rows == 0 && s.sequences[0].slot == 0);
  const int32_t* pos = at<const int32_t>(s, io.inputs[kAttnPositions]);
  kv_project_store(lr.shape, *lr.k, *lr.v, at<const float>(s, io.inputs[kAttnK]),
                   at<const float>(s, io.inputs[kAttnV]), pos, s.n_tokens, lr.cache, centred);
  return pos;
}

namespace {

BoundOp bind_kv_project(Binder& b) {
  const LowRankBinding lr = bind_low_rank(b, "kv_project");
  const int64_t per_thread = kv_project_scratch_floats(*lr.k, *lr.v, b.n_ctx());
  const GguflowKernels& k = b.kernels();
  const Parallel& par = b.parallel();
  return {{sizeof(float) * static_cast<size_t>(per_thread * b.max_threads()),  // per thread
           sizeof(float) * static_cast<size_t>(lr.shape.kv_row())},            // centred row
          [&k, &par, lr, per_thread](const StepView& s, const NodeIo& io) {
            const int32_t* pos = store_low_rank_step(lr, s, io, at<float>(s, io.scratch[1]));
            const float* q = at<const float>(s, io.inputs[kAttnQ]);
            float* out = at<float>(s, io.outputs[0]);
            float* scratch = at<float>(s, io.scratch[0]);
            parallel_rows(par, s.n_tokens * lr.shape.n_head, 1, [&](int64_t t0, int64_t t1) {
              kv_project_heads(k, lr.shape, *lr.k, *lr.v, q, pos, lr.cache, t0, t1,
                               scratch + par.thread_index() * per_thread, out);
            });
          }};
}

}  // namespace

const OpSchema& kv_project_op() {
  static const OpSchema op{
      "kv_project", OpKind::kAttention,
      "attention over a low-rank KV cache: appends c = basis^T (x - mean) of k and v, "
      "scores (basis^T q).c + q.mean, read-out basis (sum a c) + mean",
      attention_inputs(),
      low_rank_weights(),
      attention_attr_list().specs(),
      {{"out", DType::kF32}},
      "as attention; k_basis [kv_row, r_K], k_mean [kv_row], v_basis [kv_row, r_V], v_mean "
      "[kv_row] -> [hd * n_head, T]",
      kv_project_shape, bind_kv_project, {"kv_cache", "cache", check_low_rank_state}};
  return op;
}

}  // namespace gguflow::ops
