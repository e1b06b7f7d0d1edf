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
#include "plugins/abi/kernel_abi.h"

#if defined(FAKE_ABI_MISMATCH) || defined(FAKE_NO_ENTRY) || defined(FAKE_NEEDS_UNKNOWN_FEATURE) || \
    defined(FAKE_NULL_ENTRIES) || defined(FAKE_UNDEFINED_SYMBOL)
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
    defined(FAKE_NEEDS_UNKNOWN_FEATURE) || defined(FAKE_NULL_ENTRIES) || defined(FAKE_UNDEFINED_SYMBOL)
extern "C" __attribute__((visibility("default"))) const GguflowKernels* gguflow_kernels_get(void) {
  static GguflowKernels table{};
#if defined(FAKE_UNDEFINED_SYMBOL)
  table.table_bytes = static_cast<uint32_t>(gguflow_fake_function_no_library_defines());
#endif
#if defined(FAKE_CLAIMS_SSE4) || defined(FAKE_NEEDS_UNKNOWN_FEATURE) || defined(FAKE_NULL_ENTRIES)
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
