// Helpers shared by the libFuzzer targets in fuzz/: where the shared test data is, a scratch
// folder, and an in-memory file for APIs that read a path.
//
// Contract of every target: an input may end in gguflow::Error (the clean-error path, caught
// by the target); anything else (a crash, a sanitizer report, another exception escaping, a
// failed GGUFLOW_CHECK, an invariant the target checks) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

namespace gguflow::fuzz {

// $GGUFLOW_TEST_DATA, else the configured GGUFLOW_TEST_DATA (../shared/data).
std::filesystem::path data_dir();
// The source tree the targets were built from (the shipped graphs are in graphs/).
std::filesystem::path source_dir();

// With GGUFLOW_FUZZ_VERBOSE=1 in the environment, prints the message of a clean error (to see
// what a seed or a corpus entry runs into); otherwise does nothing.
void note_clean_error(const std::exception& e);

// Reports a broken invariant the target checks (printed, then abort(): libFuzzer saves the
// input as a crash).
[[noreturn]] void finding(const std::string& what);
#define GGUFLOW_FUZZ_EXPECT(condition, what) \
  ((condition) ? (void)0 : ::gguflow::fuzz::finding(std::string(#condition ": ") + (what)))

// Stops the fuzzer during initialization (missing data the target cannot work without).
[[noreturn]] void fail_setup(const std::string& message);

// A fresh folder under $TMPDIR (or /tmp), removed when the process exits normally.
std::filesystem::path scratch_dir();

// Writes `bytes` to `path` (replacing it); fail_setup on an I/O error.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// An anonymous in-memory file (memfd) reachable by a path, /proc/self/fd/N, whose contents
// each input replaces: for readers that only take a path, without disk I/O per input.
class MemoryFile {
 public:
  explicit MemoryFile(const char* name);
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  void assign(const uint8_t* data, size_t size);
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace gguflow::fuzz
