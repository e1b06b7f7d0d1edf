// The op list and name lookup. Each op's unit defines its schema (ops/<op>_op.cc).
#include "ops/op_registry.h"

#include <algorithm>
#include <cstdlib>

namespace gguflow::ops {

// One function per op unit, defined in ops/<op>_op.cc.
const OpSchema& embed_op();
const OpSchema& rmsnorm_op();
const OpSchema& matmul_op();
const OpSchema& rope_op();
const OpSchema& attention_op();
const OpSchema& silu_mul_op();
const OpSchema& add_op();
const OpSchema& mul_op();
const OpSchema& pool_op();
const OpSchema& normalize_op();
const OpSchema& kv_project_op();
const OpSchema& kv_project_rope_op();
const OpSchema& scale_op();
const OpSchema& softcap_op();
const OpSchema& gelu_op();
const OpSchema& gelu_mul_op();
const OpSchema& slice_op();
const OpSchema& layernorm_op();
const OpSchema& add_row_op();
const OpSchema& embed_positions_op();

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const OpSchema* const> all_ops() {
  static const OpSchema* const list[] = {
      &embed_op(), &rmsnorm_op(), &matmul_op(),    &rope_op(),      &attention_op(),
      &silu_mul_op(), &add_op(),  &mul_op(),       &pool_op(),      &normalize_op(),
      &kv_project_op(), &scale_op(), &softcap_op(),   &gelu_op(),      &gelu_mul_op(),
      &slice_op(),    &layernorm_op(), &add_row_op(),  &embed_positions_op(),
      &kv_project_rope_op(),
  };
  return list;
}

const OpSchema* find_op(std::string_view name) {
  for (const OpSchema* op : all_ops())
    if (name == op->name) return op;
  return nullptr;
}

std::string closest_name(std::string_view word, std::span<const std::string> candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  // A plausible misspelling: at most a third of the word changed (and at least one edit allowed).
  if (best_distance > std::max<size_t>(1, (word.size() + 2) / 3)) return "";
  return best;
}

}  // namespace gguflow::ops
