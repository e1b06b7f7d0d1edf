// The add_row op: x + row `row` of a weight table, the same row for every token. BERT adds the
// token-type embedding of segment 0 this way: its reference runtime has no way to pass
// token-type ids, so every token of a single-segment input is of type 0.
#include "ops/add_row.h"
#include "ops/op_attrs.h"
#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {
namespace {

enum : size_t { kX = 0 };      // inputs
enum : size_t { kTable = 0 };  // weights

struct AddRowAttrs {
  int64_t row = 0;
};

const AttrList<AddRowAttrs>& attr_list() {
  static const AttrList<AddRowAttrs> list = AttrList<AddRowAttrs>().optional(
      "row", &AddRowAttrs::row, 0, "the table's row added to every token (0 <= row < rows)");
  return list;
}

std::string add_row_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kX, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, kTable, 2));
  const int64_t row = attr_list().parse(*q.attrs).row;
  const Shape& table = *q.weights[kTable];
  if (table[0] != q.inputs[kX]->dims[0])
    return "expected the table's ne0 to equal the input's ne0, found " + shape_of(q, false, kX) +
           " and " + shape_of(q, true, kTable);
  if (row < 0 || row >= table[1])
    return "expected 0 <= row < " + std::to_string(table[1]) + " (the rows of " +
           shape_of(q, true, kTable) + "), found row " + std::to_string(row);
  out->push_back(*q.inputs[kX]);
  return "";
}

BoundOp bind_add_row(Binder& b) {
  const int64_t n = row_length(*b.input_shape(kX));
  // Decoded once at bind (the table is small: a few rows of n_embd).
  const float* row = b.f32_weight(kTable) + attr_list().parse(b.attrs()).row * n;
  return {{}, [row, n](const StepView& s, const NodeIo& io) {
            add_row(at<const float>(s, io.inputs[kX]), row, at<float>(s, io.outputs[0]),
                    s.n_tokens, n);
          }};
}

}  // namespace

const OpSchema& add_row_op() {
  static const OpSchema op{
      "add_row", OpKind::kElementwise, "x + one row of a table, the same row for every token",
      {{"x", false, DType::kF32, "[n, T]"}},
      {{"weight", false, "table [n, rows] (token_types.weight)"}},
      attr_list().specs(),
      {{"out", DType::kF32}},
      "x [n, T], weight [n, rows] -> [n, T]",
      add_row_shape, bind_add_row, {}};
  return op;
}

}  // namespace gguflow::ops
