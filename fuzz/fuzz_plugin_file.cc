// libFuzzer target: what the plugin scanner reads from a candidate kernel plugin file before
// anything is loaded (runtime/plugins/plugin_file.cc): the ELF checks, then Boost.DLL's
// section list and the target section. The input is the file's bytes, held in a memfd and
// read through its /proc/self/fd path, so the real path-based reader runs without disk I/O.
// read_plugin_file never throws: a bad file comes back with `problem` set; any exception,
// crash or sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "runtime/plugins/plugin_file.h"

namespace {
gguflow::fuzz::MemoryFile* plugin = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plugin = new gguflow::fuzz::MemoryFile("libgguflow-kernels-fuzz.so");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  plugin->assign(data, size);
  const gguflow::plugins::PluginFileInfo info = gguflow::plugins::read_plugin_file(plugin->path());
  GGUFLOW_FUZZ_EXPECT(info.problem.empty() == (info.target_bit != 0),
                      "a plugin file is usable exactly when its target is known: problem '" +
                          info.problem + "', target '" + info.target + "'");
  if (!info.target.empty()) {
    (void)gguflow::plugins::target_matches_name("avx2", info.target);
    (void)gguflow::plugins::target_matches_name("scalar", info.target);
  }
  return 0;
}
