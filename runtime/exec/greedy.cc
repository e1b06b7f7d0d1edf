#include "runtime/exec/greedy.h"

#include <algorithm>

namespace gguflow::exec {

std::vector<int32_t> greedy_generate(Session& session, std::span<const int32_t> prompt,
                                     int64_t n_steps, std::span<const int32_t> stop_tokens,
                                     const std::function<void(int32_t)>& on_token) {
  std::vector<int32_t> out;
  if (n_steps <= 0) return out;
  std::span<const float> logits = session.prefill(prompt);
  for (int64_t i = 0; i < n_steps; ++i) {
    const int32_t next = argmax(logits);
    out.push_back(next);
    if (on_token) on_token(next);
    if (std::find(stop_tokens.begin(), stop_tokens.end(), next) != stop_tokens.end()) break;
    if (i + 1 == n_steps || session.n_past() >= session.n_ctx()) break;
    logits = session.decode(next);
  }
  return out;
}

}  // namespace gguflow::exec
