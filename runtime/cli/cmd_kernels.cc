// `gguflow kernels [--kernels NAME] [--json]`: every kernel plugin found, its target, path and
// ABI version, whether this CPU can run it (or why not), and which one would be selected.
#include <cstdio>
#include <string>
#include <vector>

#include <hwy/targets.h>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "ops/error.h"
#include "runtime/core/json.h"
#include "runtime/plugins/cpu_features.h"
#include "runtime/plugins/kernel_plugins.h"

namespace gguflow::cli {
namespace {

// The CPU features beyond Highway's targets that plugins may need (cpu_features.h), which this
// CPU has.
std::string cpu_features() {
  std::string out;
  for (const std::string& f : plugins::known_cpu_features()) {
    if (!plugins::cpu_has_feature(f).value_or(false)) continue;
    if (!out.empty()) out += ' ';
    out += f;
  }
  return out.empty() ? "none" : out;
}

// The targets whose plugin builds this CPU runs (Highway's list, less AVX3_DL without AVX-VNNI).
std::string cpu_targets() {
  std::string out;
  const int64_t supported = plugins::runnable_targets();
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t t = int64_t{1} << bit;
    if (!(supported & t)) continue;
    if (!out.empty()) out += ' ';
    out += hwy::TargetName(t);
  }
  return out;
}

}  // namespace

int run_kernels(int argc, char** argv) {
  Args args("kernels [options]",
            "Lists the kernel plugins found (next to the gguflow executable, then in "
            "GGUFLOW_PLUGIN_PATH), whether this CPU can run each, and which one is selected.");
  args.option("--kernels", "NAME", "force this plugin (default: $GGUFLOW_KERNELS, else the best)")
      .flag("--json", "print JSON instead of a table")
      .positional_count(0, 0);
  if (!args.parse(argc, argv)) return 0;

  plugins::SelectOptions options;
  options.forced = args.get("--kernels");
  const auto candidates = plugins::scan_plugins(options);
  // Selection loads the chosen plugin, which also checks its entry point and ABI version. When
  // none can be selected, the list is still shown (it says why each is unusable), then the error.
  const plugins::SelectedKernels* selected = nullptr;
  std::string selection_error;
  try {
    selected = &plugins::select_kernels(candidates, options);
  } catch (const Error& e) {
    selection_error = e.what();
  }
  const auto is_selected = [&](const plugins::PluginCandidate& c) { return selected && c.path == selected->plugin.path; };
  // The ABI version is in the table, so every plugin this CPU can run is loaded to read it; a
  // plugin that fails to load is reported with its error instead.
  std::vector<std::string> abi(candidates.size(), "-");
  std::vector<std::string> load_error(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].usable) continue;
    try {
      abi[i] = std::to_string(plugins::load_plugin(candidates[i]).abi_version);
    } catch (const Error& e) {
      load_error[i] = e.what();
    }
  }

  if (args.has("--json")) {
    Json plugin_list = Json::array();
    for (size_t i = 0; i < candidates.size(); ++i) {
      const auto& c = candidates[i];
      plugin_list.push_back({{"name", c.name},
                             {"target", c.target},
                             {"required_features", c.required_features},
                             {"path", c.path.string()},
                             {"supported", c.usable && load_error[i].empty()},
                             {"reason", c.usable ? load_error[i] : c.reason},
                             {"selected", is_selected(c)},
                             {"abi_version", abi[i]}});
    }
    const Json json = {{"cpu_targets", cpu_targets()},
                       {"cpu_features", cpu_features()},
                       {"abi_version", GGUFLOW_KERNEL_ABI_VERSION},
                       {"selected", selected ? Json(selected->plugin.name) : Json(nullptr)},
                       {"plugins", plugin_list}};
    std::printf("%s\n", json_text(json).c_str());
    if (!selected) throw error(selection_error);
    return 0;
  }

  std::printf("CPU targets: %s\nCPU features: %s\nhost kernel ABI: %u\n\n", cpu_targets().c_str(),
              cpu_features().c_str(), GGUFLOW_KERNEL_ABI_VERSION);
  std::printf("  %-9s %-15s %-4s %-40s %s\n", "name", "build", "ABI", "status", "path");
  for (size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    const std::string status = !c.usable              ? "not usable: " + c.reason
                               : !load_error[i].empty() ? "not usable: " + load_error[i]
                               : is_selected(c)         ? "supported, selected"
                                                        : "supported";
    std::printf("%s %-9s %-15s %-4s %-40s %s\n", is_selected(c) ? "*" : " ", c.name.c_str(),
                c.target.empty() ? "?" : c.build().c_str(), abi[i].c_str(), status.c_str(),
                c.path.string().c_str());
  }
  if (!selected) {
    std::printf("\nselected: none\n");
    std::fflush(stdout);
    throw error(selection_error);
  }
  std::printf("\nselected: %s\n", selected->describe().c_str());
  return 0;
}

}  // namespace gguflow::cli
