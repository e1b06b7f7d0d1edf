// The embed_positions op: rows of a learned position table indexed by the step's positions
// (BERT's position_embd). The positions come from the session (Feed::kPositions), never from
// the token ids; the numerics are embed's row lookup (ops/embed.h).
#include "ops/embed_op.h"
#include "ops/error.h"

namespace gguflow::ops {
namespace {

enum : size_t { kPositions = 0 };  // inputs
enum : size_t { kTable = 0 };      // weights

BoundOp bind_embed_positions(Binder& b) {
  const int64_t rows = b.weight(kTable).n_rows;
  // The session's positions run up to n_ctx - 1: a context longer than the table has positions
  // the model never learned, refused here rather than at the first long text.
  if (b.n_ctx() > rows)
    throw error(b.where(), ": the context of ", b.n_ctx(), " positions is longer than the ", rows,
                " rows of ", b.weight_name(kTable),
                " (the model's learned positions): expected --ctx at most ", rows);
  return bind_row_lookup(b, kPositions, kTable);
}

}  // namespace

const OpSchema& embed_positions_op() {
  static const OpSchema op{
      "embed_positions", OpKind::kPosition,
      "rows of a learned position table for the step's positions (absolute position embeddings)",
      {{"positions", false, DType::kI32, "positions [T]", Feed::kPositions}},
      {{"weight", false, "position table [n_embd, n_positions], any GGML type"}},
      {},
      {{"out", DType::kF32}},
      "positions [T], weight [n_embd, n_positions] -> [n_embd, T]; n_ctx <= n_positions",
      row_lookup_shape, bind_embed_positions, {}};
  return op;
}

}  // namespace gguflow::ops
