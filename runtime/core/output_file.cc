#include "runtime/core/output_file.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "ops/error.h"

namespace gguflow {
namespace {

// Temporary files of live OutputFiles, removed by a SIGTERM/SIGINT/SIGHUP handler so a killed
// `quantize` (or embed, lower, ...) leaves nothing behind. Fixed storage and unlink(2) only:
// the handler must be async-signal-safe (no allocation, no locks).
constexpr int kMaxTemps = 16;
constexpr size_t kMaxTempPath = 4096;
struct TempSlot {
  std::atomic<bool> used{false};
  char path[kMaxTempPath];
};
TempSlot g_temps[kMaxTemps];
std::mutex g_temps_mutex;  // registration only, never in the handler

extern "C" void remove_temps_and_die(int sig) {
  for (TempSlot& slot : g_temps)
    if (slot.used.load(std::memory_order_acquire)) ::unlink(slot.path);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // die of the same signal (exit status 128 + sig, as without the handler)
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      // Leave ignored signals and handlers someone else installed alone.
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction act {};
      act.sa_handler = remove_temps_and_die;
      sigemptyset(&act.sa_mask);
      ::sigaction(sig, &act, nullptr);
    }
  });
}

// The slot holding `path`, or -1 when the table is full or the path too long (the file is then
// only removed by the destructor, as before).
int register_temp(const std::string& path) {
  if (path.size() >= kMaxTempPath) return -1;
  install_handlers();
  std::lock_guard<std::mutex> lock(g_temps_mutex);
  for (int i = 0; i < kMaxTemps; ++i) {
    if (g_temps[i].used.load(std::memory_order_relaxed)) continue;
    std::memcpy(g_temps[i].path, path.c_str(), path.size() + 1);
    g_temps[i].used.store(true, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_temps_mutex);
  g_temps[slot].used.store(false, std::memory_order_release);
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path.empty() || path == "-") {
    stream_ = stdout;
    name_ = "<stdout>";
    return;
  }
  name_ = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw error(path, ": expected an output file name, found a directory");
  temp_path_ = path + ".tmp." + std::to_string(getpid());
  temp_slot_ = register_temp(temp_path_);
  stream_ = std::fopen(temp_path_.c_str(), "wb");
  if (!stream_) {
    const int err = errno;
    unregister_temp(temp_slot_);
    throw error(path, ": cannot create the output (", temp_path_, "): ", std::strerror(err));
  }
}

OutputFile::~OutputFile() {
  if (committed_ || temp_path_.empty()) return;
  if (stream_) std::fclose(stream_);
  std::remove(temp_path_.c_str());
  unregister_temp(temp_slot_);
}

void OutputFile::commit() {
  GGUFLOW_CHECK(!committed_);
  committed_ = true;
  if (temp_path_.empty()) {
    if (std::fflush(stream_) != 0) throw error(name_, ": write failed: ", std::strerror(errno));
    return;
  }
  const bool flushed = std::fflush(stream_) == 0 && fsync(fileno(stream_)) == 0;
  const int saved = errno;
  const bool closed = std::fclose(stream_) == 0;
  stream_ = nullptr;
  if (!flushed || !closed) {
    std::remove(temp_path_.c_str());
    unregister_temp(temp_slot_);
    throw error(path_, ": write failed: ", std::strerror(flushed ? errno : saved));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path_.c_str());
    unregister_temp(temp_slot_);
    throw error(path_, ": cannot rename ", temp_path_, " into place: ", std::strerror(err));
  }
  unregister_temp(temp_slot_);
}

}  // namespace gguflow
