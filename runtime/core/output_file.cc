#include "runtime/core/output_file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "ops/error.h"
#include "runtime/core/input_registry.h"

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

// The path a result replaces: `path`, or for a symbolic link the path at the end of its chain
// (which need not exist yet), so that the link keeps pointing at the new file, as with `>`.
std::string replaced_path(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit on a chain
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw error(path, ": cannot read the symbolic link: ", ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw error(path, ": too many levels of symbolic links");
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
  // The process's own stdout by any of its names: the stream itself. Opened by path it would be
  // reopened (a file redirected with >> truncated) or, followed to the file behind it, replaced.
  if (path.empty() || path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1") {
    stream_ = stdout;
    name_ = "<stdout>";
    return;
  }
  name_ = path;
  // Another process-relative name (/dev/stderr, /dev/fd/N, /proc/PID/fd/N) stands for an open
  // file of a process, not a place to put a new file: written in place, never replaced.
  if (path.rfind("/dev/fd/", 0) == 0 || path.rfind("/proc/", 0) == 0 || path == "/dev/stderr") {
    open_in_place();
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {  // it exists (stat follows links)
    if (S_ISDIR(st.st_mode)) throw error(path, ": expected an output file name, found a directory");
    if (is_input_file(st.st_dev, st.st_ino))
      throw error(path, ": this is an input of the command; writing the output there would "
                  "destroy it: choose another output file");
    if (!S_ISREG(st.st_mode)) {
      // A device or FIFO (/dev/null, a pipe to another process) is written in place: renaming a
      // file over it would replace the device node itself.
      open_in_place();
      return;
    }
    // A file the user may not write stays as it is (the shell's `>` refuses it too); one that
    // is replaced keeps its permissions.
    if (::access(path.c_str(), W_OK) != 0)
      throw error(path, ": cannot write the output: ", std::strerror(errno));
    kept_mode_ = st.st_mode & 07777;
  }
  path_ = replaced_path(path);
  temp_path_ = path_ + ".tmp." + std::to_string(getpid());
  temp_slot_ = register_temp(temp_path_);
  stream_ = std::fopen(temp_path_.c_str(), "wb");
  if (!stream_) {
    const int err = errno;
    unregister_temp(temp_slot_);
    throw error(path, ": cannot create the output (", temp_path_, "): ", std::strerror(err));
  }
  if (kept_mode_ >= 0) ::fchmod(fileno(stream_), static_cast<mode_t>(kept_mode_));
}

void OutputFile::open_in_place() {
  stream_ = std::fopen(path_.c_str(), "wb");
  if (!stream_) throw error(path_, ": cannot open the output: ", std::strerror(errno));
  in_place_ = true;
}

OutputFile::~OutputFile() {
  if (in_place_ && !committed_ && stream_) std::fclose(stream_);
  if (committed_ || temp_path_.empty()) return;
  if (stream_) std::fclose(stream_);
  std::remove(temp_path_.c_str());
  unregister_temp(temp_slot_);
}

void OutputFile::commit() {
  GGUFLOW_CHECK(!committed_);
  committed_ = true;
  if (in_place_) {
    const bool flushed = std::fflush(stream_) == 0;
    const int saved = errno;
    const bool closed = std::fclose(stream_) == 0;
    stream_ = nullptr;
    if (!flushed || !closed) throw error(name_, ": write failed: ", std::strerror(flushed ? errno : saved));
    return;
  }
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
