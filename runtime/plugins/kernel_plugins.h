// Finding, choosing and loading kernel plugins (libgguflow-kernels-<name>.so).
//
// Search order: the folder holding the running executable, then each folder of
// GGUFLOW_PLUGIN_PATH (colon-separated). Every candidate's target is read from the file
// without loading it, with the CPU features it needs beyond that target (cpu_features.h); a
// plugin whose target or features the CPU lacks is never loaded. Without a forced name the best
// supported target wins (Highway's order: AVX3_DL > AVX3 > AVX2 > SSE4 > scalar), and within a
// target the build that uses more CPU features (avx3_vnni > avx3).
// `--kernels NAME` (SelectOptions::forced) or GGUFLOW_KERNELS=NAME forces one.
//
// Loaded libraries stay loaded until the process exits, so tables and function pointers handed
// out are valid for the process lifetime. Every failure is a gguflow::Error with one line that
// names the plugin file or folder, what was expected and what was found.
//
//   const gguflow::plugins::SelectedKernels& k = gguflow::plugins::select_kernels(options);
//   k.table->mat_vec(...);  std::puts(k.describe().c_str());
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "plugins/abi/kernel_abi.h"

namespace gguflow::plugins {

struct SelectOptions {
  // Plugin name to use ("avx2"); empty: $GGUFLOW_KERNELS if set and non-empty, else the best.
  std::string forced;
  // Folders to search; empty: default_search_dirs().
  std::vector<std::filesystem::path> search_dirs;
  // Highway target bits this CPU can run; 0: runnable_targets(). A test hook: tests pass a
  // narrower mask to play a CPU without, say, AVX-512.
  int64_t supported_targets = 0;
  // CPU features (cpu_features.h names) to treat as absent whatever CPUID says. A test hook, as
  // supported_targets: a CPU with AVX-512 but without VNNI.
  std::vector<std::string> missing_features;
};

// The Highway targets whose plugin builds this CPU can run: hwy::SupportedTargets(), less
// AVX3_DL when the CPU lacks AVX-VNNI (Highway 1.0.3 builds AVX3_DL with -mavxvnni, and its
// own check asks only for the AVX-512 extensions, which Ice Lake has without AVX-VNNI).
int64_t runnable_targets();

// One plugin file found by the scan (nothing loaded).
struct PluginCandidate {
  std::string name;              // "avx2"
  std::filesystem::path path;    // absolute path of the .so
  std::string target;            // Highway target from the file, e.g. "AVX2"; empty if unreadable
  int64_t target_bit = 0;        // its HWY_* bit
  std::vector<std::string> required_features;  // beyond the target, e.g. {"AVX512VNNI"}
  bool usable = false;           // readable, named for its build, and the CPU supports it
  std::string reason;            // when !usable: why, one line
  // The target and its extra features: "AVX3+AVX512VNNI", "AVX2".
  std::string build() const;
};

// True when a is a better build than b: a better Highway target, or the same target with more
// CPU features (both being usable is the caller's concern).
bool better_build(const PluginCandidate& a, const PluginCandidate& b);

// The chosen plugin: its table (valid for the process lifetime) and where it came from.
struct SelectedKernels {
  const GguflowKernels* table = nullptr;
  PluginCandidate plugin;
  uint32_t abi_version = 0;
  std::string describe() const;  // "avx2 (AVX2, ABI 1) from /path/libgguflow-kernels-avx2.so"
};

// The executable's folder, then the folders in $GGUFLOW_PLUGIN_PATH. Throws when a folder named
// in GGUFLOW_PLUGIN_PATH does not exist.
std::vector<std::filesystem::path> default_search_dirs();

// Every plugin file in the search folders, in search order (within a folder, by name), with
// whether this CPU (or options.supported_targets) can run it. Loads nothing. Throws when a
// search folder does not exist.
std::vector<PluginCandidate> scan_plugins(const SelectOptions& options = {});

// The candidate select_kernels would load (forced or best), without loading it. Throws
// gguflow::Error: no plugins found, forced name not found, forced plugin not usable.
PluginCandidate choose_plugin(const std::vector<PluginCandidate>& candidates,
                              const SelectOptions& options);

// Scans, chooses and loads (once per file per process), checks the entry point, ABI version
// and table size, and that the loaded table's target is the one the file recorded.
const SelectedKernels& select_kernels(const SelectOptions& options = {});
// The same over candidates already scanned. Unless a name is forced, a usable plugin that fails
// to load (its file claims a target its table does not report, ABI mismatch, no entry point) is
// skipped with a warning on stderr and the next best usable plugin is loaded; when none loads,
// the first failure is thrown.
const SelectedKernels& select_kernels(const std::vector<PluginCandidate>& candidates,
                                      const SelectOptions& options);

// Loads one plugin file, whatever its name, after the same target check (for tests and tools).
const SelectedKernels& load_plugin(const PluginCandidate& candidate);

// The minimum table size this host needs (the ABI struct as compiled into the host).
inline constexpr uint32_t kHostTableBytes = sizeof(GguflowKernels);

}  // namespace gguflow::plugins
