// The plugin's only export, `gguflow_kernels_get`, and the record of the target it was built
// for:
//  - at run time, the table's target_name is hwy::TargetName(HWY_TARGET);
//  - without loading, the ELF file carries a section named ".gguflow_target.<TARGET>" (the
//    host lists section names with boost::dll::library_info), spelled from HWY_TARGET by the
//    preprocessor, so a build that silently got a lesser target says so in the file too.
#include <hwy/targets.h>

#include "plugins/kernels/kernels_internal.h"

#if HWY_TARGET == HWY_AVX3_DL
#define GGUFLOW_TARGET_SECTION ".gguflow_target.AVX3_DL"
#elif HWY_TARGET == HWY_AVX3
#define GGUFLOW_TARGET_SECTION ".gguflow_target.AVX3"
#elif HWY_TARGET == HWY_AVX2
#define GGUFLOW_TARGET_SECTION ".gguflow_target.AVX2"
#elif HWY_TARGET == HWY_SSE4
#define GGUFLOW_TARGET_SECTION ".gguflow_target.SSE4"
#elif HWY_TARGET == HWY_SSSE3
#define GGUFLOW_TARGET_SECTION ".gguflow_target.SSSE3"
#elif HWY_TARGET == HWY_EMU128
#define GGUFLOW_TARGET_SECTION ".gguflow_target.EMU128"
#elif HWY_TARGET == HWY_SCALAR
#define GGUFLOW_TARGET_SECTION ".gguflow_target.SCALAR"
#elif HWY_TARGET == HWY_NEON
#define GGUFLOW_TARGET_SECTION ".gguflow_target.NEON"
#elif HWY_TARGET == HWY_SVE
#define GGUFLOW_TARGET_SECTION ".gguflow_target.SVE"
#elif HWY_TARGET == HWY_SVE2
#define GGUFLOW_TARGET_SECTION ".gguflow_target.SVE2"
#else
#error "kernel plugin: add a section name for this Highway target"
#endif

// Kept by `used` and the section itself; its contents repeat the name for `objdump -s`.
__attribute__((section(GGUFLOW_TARGET_SECTION), used))
const char kGguflowPluginTarget[] = GGUFLOW_TARGET_SECTION;

// A CPU feature the build uses beyond its Highway target (runtime/plugins/cpu_features.h): the
// avx3_vnni plugin is Highway's AVX3 compiled with -mavx512vnni (GGUFLOW_X86_VNNI), which
// Highway's AVX3 check does not cover, so the loader must check it before loading.
#if GGUFLOW_X86_VNNI && HWY_TARGET != HWY_AVX3_DL
__attribute__((section(".gguflow_requires.AVX512VNNI"), used))
const char kGguflowPluginRequires[] = ".gguflow_requires.AVX512VNNI";
#endif

namespace gguflow::kernels {
namespace {

void QuantizeActEntry(uint32_t act_type, const float* x, void* dst, int64_t n) {
  QuantizeActivations(act_type, x, dst, n);
}

void MatMatEntry(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n, int64_t row_begin,
                 int64_t row_end, const void* act, size_t act_row_bytes, int64_t n_act, float* y,
                 int64_t y_stride) {
  const MatMulArgs args{w, w_row_bytes, n, row_begin, row_end, act, act_row_bytes, n_act, y, y_stride, row_end};
  if (MatMulViaPanels(w_type, args)) return;
  if (MatMulBlock32(w_type, args)) return;
  if (MatMulKQuant(w_type, args)) return;
  MatMulFloat(w_type, args);
}

void MatVecEntry(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n, int64_t row_begin,
                 int64_t row_end, const void* act, float* y) {
  MatMatEntry(w_type, w, w_row_bytes, n, row_begin, row_end, act, 0, 1, y, 0);
}

void MatMatPackedEntry(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                       int64_t row_begin, int64_t row_end, const void* act, size_t act_row_bytes,
                       int64_t n_act, float* y, int64_t y_stride) {
  // The pair kernels prefetch one pair of groups past the range: a thread's next share of a
  // split product is most often the rows right after this one (oneTBB hands a thread back the
  // other half of its own last split), whose first pair would otherwise start from DRAM. A
  // 896-row product at 8 activation rows and 2 threads goes in shares of 7 pairs (112 groups
  // halved down to ops::grain_for's pieces), so that first pair was a seventh of each share.
  // Past the matrix, or in rows another thread takes, the prefetch costs one pair of bandwidth
  // and nothing else (AheadPrefetch keeps addresses as integers; a prefetch never faults).
  MatMulPacked(w_type, {w, w_row_bytes, n, row_begin, row_end, act, act_row_bytes, n_act, y, y_stride,
                        row_end + 2 * kPackedGroupRows});
}

void MatVecPackedEntry(uint32_t w_type, const void* w, size_t w_row_bytes, int64_t n,
                       int64_t row_begin, int64_t row_end, const void* act, float* y) {
  MatMatPackedEntry(w_type, w, w_row_bytes, n, row_begin, row_end, act, 0, 1, y, 0);
}

void DequantizeRowEntry(uint32_t type, const void* src, float* dst, int64_t n) {
  DequantizeRow(type, src, dst, n);
}

GguflowKernels MakeTable() {
  GguflowKernels t{};
  t.abi_version = GGUFLOW_KERNEL_ABI_VERSION;
  t.table_bytes = sizeof(GguflowKernels);
  t.target_name = hwy::TargetName(HWY_TARGET);
  t.hwy_target = HWY_TARGET;
  for (uint32_t& a : t.act_type) a = GGML_TYPE_COUNT;
  t.act_type[GGML_TYPE_F32] = GGML_TYPE_F32;
  t.act_type[GGML_TYPE_F16] = GGML_TYPE_F16;
  t.act_type[GGML_TYPE_BF16] = GGML_TYPE_BF16;
  t.act_type[GGML_TYPE_Q4_0] = GGML_TYPE_Q8_0;
  t.act_type[GGML_TYPE_Q5_0] = GGML_TYPE_Q8_0;
  t.act_type[GGML_TYPE_Q8_0] = GGML_TYPE_Q8_0;
  t.act_type[GGML_TYPE_Q4_1] = GGML_TYPE_Q8_1;
  t.act_type[GGML_TYPE_Q5_1] = GGML_TYPE_Q8_1;
  t.act_type[GGML_TYPE_Q2_K] = GGML_TYPE_Q8_K;
  t.act_type[GGML_TYPE_Q3_K] = GGML_TYPE_Q8_K;
  t.act_type[GGML_TYPE_Q4_K] = GGML_TYPE_Q8_K;
  t.act_type[GGML_TYPE_Q5_K] = GGML_TYPE_Q8_K;
  t.act_type[GGML_TYPE_Q6_K] = GGML_TYPE_Q8_K;
  t.quantize_act = QuantizeActEntry;
  t.mat_vec = MatVecEntry;
  t.mat_mat = MatMatEntry;
  t.dequantize_row = DequantizeRowEntry;
  t.dot_f32 = DotF32;
  t.axpy_f32 = AxpyF32;
  t.scale_f32 = ScaleF32;
  t.add_f32 = AddF32;
  t.mul_f32 = MulF32;
  t.rmsnorm_f32 = RmsNormF32;
  t.softmax_f32 = SoftmaxF32;
  t.rope_f32 = RopeF32;
  t.silu_mul_f32 = SiluMulF32;
  t.gelu_tanh_f32 = GeluTanhF32;
  for (uint32_t w = 0; w < GGML_TYPE_COUNT; ++w) t.pack_rows[w] = PackedGroupRows(w);
  t.pack = PackWeights;
  t.mat_vec_packed = MatVecPackedEntry;
  t.mat_mat_packed = MatMatPackedEntry;
  t.dequantize_row_packed = DequantizePackedRow;
  t.kv_store_row = KvStoreRow;
  t.kv_dot = KvDot;
  t.kv_axpy = KvAxpy;
  t.kv_dot_rows = KvDotRows;
  t.kv_axpy_rows = KvAxpyRows;
  return t;
}

}  // namespace
}  // namespace gguflow::kernels

extern "C" __attribute__((visibility("default"))) const GguflowKernels* gguflow_kernels_get(void) {
  static const GguflowKernels table = gguflow::kernels::MakeTable();
  return &table;
}
