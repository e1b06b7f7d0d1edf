#include "runtime/core/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ops/error.h"

namespace gguflow {

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
  stream_ = std::fopen(temp_path_.c_str(), "wb");
  if (!stream_) throw error(path, ": cannot create the output (", temp_path_, "): ", std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (committed_ || temp_path_.empty()) return;
  if (stream_) std::fclose(stream_);
  std::remove(temp_path_.c_str());
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
    throw error(path_, ": write failed: ", std::strerror(flushed ? errno : saved));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path_.c_str());
    throw error(path_, ": cannot rename ", temp_path_, " into place: ", std::strerror(err));
  }
}

}  // namespace gguflow
