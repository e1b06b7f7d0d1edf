#include "runtime/plugins/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace gguflow::plugins {
namespace {

// One CPUID bit: leaf, sub-leaf, register (0 EAX, 1 EBX, 2 ECX, 3 EDX) and bit.
struct CpuidBit {
  const char* name;
  unsigned leaf, subleaf;
  int reg, bit;
};

// AVX512VNNI: EVEX-encoded vpdpbusd / vpdpwssd (Cascade Lake, Ice Lake, Zen 4 and later).
// AVXVNNI: their VEX encoding (Alder Lake, Sapphire Rapids, Zen 5), which Highway 1.0.3's AVX3_DL
// build may emit. Both sit on top of AVX-512 / AVX2 state that the Highway target already
// checks the OS saves (XGETBV), so the bit alone decides.
constexpr CpuidBit kBits[] = {
    {"AVX512VNNI", 7, 0, 2, 11},
    {"AVXVNNI", 7, 1, 0, 4},
};

bool cpuid_bit(const CpuidBit& b) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(b.leaf, b.subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[b.reg] >> b.bit) & 1u;
#else
  (void)b;
  return false;
#endif
}

}  // namespace

std::optional<bool> cpu_has_feature(const std::string& feature) {
  for (const CpuidBit& b : kBits)
    if (feature == b.name) return cpuid_bit(b);
  return std::nullopt;
}

const std::vector<std::string>& known_cpu_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const CpuidBit& b : kBits) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

}  // namespace gguflow::plugins
