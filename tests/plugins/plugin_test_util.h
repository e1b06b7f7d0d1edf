// Helpers shared by the plugin tests: the plugins built next to the test binaries, loaded
// through the real loader.
#pragma once

#include <string>
#include <vector>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::test {

// Names of the plugins in binary_dir() that this CPU can run ("scalar", "avx2", ...).
std::vector<std::string> supported_plugin_names();

// The table of the named plugin from binary_dir() (loaded once, kept for the process).
const GguflowKernels& plugin_table(const std::string& name);

// Bytes of one row of n elements of a GGML type.
size_t row_bytes(uint32_t type, int64_t n);

}  // namespace gguflow::test
