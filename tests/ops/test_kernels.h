// A minimal scalar kernel table for op unit tests: F32 weights only (activation format F32),
// plain loops. It lets ops be tested without any plugin; the plugin parity tests and
// tests/exec run the same ops through every real plugin.
#pragma once

#include "plugins/abi/kernel_abi.h"

namespace gguflow::test {

const GguflowKernels& scalar_f32_test_kernels();

}  // namespace gguflow::test
