#include "tests/support/test_data.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gguflow::test {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("GGUFLOW_TEST_DATA"); env && *env) return env;
  return GGUFLOW_TEST_DATA_DEFAULT;
}

std::filesystem::path data_path(const std::string& relative) { return data_dir() / relative; }

std::filesystem::path binary_dir() { return GGUFLOW_BINARY_DIR; }
std::filesystem::path source_dir() { return GGUFLOW_SOURCE_DIR; }

namespace {
struct TempRoot {
  std::filesystem::path path;
  TempRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gguflow-test-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempRoot() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
}  // namespace

std::filesystem::path temp_dir() {
  static TempRoot root;
  static int counter = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  auto dir = root.path / (name + "." + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  return dir;
}

bool has_temporary_of(const std::filesystem::path& output) {
  const std::string prefix = output.filename().string() + ".tmp";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(output.parent_path(), ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

static std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_command(const std::string& command, std::string* out, std::string* err) {
  auto dir = temp_dir();
  auto out_path = dir / "stdout", err_path = dir / "stderr";
  std::string full = "(" + command + ") >'" + out_path.string() + "' 2>'" + err_path.string() + "' </dev/null";
  int status = std::system(full.c_str());
  if (out) *out = slurp(out_path);
  if (err) *err = slurp(err_path);
  if (status == -1) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace gguflow::test
