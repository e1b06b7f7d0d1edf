// embed: token ids -> rows of the embedding table, decoded from any weight type.
#pragma once

#include <cstdint>
#include <span>

#include "ops/weight_view.h"
#include "plugins/abi/kernel_abi.h"

namespace gguflow::ops {

// Throws gguflow::Error when the kernel table cannot decode `table.type`.
void check_embed_supported(const GguflowKernels& k, const WeightView& table,
                           std::string_view weight_name);

// out[t][0..table.n) = row tokens[t] of `table` ([n_embd, n_vocab]: row t is token t), which
// may be row-major or packed (WeightView::pack_rows).
// out: [tokens.size()][table.n] f32. Throws gguflow::Error naming the token id when one is
// outside [0, table.n_rows).
void embed(const GguflowKernels& k, const WeightView& table, std::span<const int32_t> tokens,
           float* out);

}  // namespace gguflow::ops
