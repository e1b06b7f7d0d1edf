// Runs one op unit the way a session does, without a graph or a session: its shape rule on
// given shapes and attributes, then its bind function through a minimal Binder (serial
// Parallel, f32 weights from vectors, the scalar test kernel table) and one step on a
// private arena. Lets op tests check shape-rule messages, bind-time attribute parsing and the
// bound closure's results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_schema.h"

namespace gguflow::test {

struct OpCase {
  std::string op;                        // registry name
  std::vector<ops::Shape> inputs;        // per input slot (kTokenDim for T)
  std::vector<ops::Shape> weights;       // per weight slot
  std::vector<std::vector<float>> weight_data;  // per weight slot, f32
  // Attributes as a node gives them; the harness fills declared defaults as the graph does.
  std::vector<std::pair<std::string, ops::AttrValue>> attrs;
  bool graph_output = false;  // the node produces the graph's output (Binder::writes_graph_output)
};

// The op's shape rule: "" and the output shapes, or its message.
std::string shape_message(const OpCase& c, std::vector<ops::Shape>* outputs = nullptr);

// Checks the shape rule, binds the op and runs one step of `n_tokens` tokens on `inputs` (one
// buffer per input slot, rows of T); returns output 0. Throws what the shape rule or bind
// throws (a shape-rule message as gguflow::Error). `last_output_only` sets the step's flag;
// `honoured`, when given, receives the BoundOp's writes_last_output_only.
// An i32 input (token ids, positions) is passed as its bit patterns: i32_input({3, 9}).
std::vector<float> run_op(const OpCase& c, const std::vector<std::vector<float>>& inputs,
                          int64_t n_tokens, bool last_output_only = false,
                          bool* honoured = nullptr);
std::vector<float> i32_input(const std::vector<int32_t>& values);

// The message the op's shape rule or bind function throws (gguflow::Error), or "" when the node
// binds. The test binder has f32 weights only: binding reaches "test binder: f32 weights only"
// when the op asks for a weight view.
std::string bind_error(const OpCase& c, int64_t n_tokens = 1);

}  // namespace gguflow::test
