#include "ops/error.h"

#include <cstdio>
#include <cstdlib>

namespace gguflow {

void check_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "gguflow: internal error: %s:%d: check failed: %s\n", file, line, condition);
  std::abort();
}

}  // namespace gguflow
