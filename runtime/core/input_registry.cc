#include "runtime/core/input_registry.h"

#include <sys/stat.h>

#include <mutex>
#include <set>
#include <utility>

namespace gguflow {
namespace {

std::mutex g_mutex;
std::set<std::pair<dev_t, ino_t>>& inputs() {
  static std::set<std::pair<dev_t, ino_t>> files;  // a handful per process
  return files;
}

}  // namespace

void remember_input_file(dev_t device, ino_t inode) {
  std::lock_guard lock(g_mutex);
  inputs().emplace(device, inode);
}

void remember_input_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) remember_input_file(st.st_dev, st.st_ino);
}

bool is_input_file(dev_t device, ino_t inode) {
  std::lock_guard lock(g_mutex);
  return inputs().count({device, inode}) > 0;
}

}  // namespace gguflow
