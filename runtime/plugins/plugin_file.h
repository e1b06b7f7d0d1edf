// What the host learns about a kernel plugin file WITHOUT loading it (loading a library built
// for an instruction set the CPU lacks can already execute its code): the plugin name from the
// file name, the Highway target it was compiled for from an ELF section named
// ".gguflow_target.<TARGET>", and any CPU features it needs beyond that target from sections
// named ".gguflow_requires.<FEATURE>" (cpu_features.h; listed with boost::dll::library_info).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gguflow::plugins {

// File names are "libgguflow-kernels-<name>.so".
inline constexpr const char* kPluginPrefix = "libgguflow-kernels-";
inline constexpr const char* kPluginSuffix = ".so";
inline constexpr const char* kTargetSectionPrefix = ".gguflow_target.";
inline constexpr const char* kRequiresSectionPrefix = ".gguflow_requires.";

// The plugin name in a file name ("avx2" for libgguflow-kernels-avx2.so), or nullopt when the
// file is not named like a plugin.
std::optional<std::string> plugin_name_from_file(const std::filesystem::path& file);

// Result of reading a candidate file. `target` is empty and `problem` says why when the file is
// not a readable ELF shared library or carries no target record.
struct PluginFileInfo {
  std::string target;      // Highway target name, e.g. "AVX2"
  int64_t target_bit = 0;  // the HWY_* bit of `target` (lower bits are better targets)
  std::vector<std::string> required_features;  // e.g. {"AVX512VNNI"}, sorted; usually empty
  std::string problem;     // one line, empty when the file was read
};
PluginFileInfo read_plugin_file(const std::filesystem::path& file);

// The Highway bit whose hwy::TargetName is `name`, or 0 if none.
int64_t target_bit_from_name(const std::string& name);

// The Highway target a plugin of this name must have been built for ("avx2" -> "AVX2",
// "avx3_vnni" -> "AVX3", "scalar" -> "SCALAR" or "EMU128"). True when `target` is acceptable
// for `name`; names this project does not build accept any target.
bool target_matches_name(const std::string& name, const std::string& target);

// The CPU features a plugin of this name must record ("avx3_vnni" -> {"AVX512VNNI"}); every
// other name: none. A plugin named for VNNI but built without it is a broken build.
std::vector<std::string> features_for_name(const std::string& name);

}  // namespace gguflow::plugins
