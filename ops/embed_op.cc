// The embed op: token ids [T] -> rows of the embedding table [n_embd, T].
#include "ops/embed_op.h"

#include "ops/embed.h"
#include "ops/error.h"
#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kTokens = 0 };        // inputs
enum : size_t { kTable = 0 };         // weights

BoundOp bind_embed(Binder& b) { return bind_row_lookup(b, kTokens, kTable); }

}  // namespace

std::string row_lookup_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kTokens, 1));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, kTable, 2));
  out->push_back(Shape{{q.weights[kTable]->dims[0], q.inputs[kTokens]->dims[0]}});
  return "";
}

BoundOp bind_row_lookup(Binder& b, size_t ids_slot, size_t table_slot) {
  try {
    check_embed_supported(b.kernels(), b.weight(table_slot), b.weight_name(table_slot));
  } catch (const Error& e) {
    throw error(b.where(), ": ", e.what());
  }
  // Through the session's slot: packed once decode starts if a matmul also uses the table.
  const WeightView* table = b.weight_slot(table_slot, /*matmul=*/false);
  const GguflowKernels& k = b.kernels();
  return {{}, [&k, table, ids_slot](const StepView& s, const NodeIo& io) {
            const std::span<const int32_t> ids(at<const int32_t>(s, io.inputs[ids_slot]),
                                               static_cast<size_t>(s.n_tokens));
            embed(k, *table, ids, at<float>(s, io.outputs[0]));
          }};
}

const OpSchema& embed_op() {
  static const OpSchema op{
      "embed", OpKind::kEmbed, "rows of the embedding table for token ids",
      {{"tokens", false, DType::kI32, "token ids [T]", Feed::kTokenIds, kTable}},
      {{"weight", false, "embedding table [n_embd, n_vocab], any GGML type"}},
      {},
      {{"out", DType::kF32}},
      "tokens [T], weight [n_embd, n_vocab] -> [n_embd, T]",
      row_lookup_shape, bind_embed, {}};
  return op;
}

}  // namespace gguflow::ops
