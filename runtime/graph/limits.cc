#include "runtime/graph/limits.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "ops/error.h"

namespace gguflow::graph {
namespace {

uint64_t env_limit(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0 || text[0] == '-')
    throw error(name, ": expected a positive integer, found '", text, "'");
  return v;
}

}  // namespace

GraphLimits graph_limits() {
  GraphLimits l;
  l.max_nodes = env_limit(kMaxNodesEnv, l.max_nodes);
  l.max_repeat = env_limit(kMaxRepeatEnv, l.max_repeat);
  return l;
}

}  // namespace gguflow::graph
