#include "runtime/core/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ops/error.h"
#include "runtime/core/input_registry.h"

namespace gguflow {

std::string read_input_file(const std::string& path, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw error(path, ": cannot read the ", what, ": ", std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw error(path, ": cannot read the ", what, ": expected a regular file, found ",
                S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw error(path, ": cannot read the ", what, ": ", std::strerror(errno));
  remember_input_file(st.st_dev, st.st_ino);
  std::string bytes;
  char buffer[65536];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) bytes.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) throw error(path, ": cannot read the ", what, ": ", std::strerror(err));
  return bytes;
}

std::string read_stream(FILE* in) {
  std::string text;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, in)) > 0) text.append(buffer, n);
  // A directory or an unreadable descriptor on stdin read as empty text (tokenized, or a run
  // from BOS alone).
  if (std::ferror(in)) throw error("<stdin>: cannot read: ", std::strerror(errno));
  return text;
}

}  // namespace gguflow
