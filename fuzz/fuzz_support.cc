#include "fuzz/fuzz_support.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace gguflow::fuzz {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("GGUFLOW_TEST_DATA"); env && *env) return env;
  return GGUFLOW_TEST_DATA_DEFAULT;
}

std::filesystem::path source_dir() { return GGUFLOW_SOURCE_DIR; }

void note_clean_error(const std::exception& e) {
  static const bool verbose = [] {
    const char* v = std::getenv("GGUFLOW_FUZZ_VERBOSE");
    return v && *v && std::string(v) != "0";
  }();
  if (verbose) std::fprintf(stderr, "clean error: %s\n", e.what());
}

void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

void fail_setup(const std::string& message) {
  std::fprintf(stderr, "fuzz target setup failed: %s\n", message.c_str());
  std::exit(2);
}

namespace {
struct ScratchRoot {
  std::filesystem::path path;
  ScratchRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gguflow-fuzz-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) fail_setup("mkdtemp " + pattern + ": " + std::strerror(errno));
    path = pattern;
  }
  ~ScratchRoot() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
}  // namespace

std::filesystem::path scratch_dir() {
  static ScratchRoot root;
  return root.path;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail_setup("cannot write " + path.string());
}

MemoryFile::MemoryFile(const char* name) {
  fd_ = ::memfd_create(name, MFD_CLOEXEC);
  if (fd_ < 0) fail_setup(std::string("memfd_create: ") + std::strerror(errno));
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemoryFile::~MemoryFile() {
  if (fd_ >= 0) ::close(fd_);
}

void MemoryFile::assign(const uint8_t* data, size_t size) {
  if (::ftruncate(fd_, 0) != 0) fail_setup(std::string("ftruncate: ") + std::strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) fail_setup(std::string("pwrite: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

}  // namespace gguflow::fuzz
