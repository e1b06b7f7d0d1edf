// The memory-bandwidth roofline of decode.
//
// Decoding one token reads every weight matrix once (the lm-head included), and only one row of
// the token-embedding table; everything else (activations, the KV cache of short contexts) is
// small next to it. So with a streaming read bandwidth B (bytes/s) a decode step cannot take less
// than  weight_bytes_per_token / B  seconds, and
//
//   roofline_fraction = (weight_bytes_per_token / B) / seconds_per_token
//                     = tokens_per_s * weight_bytes_per_token / B
//
// 1.0 means decode runs at the speed of reading the weights; the KV cache reads are deliberately
// not counted (they make the fraction slightly pessimistic at long contexts).
#pragma once

#include <cstdint>

#include "runtime/graph/graph.h"

namespace gguflow::bench {

// Bytes of weights one decode step reads through `g`: every distinct weight tensor bound to a
// node counts in full, except tensors used only by `embed` nodes, which count one row each.
uint64_t weight_bytes_per_token(const graph::Graph& g);

// tokens_per_s * bytes_per_token / bandwidth_bytes_per_s (0 when the bandwidth is unknown).
double roofline_fraction(double tokens_per_s, uint64_t bytes_per_token,
                         double bandwidth_bytes_per_s);

}  // namespace gguflow::bench
