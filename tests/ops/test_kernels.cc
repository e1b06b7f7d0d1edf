#include "tests/ops/test_kernels.h"

#include <cmath>
#include <cstring>

namespace gguflow::test {
namespace {

float dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void quantize_act(uint32_t act_type, const float* x, void* dst, int64_t n) {
  if (act_type == GGML_TYPE_F32) std::memcpy(dst, x, sizeof(float) * n);
}

void mat_vec(uint32_t, const void* w, size_t w_row_bytes, int64_t n, int64_t row_begin,
             int64_t row_end, const void* act, float* y) {
  for (int64_t r = row_begin; r < row_end; ++r)
    y[r] = dot(reinterpret_cast<const float*>(static_cast<const char*>(w) + r * w_row_bytes),
               static_cast<const float*>(act), n);
}

void mat_mat(uint32_t type, const void* w, size_t w_row_bytes, int64_t n, int64_t row_begin,
             int64_t row_end, const void* act, size_t act_row_bytes, int64_t n_act, float* y,
             int64_t y_stride) {
  for (int64_t a = 0; a < n_act; ++a)
    mat_vec(type, w, w_row_bytes, n, row_begin, row_end,
            static_cast<const char*>(act) + a * act_row_bytes, y + a * y_stride);
}

void dequantize_row(uint32_t, const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, sizeof(float) * n);
}

void axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
void scale(float a, float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}
void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void mul(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  const float s = 1.0f / std::sqrt(dot(x, x, n) / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s * (w ? w[i] : 1.0f);
}
float softmax(float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = std::fmax(m, x[i]);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - m));
  for (int64_t i = 0; i < n; ++i) x[i] /= sum;
  return sum;
}
void rope(float* x, int64_t n_rot, const float* cs, int neox) {
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + n_rot / 2 : 2 * i + 1;
    const float c = cs[2 * i], s = cs[2 * i + 1], a = x[i0], b = x[i1];
    x[i0] = a * c - b * s;
    x[i1] = a * s + b * c;
  }
}
void silu_mul(const float* g, const float* u, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}
void gelu_tanh(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
  }
}

// The blocked attention entries over f32 rows (kv_type F32 only), through dot and axpy.
void kv_dot_rows(uint32_t, const float* q, int64_t q_stride, int64_t n_q, const void* rows, size_t row_bytes,
                 int64_t n_rows, int64_t offset, int64_t n, float* s, int64_t s_stride) {
  for (int64_t i = 0; i < n_q; ++i)
    for (int64_t j = 0; j < n_rows; ++j)
      s[i * s_stride + j] =
          dot(q + i * q_stride, reinterpret_cast<const float*>(static_cast<const char*>(rows) + j * row_bytes) + offset, n);
}
void kv_axpy_rows(uint32_t, const float* a, int64_t a_stride, int64_t n_q, const void* rows, size_t row_bytes,
                  int64_t n_rows, int64_t offset, float* y, int64_t y_stride, int64_t n) {
  for (int64_t i = 0; i < n_q; ++i)
    for (int64_t j = 0; j < n_rows; ++j)
      axpy(a[i * a_stride + j], reinterpret_cast<const float*>(static_cast<const char*>(rows) + j * row_bytes) + offset,
           y + i * y_stride, n);
}

GguflowKernels make_table() {
  GguflowKernels k{};
  k.abi_version = GGUFLOW_KERNEL_ABI_VERSION;
  k.table_bytes = sizeof(GguflowKernels);
  k.target_name = "test-scalar-f32";
  for (auto& a : k.act_type) a = GGML_TYPE_COUNT;
  k.act_type[GGML_TYPE_F32] = GGML_TYPE_F32;
  k.quantize_act = quantize_act;
  k.mat_vec = mat_vec;
  k.mat_mat = mat_mat;
  k.dequantize_row = dequantize_row;
  k.dot_f32 = dot;
  k.axpy_f32 = axpy;
  k.scale_f32 = scale;
  k.add_f32 = add;
  k.mul_f32 = mul;
  k.rmsnorm_f32 = rmsnorm;
  k.softmax_f32 = softmax;
  k.rope_f32 = rope;
  k.silu_mul_f32 = silu_mul;
  k.gelu_tanh_f32 = gelu_tanh;
  k.kv_dot_rows = kv_dot_rows;
  k.kv_axpy_rows = kv_axpy_rows;
  return k;
}

}  // namespace

const GguflowKernels& scalar_f32_test_kernels() {
  static const GguflowKernels table = make_table();
  return table;
}

}  // namespace gguflow::test
