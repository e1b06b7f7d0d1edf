// Libraries that look like kernel plugins but are broken in one way each, for the loader's
// error tests. Compiled three times (tests/plugins/CMakeLists.txt):
//   FAKE_ABI_MISMATCH: a valid target record and entry point, but abi_version 999.
//   FAKE_NO_ENTRY:     a valid target record, no gguflow_kernels_get.
//   FAKE_NO_SECTION:   an entry point but no ".gguflow_target.*" record.
//   FAKE_CLAIMS_SSE4:  a file that records SSE4 (better than scalar) but whose loaded table
//                      reports SCALAR: loading it fails, and selection must fall back.
//   FAKE_NEEDS_UNKNOWN_FEATURE: a valid SCALAR plugin that also records a CPU feature no host
//                      knows (".gguflow_requires.AVX9000"): it must never be loaded.
//   FAKE_NULL_ENTRIES: a SCALAR record, the right ABI and size, every function entry null.
//   FAKE_UNDEFINED_SYMBOL: a SCALAR record and entry point, but it needs a function no library
//                      defines, so the dynamic loader refuses it (its reason must reach the user).
//   FAKE_NO_PACKING:   a SCALAR table with every entry set except the packed-weight ones, and
//                      pack_rows all 0: valid (packing is optional), loaded, never called here.
#include "plugins/abi/kernel_abi.h"

#if defined(FAKE_ABI_MISMATCH) || defined(FAKE_NO_ENTRY) || defined(FAKE_NEEDS_UNKNOWN_FEATURE) || \
    defined(FAKE_NULL_ENTRIES) || defined(FAKE_UNDEFINED_SYMBOL) || defined(FAKE_NO_PACKING)
__attribute__((section(".gguflow_target.SCALAR"), used)) const char kFakeTarget[] = "SCALAR";
#endif

#if defined(FAKE_NEEDS_UNKNOWN_FEATURE)
__attribute__((section(".gguflow_requires.AVX9000"), used)) const char kFakeRequires[] = "AVX9000";
#endif

#if defined(FAKE_CLAIMS_SSE4)
__attribute__((section(".gguflow_target.SSE4"), used)) const char kFakeTarget[] = "SSE4";
#endif

#if defined(FAKE_UNDEFINED_SYMBOL)
extern "C" int gguflow_fake_function_no_library_defines(void);
#endif

#if defined(FAKE_ABI_MISMATCH) || defined(FAKE_NO_SECTION) || defined(FAKE_CLAIMS_SSE4) || \
    defined(FAKE_NEEDS_UNKNOWN_FEATURE) || defined(FAKE_NULL_ENTRIES) || defined(FAKE_UNDEFINED_SYMBOL) || \
    defined(FAKE_NO_PACKING)
#if defined(FAKE_NO_PACKING)
static void never_called() {}
template <class Entry>
static void set(Entry& entry) {
  entry = reinterpret_cast<Entry>(&never_called);
}
#endif
extern "C" __attribute__((visibility("default"))) const GguflowKernels* gguflow_kernels_get(void) {
  static GguflowKernels table{};
#if defined(FAKE_UNDEFINED_SYMBOL)
  table.table_bytes = static_cast<uint32_t>(gguflow_fake_function_no_library_defines());
#endif
#if defined(FAKE_NO_PACKING)
  set(table.quantize_act), set(table.mat_vec), set(table.mat_mat), set(table.dequantize_row);
  set(table.dot_f32), set(table.axpy_f32), set(table.scale_f32), set(table.add_f32), set(table.mul_f32);
  set(table.rmsnorm_f32), set(table.softmax_f32), set(table.rope_f32), set(table.silu_mul_f32);
  set(table.gelu_tanh_f32), set(table.kv_store_row), set(table.kv_dot), set(table.kv_axpy);
  set(table.kv_dot_rows), set(table.kv_axpy_rows);
#endif
#if defined(FAKE_CLAIMS_SSE4) || defined(FAKE_NEEDS_UNKNOWN_FEATURE) || defined(FAKE_NULL_ENTRIES) || \
    defined(FAKE_NO_PACKING)
  table.abi_version = GGUFLOW_KERNEL_ABI_VERSION;
#else
  table.abi_version = 999;
#endif
  table.table_bytes = sizeof(GguflowKernels);
  table.target_name = "SCALAR";
  table.hwy_target = int64_t{1} << 62;  // HWY_SCALAR
  return &table;
}
#else
extern "C" __attribute__((visibility("default"))) int gguflow_fake_plugin_marker(void) { return 1; }
#endif
