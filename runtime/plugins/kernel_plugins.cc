#include "runtime/plugins/kernel_plugins.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <hwy/targets.h>

#include "ops/error.h"
#include "runtime/plugins/cpu_features.h"
#include "runtime/plugins/plugin_file.h"

namespace gguflow::plugins {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Loaded plugins, by path. Deliberately never destroyed: a library must not be unloaded while
// any thread may still call into it, and the process exit unmaps it anyway.
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<SelectedKernels>> loaded;
  std::vector<std::unique_ptr<boost::dll::shared_library>> libraries;
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// Empty when the CPU has every feature the plugin needs (less options.missing_features), else
// why not, one line.
std::string missing_feature_reason(const std::vector<std::string>& required, const SelectOptions& options) {
  for (const std::string& f : required) {
    const std::optional<bool> has = cpu_has_feature(f);
    if (!has) return "needs CPU feature '" + f + "', which this host does not know";
    const bool hidden = std::find(options.missing_features.begin(), options.missing_features.end(), f) !=
                        options.missing_features.end();
    if (!*has || hidden) return "this CPU does not support " + f;
  }
  return "";
}

std::string joined(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

std::string list_names(const std::vector<PluginCandidate>& candidates) {
  std::string names;
  for (const auto& c : candidates) {
    if (!names.empty()) names += ", ";
    names += c.name;
  }
  return names;
}

}  // namespace

std::string PluginCandidate::build() const {
  std::string out = target;
  for (const auto& f : required_features) out += "+" + f;
  return out;
}

bool better_build(const PluginCandidate& a, const PluginCandidate& b) {
  if (a.target_bit != b.target_bit) return a.target_bit < b.target_bit;  // lower bits are better
  return a.required_features.size() > b.required_features.size();
}

std::string SelectedKernels::describe() const {
  std::ostringstream out;
  out << plugin.name << " (" << plugin.build() << ", ABI " << abi_version << ") from "
      << plugin.path.string();
  return out.str();
}

std::vector<std::filesystem::path> default_search_dirs() {
  std::vector<std::filesystem::path> dirs;
  boost::dll::fs::error_code ec;
  const auto exe = boost::dll::program_location(ec);
  if (!ec) dirs.emplace_back(exe.parent_path().string());
  const std::string path = env("GGUFLOW_PLUGIN_PATH");
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      if (!std::filesystem::is_directory(dir))
        throw error("GGUFLOW_PLUGIN_PATH: ", std::filesystem::exists(dir) ? "entry '" : "plugin folder '", dir, "' ",
                    std::filesystem::exists(dir) ? "is a file, not a folder (the path lists plugin folders)"
                                                 : "does not exist");
      dirs.emplace_back(dir);
    }
    start = end + 1;
  }
  return dirs;
}

int64_t runnable_targets() {
  int64_t targets = hwy::SupportedTargets();
  if (!cpu_has_feature("AVXVNNI").value_or(false)) targets &= ~int64_t{HWY_AVX3_DL};
  return targets;
}

std::vector<PluginCandidate> scan_plugins(const SelectOptions& options) {
  const auto dirs = options.search_dirs.empty() ? default_search_dirs() : options.search_dirs;
  const int64_t supported = options.supported_targets ? options.supported_targets : runnable_targets();
  std::vector<PluginCandidate> out;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw error("plugin folder '", dir.string(), "' does not exist");
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (plugin_name_from_file(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      PluginCandidate c;
      c.name = *plugin_name_from_file(file);
      c.path = std::filesystem::absolute(file);
      const PluginFileInfo info = read_plugin_file(file);
      c.target = info.target;
      c.target_bit = info.target_bit;
      c.required_features = info.required_features;
      const std::vector<std::string> named_features = features_for_name(c.name);
      if (!info.problem.empty()) {
        c.reason = info.problem;
      } else if (!target_matches_name(c.name, c.target)) {
        c.reason = "named '" + c.name + "' but built for " + c.build() + " (broken build)";
      } else if (!named_features.empty() && named_features != c.required_features) {
        c.reason = "named '" + c.name + "' but built for " + c.build() + ", not with " +
                   joined(named_features, "+") + " (broken build)";
      } else if ((c.target_bit & supported) == 0) {
        c.reason = "this CPU does not support " + c.target;
        if (c.target_bit == HWY_AVX3_DL && !options.supported_targets &&
            (hwy::SupportedTargets() & HWY_AVX3_DL) != 0)
          c.reason += " as built (it has the AVX-512 extensions but not AVX-VNNI)";
      } else if (std::string why = missing_feature_reason(c.required_features, options); !why.empty()) {
        c.reason = why;
      } else {
        c.usable = true;
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

PluginCandidate choose_plugin(const std::vector<PluginCandidate>& candidates,
                              const SelectOptions& options) {
  const std::string forced = !options.forced.empty() ? options.forced : env("GGUFLOW_KERNELS");
  if (candidates.empty()) {
    const auto dirs = options.search_dirs.empty() ? default_search_dirs() : options.search_dirs;
    std::string searched;
    for (const auto& d : dirs) {
      if (!searched.empty()) searched += ':';
      searched += d.string();
    }
    throw error("no kernel plugins (", kPluginPrefix, "*", kPluginSuffix, ") found in '",
                searched, "'; set GGUFLOW_PLUGIN_PATH to the folder holding them");
  }
  if (!forced.empty()) {
    for (const auto& c : candidates) {
      if (c.name != forced) continue;
      if (!c.usable)
        throw error("kernel plugin '", forced, "' (", c.path.string(), ") cannot be used: ", c.reason);
      return c;
    }
    throw error("kernel plugin '", forced, "' not found; found: ", list_names(candidates));
  }
  const PluginCandidate* best = nullptr;
  for (const auto& c : candidates) {
    // The first found wins a tie.
    if (c.usable && (!best || better_build(c, *best))) best = &c;
  }
  if (!best) {
    throw error("none of the kernel plugins found is usable here (", list_names(candidates),
                "); first reason: ", candidates.front().reason);
  }
  return *best;
}

namespace {

// The dynamic loader's own reason (an undefined symbol, a missing dependency, a damaged ELF
// file): Boost.DLL reports only an errno-style code ("Bad file descriptor") for all of them.
std::string loader_message(const std::string& path, const boost::dll::fs::error_code& ec) {
  dlerror();  // clears an earlier message
  if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    dlclose(handle);
    return ec ? ec.message() : "unknown error";
  }
  const char* raw = dlerror();
  std::string why = raw ? raw : "";
  if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);  // the message names it already
  return !why.empty() ? why : ec ? ec.message() : "unknown error";
}

// The first entry of the table a plugin left null (a session would call it and crash), or null.
// The packed-weight entries are optional: a plugin whose pack_rows are all 0 has none (ABI).
const char* first_missing_entry(const GguflowKernels& t) {
  const bool packs = std::any_of(std::begin(t.pack_rows), std::end(t.pack_rows), [](uint32_t rows) { return rows > 0; });
  const std::pair<const void*, const char*> entries[] = {
      {reinterpret_cast<const void*>(t.quantize_act), "quantize_act"},
      {reinterpret_cast<const void*>(t.mat_vec), "mat_vec"},
      {reinterpret_cast<const void*>(t.mat_mat), "mat_mat"},
      {reinterpret_cast<const void*>(t.dequantize_row), "dequantize_row"},
      {reinterpret_cast<const void*>(t.dot_f32), "dot_f32"},
      {reinterpret_cast<const void*>(t.axpy_f32), "axpy_f32"},
      {reinterpret_cast<const void*>(t.scale_f32), "scale_f32"},
      {reinterpret_cast<const void*>(t.add_f32), "add_f32"},
      {reinterpret_cast<const void*>(t.mul_f32), "mul_f32"},
      {reinterpret_cast<const void*>(t.rmsnorm_f32), "rmsnorm_f32"},
      {reinterpret_cast<const void*>(t.softmax_f32), "softmax_f32"},
      {reinterpret_cast<const void*>(t.rope_f32), "rope_f32"},
      {reinterpret_cast<const void*>(t.silu_mul_f32), "silu_mul_f32"},
      {packs ? reinterpret_cast<const void*>(t.pack) : &t, "pack"},
      {packs ? reinterpret_cast<const void*>(t.mat_vec_packed) : &t, "mat_vec_packed"},
      {packs ? reinterpret_cast<const void*>(t.mat_mat_packed) : &t, "mat_mat_packed"},
      {packs ? reinterpret_cast<const void*>(t.dequantize_row_packed) : &t, "dequantize_row_packed"},
      {reinterpret_cast<const void*>(t.gelu_tanh_f32), "gelu_tanh_f32"},
      {reinterpret_cast<const void*>(t.kv_store_row), "kv_store_row"},
      {reinterpret_cast<const void*>(t.kv_dot), "kv_dot"},
      {reinterpret_cast<const void*>(t.kv_axpy), "kv_axpy"},
      {reinterpret_cast<const void*>(t.kv_dot_rows), "kv_dot_rows"},
      {reinterpret_cast<const void*>(t.kv_axpy_rows), "kv_axpy_rows"},
  };
  for (const auto& [entry, name] : entries)
    if (!entry) return name;
  return nullptr;
}

}  // namespace

const SelectedKernels& load_plugin(const PluginCandidate& candidate) {
  if (!candidate.usable) {
    throw error("kernel plugin '", candidate.name, "' (", candidate.path.string(),
                ") cannot be used: ", candidate.reason);
  }
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  const std::string key = candidate.path.string();
  if (auto it = reg.loaded.find(key); it != reg.loaded.end()) return *it->second;

  auto lib = std::make_unique<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
  lib->load(boost::dll::fs::path(key), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !lib->is_loaded())
    throw error("kernel plugin ", key, ": cannot be loaded: ", loader_message(key, ec));
  if (!lib->has(GGUFLOW_KERNELS_ENTRY))
    throw error("kernel plugin ", key, ": not a gguflow kernel plugin (no '", GGUFLOW_KERNELS_ENTRY,
                "' entry point)");
  const auto get = lib->get<const GguflowKernels*()>(GGUFLOW_KERNELS_ENTRY);
  const GguflowKernels* table = get();
  if (!table) throw error("kernel plugin ", key, ": ", GGUFLOW_KERNELS_ENTRY, " returned no table");
  if (table->abi_version != GGUFLOW_KERNEL_ABI_VERSION)
    throw error("kernel plugin ", key, ": ABI version mismatch: expected ", GGUFLOW_KERNEL_ABI_VERSION,
                ", found ", table->abi_version, " (rebuild the plugin)");
  if (table->table_bytes < kHostTableBytes)
    throw error("kernel plugin ", key, ": kernel table too small: expected at least ",
                kHostTableBytes, " bytes, found ", table->table_bytes);
  if (table->hwy_target != candidate.target_bit)
    throw error("kernel plugin ", key, ": file records target ", candidate.target, " but the loaded table reports ",
                table->hwy_target > 0 && (table->hwy_target & (table->hwy_target - 1)) == 0
                    ? hwy::TargetName(table->hwy_target)
                    : "the target bits " + std::to_string(table->hwy_target));
  if (const char* missing = first_missing_entry(*table))
    throw error("kernel plugin ", key, ": the kernel table has no ", missing, " (a broken build of the plugin)");

  auto selected = std::make_unique<SelectedKernels>();
  selected->table = table;
  selected->plugin = candidate;
  selected->abi_version = table->abi_version;
  reg.libraries.push_back(std::move(lib));
  return *(reg.loaded[key] = std::move(selected));
}

const SelectedKernels& select_kernels(const SelectOptions& options) {
  return select_kernels(scan_plugins(options), options);
}

const SelectedKernels& select_kernels(const std::vector<PluginCandidate>& candidates,
                                      const SelectOptions& options) {
  const PluginCandidate chosen = choose_plugin(candidates, options);
  const bool forced = !options.forced.empty() || !env("GGUFLOW_KERNELS").empty();
  if (forced) return load_plugin(chosen);
  // Not forced: a plugin whose file claims a target the CPU runs but that cannot be loaded
  // (a wrong target record, an ABI mismatch, a missing entry point) must not fail the run while
  // a worse plugin works. Usable candidates are tried best first; each failure is a warning.
  std::vector<const PluginCandidate*> order;
  for (const auto& c : candidates)
    if (c.usable) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [](const PluginCandidate* a, const PluginCandidate* b) { return better_build(*a, *b); });
  std::string first_error;
  for (const PluginCandidate* c : order) {
    try {
      return load_plugin(*c);
    } catch (const Error& e) {
      if (first_error.empty()) first_error = e.what();
      std::fprintf(stderr, "gguflow: warning: %s; trying the next kernel plugin\n", e.what());
    }
  }
  throw Error(first_error);
}

}  // namespace gguflow::plugins
