// Float weight matrices: F32 (activations F32), F16 (activations F16, as GGML's vec_dot_f16)
// and BF16 (activations BF16). Both operands are widened to f32 and multiplied-accumulated in
// f32 vector lanes, then the lanes are summed once; the tail (n not a multiple of the vector
// width) is added in scalar f32 after that sum.
#include "plugins/kernels/kernels_internal.h"

namespace gguflow::kernels {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;

struct F32Elem {
  using T = float;
  static HWY_INLINE hn::Vec<DF> Load(DF df, const T* p) { return hn::LoadU(df, p); }
  static float Scalar(T v) { return v; }
};
struct F16Elem {
  using T = uint16_t;
  static HWY_INLINE hn::Vec<DF> Load(DF df, const T* p) {
    const hn::Rebind<hwy::float16_t, DF> d16;
    return hn::PromoteTo(df, hn::LoadU(d16, reinterpret_cast<const hwy::float16_t*>(p)));
  }
  static float Scalar(T v) { return HalfToFloat(v); }
};
struct BF16Elem {
  using T = uint16_t;
  static HWY_INLINE hn::Vec<DF> Load(DF df, const T* p) {
    const hn::Rebind<hwy::bfloat16_t, DF> d16;
    return hn::PromoteTo(df, hn::LoadU(d16, reinterpret_cast<const hwy::bfloat16_t*>(p)));
  }
  static float Scalar(T v) { return gguflow_bf16_to_f32(v); }
};

template <class Elem>
struct FloatKernel {
  using T = typename Elem::T;

  template <int NA>
  static void DotTile(const char* row, const char* const* acts, int64_t n, float* out) {
    const DF df;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
    const T* w = reinterpret_cast<const T*>(row);
    const T* a[NA];
    for (int i = 0; i < NA; ++i) a[i] = reinterpret_cast<const T*>(acts[i]);
    hn::Vec<DF> acc[NA];
    for (int i = 0; i < NA; ++i) acc[i] = hn::Zero(df);
    int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
      const auto wv = Elem::Load(df, w + k);
      for (int i = 0; i < NA; ++i) acc[i] = hn::MulAdd(wv, Elem::Load(df, a[i] + k), acc[i]);
    }
    for (int i = 0; i < NA; ++i) {
      float sum = hn::GetLane(hn::SumOfLanes(df, acc[i]));
      for (int64_t t = k; t < n; ++t) sum += Elem::Scalar(w[t]) * Elem::Scalar(a[i][t]);
      out[i] = sum;
    }
  }
};

}  // namespace

bool MatMulFloat(uint32_t w_type, const MatMulArgs& args) {
  switch (w_type) {
    case GGML_TYPE_F32: RunTiled<FloatKernel<F32Elem>>(args); return true;
    case GGML_TYPE_F16: RunTiled<FloatKernel<F16Elem>>(args); return true;
    case GGML_TYPE_BF16: RunTiled<FloatKernel<BF16Elem>>(args); return true;
    default: return false;
  }
}

}  // namespace gguflow::kernels
