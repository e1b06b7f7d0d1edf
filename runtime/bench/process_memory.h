// Resident-set readings of this process from /proc/self/status (Linux).
//
// Peak RSS per benchmark test: the kernel keeps one high-water mark per process (VmHWM). Since
// Linux 4.0 writing "5" to /proc/self/clear_refs resets it to the current RSS, so resetting it
// just before a test and reading it after gives the peak *during* that test (everything already
// resident, such as the mapped weights, included). Where the reset is refused (older kernels,
// restricted /proc), the reading is the peak since the process started; callers report which.
#pragma once

#include <cstdint>

namespace gguflow::bench {

// VmHWM (peak resident set) and VmRSS (current) in bytes; 0 when /proc is unavailable.
uint64_t peak_rss_bytes();
uint64_t current_rss_bytes();

// Resets VmHWM to the current RSS. Returns false when the kernel refused.
bool reset_peak_rss();

}  // namespace gguflow::bench
