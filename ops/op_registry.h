// The op vocabulary as one explicit table (no static self-registration), indexed by `OpId`.
//
// Ops and their slots (shapes ne0 first, T = tokens in the step):
//   embed      tokens[T] i32, weight [n_embd, n_vocab]             -> [n_embd, T]
//   rmsnorm    x[n, T], weight [n]; eps                             -> [n, T]
//   matmul     x[k, T], weight [k, n] (any GGML type), bias? [n]    -> [n, T]
//   rope       x[head_dim*h, T], positions[T]; head_dim, n_rot, base, mode normal|neox -> [.., T]
//   attention  q[hd*n_head, T], k,v[hd*n_head_kv, T], positions[T]; n_head, n_head_kv, cache
//              (appends k and v at `positions` to the named kv_cache state, then causal GQA
//              softmax(q·k/sqrt(hd))·v over the cache)               -> [hd*n_head, T]
//   silu_mul   gate[n, T], up[n, T]                                  -> silu(gate)*up [n, T]
//   ffn        x[k, T], gate [k, n_ff], up [k, n_ff], down [n_ff, k] -> down(silu(gate x)*up x)
//   add, mul   a[..], b[..] same shape                               -> same shape
//   pool       x[n, T], positions?[T]; mode mean|sum|last|first|cls|none -> [n, 1] ([n, T] none)
//   normalize  x[n, R]; mode l2|none                                 -> [n, R]
//   kv_project q, k, v, positions as attention; k_basis [kv_row, r_K], k_mean [kv_row], v_basis
//              [kv_row, r_V], v_mean [kv_row]; n_head, n_head_kv, cache (attention over a
//              low-rank cache: stores c = basisᵀ(x − mean), r_K + r_V floats per token;
//              see ops/kv_project.h)                                 -> [hd*n_head, T]
#pragma once

#include <span>
#include <string_view>

#include "ops/op_schema.h"

namespace gguflow::ops {

// Every op, in `OpId` order.
std::span<const OpSchema> all_ops();
const OpSchema& op_schema(OpId id);
// nullptr when `name` is not an op.
const OpSchema* find_op(std::string_view name);

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible misspelling (used for "did you mean" hints).
std::string closest_name(std::string_view word, std::span<const std::string> candidates);

}  // namespace gguflow::ops
