#include "ops/matmul.h"

#include "ops/error.h"

namespace gguflow::ops {

void check_matmul_supported(const GguflowKernels& k, const WeightView& w,
                            std::string_view weight_name) {
  if (w.type >= GGML_TYPE_COUNT || k.act_type[w.type] == GGML_TYPE_COUNT)
    throw error("weight ", weight_name, ": type ", type_name(w.type),
                " is not implemented by kernel plugin ", k.target_name);
  // The activation format must hold a row of w.n elements in whole blocks.
  type_row_bytes(k.act_type[w.type], w.n, std::string("weight ") + std::string(weight_name));
}

size_t activation_row_bytes(const GguflowKernels& k, const WeightView& w) {
  return type_row_bytes(k.act_type[w.type], w.n, "activation row");
}

void quantize_activations(const GguflowKernels& k, const WeightView& w, const float* x,
                          int64_t n_act, void* act) {
  const uint32_t act_type = k.act_type[w.type];
  const size_t stride = activation_row_bytes(k, w);
  for (int64_t a = 0; a < n_act; ++a)
    k.quantize_act(act_type, x + a * w.n, static_cast<char*>(act) + a * stride, w.n);
}

void matmul_rows(const GguflowKernels& k, const WeightView& w, const void* act, int64_t n_act,
                 int64_t row_begin, int64_t row_end, const float* bias, float* y,
                 int64_t y_stride) {
  GGUFLOW_CHECK(0 <= row_begin && row_begin <= row_end && row_end <= w.n_rows);
  GGUFLOW_CHECK(y_stride >= w.n_rows);
  if (row_begin == row_end) return;
  const auto mat_vec = w.pack_rows ? k.mat_vec_packed : k.mat_vec;
  const auto mat_mat = w.pack_rows ? k.mat_mat_packed : k.mat_mat;
  if (n_act == 1) {
    mat_vec(w.type, w.data, w.row_bytes, w.n, row_begin, row_end, act, y);
  } else {
    mat_mat(w.type, w.data, w.row_bytes, w.n, row_begin, row_end, act,
            activation_row_bytes(k, w), n_act, y, y_stride);
  }
  if (bias) {
    for (int64_t a = 0; a < n_act; ++a) {
      float* out = y + a * y_stride + row_begin;
      k.add_f32(out, bias + row_begin, out, row_end - row_begin);
    }
  }
}

}  // namespace gguflow::ops
