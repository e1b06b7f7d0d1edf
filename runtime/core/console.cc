#include "runtime/core/console.h"

#include <sys/stat.h>
#include <unistd.h>

namespace gguflow::console {
namespace {

bool stdout_line_open = false;  // the last byte written to stdout was not '\n'

bool same_destination(int a, int b) {
  struct stat sa {}, sb {};
  if (fstat(a, &sa) != 0 || fstat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

bool is_terminal(FILE* stream) { return isatty(fileno(stream)) == 1; }

void wrote_to_stdout(std::string_view text) {
  if (!text.empty()) stdout_line_open = text.back() != '\n';
}

void start_stderr_line() {
  std::fflush(stdout);
  if (stdout_line_open && same_destination(STDOUT_FILENO, STDERR_FILENO)) {
    std::fputc('\n', stderr);
    stdout_line_open = false;
  }
}

std::string_view without_final_newline(std::string_view text) {
  if (text.ends_with("\r\n")) return text.substr(0, text.size() - 2);
  if (text.ends_with('\n')) return text.substr(0, text.size() - 1);
  return text;
}

}  // namespace gguflow::console
