// Errors in three tiers (docs/ARCHITECTURE.md):
//  - bad input (a file, YAML, a command line, a plugin): throw `gguflow::Error` whose message
//    names the input, the place, what was expected and what was found. The CLI prints it as one
//    line and exits non-zero.
//  - a broken internal invariant: `GGUFLOW_CHECK(cond)` aborts with file and line.
//  - nothing throws across a plugin boundary (plugins are plain C).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace gguflow {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Builds a message from any streamable parts: `throw error("file ", path, ": bad magic")`.
template <typename... Parts>
Error error(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return Error(out.str());
}

[[noreturn]] void check_failed(const char* condition, const char* file, int line);

}  // namespace gguflow

#define GGUFLOW_CHECK(condition) \
  ((condition) ? (void)0 : ::gguflow::check_failed(#condition, __FILE__, __LINE__))
