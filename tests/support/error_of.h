// The message of the gguflow::Error a callable throws: tests of bad input assert on it.
#pragma once

#include <string>

#include "ops/error.h"

namespace gguflow::test {

// Runs `f` and returns the message of the gguflow::Error it throws, or "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace gguflow::test
