#include "tests/plugins/plugin_test_util.h"

#include "runtime/plugins/kernel_plugins.h"
#include "tests/support/test_data.h"

namespace gguflow::test {

std::vector<std::string> supported_plugin_names() {
  plugins::SelectOptions options;
  options.search_dirs = {binary_dir()};
  std::vector<std::string> names;
  for (const auto& c : plugins::scan_plugins(options))
    if (c.usable) names.push_back(c.name);
  return names;
}

const GguflowKernels& plugin_table(const std::string& name) {
  plugins::SelectOptions options;
  options.search_dirs = {binary_dir()};
  options.forced = name;
  return *plugins::select_kernels(options).table;
}

size_t row_bytes(uint32_t type, int64_t n) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  return static_cast<size_t>(n / info->block_size * info->type_size);
}

}  // namespace gguflow::test
