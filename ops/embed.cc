#include "ops/embed.h"

#include "ops/error.h"

namespace gguflow::ops {

void check_embed_supported(const GguflowKernels& k, const WeightView& table,
                           std::string_view weight_name) {
  if (table.type >= GGML_TYPE_COUNT || k.act_type[table.type] == GGML_TYPE_COUNT)
    throw error("embedding table ", weight_name, ": weight type ", type_name(table.type),
                " is not implemented by kernel plugin ", k.target_name);
}

void embed(const GguflowKernels& k, const WeightView& table, std::span<const int32_t> tokens,
           float* out) {
  for (size_t t = 0; t < tokens.size(); ++t) {
    const int32_t id = tokens[t];
    if (id < 0 || id >= table.n_rows)
      throw error("token id ", id, " at position ", t, " is out of range: the vocabulary has ",
                  table.n_rows, " tokens (0..", table.n_rows - 1, ")");
    if (table.pack_rows)  // a tied lm-head the session packed: decode the row from the copy
      k.dequantize_row_packed(table.type, table.data, table.row_bytes, table.n, id, out + t * table.n);
    else
      k.dequantize_row(table.type, table.row(id), out + t * table.n, table.n);
  }
}

}  // namespace gguflow::ops
