// CPU features a kernel plugin may require beyond its Highway target, by the names plugin files
// record in their ".gguflow_requires.<FEATURE>" sections (plugin_file.h).
//
// Why a second axis next to Highway's targets: Highway 1.0.3 has no target for AVX-512 with
// VNNI but without the rest of Ice Lake's extensions and AVX-VNNI (Cascade Lake, Zen 4): its
// AVX3_DL build needs AVX-VNNI, which those CPUs lack, so without this they ran the plain AVX3
// plugin and none of the 8-bit multiply-accumulate instructions they have. The avx3_vnni plugin
// is Highway's AVX3 target compiled with -mavx512vnni and records that it needs AVX512VNNI.
//
//   cpu_has_feature("AVX512VNNI")  // true, false, or nullopt for a name this host does not know
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gguflow::plugins {

// Whether this CPU has `feature` (CPUID); nullopt when the name is not one this host knows.
std::optional<bool> cpu_has_feature(const std::string& feature);

// Every feature name this host knows, in a fixed order (for messages and `gguflow kernels`).
const std::vector<std::string>& known_cpu_features();

}  // namespace gguflow::plugins
