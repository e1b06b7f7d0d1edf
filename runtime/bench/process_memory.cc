#include "runtime/bench/process_memory.h"

#include <cstdio>
#include <cstring>

namespace gguflow::bench {
namespace {

// The value of a "Key:   1234 kB" line of /proc/self/status, in bytes; 0 when absent.
uint64_t status_kib_field(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  uint64_t value = 0;
  const size_t key_len = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
      unsigned long long kib = 0;
      if (std::sscanf(line + key_len + 1, "%llu", &kib) == 1) value = kib * 1024;
      break;
    }
  }
  std::fclose(f);
  return value;
}

}  // namespace

uint64_t peak_rss_bytes() { return status_kib_field("VmHWM"); }
uint64_t current_rss_bytes() { return status_kib_field("VmRSS"); }

bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool wrote = std::fputs("5", f) >= 0;
  const bool closed = std::fclose(f) == 0;
  return wrote && closed;
}

}  // namespace gguflow::bench
