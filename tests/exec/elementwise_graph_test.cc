// The elementwise ops of issue 16 (scale, slice, gelu, gelu_mul, softcap) in a YAML graph bound
// to a real model and run by a Session, against a double-precision reference computed here
// from the model's embedding table: the graph language, the typed attributes (an expression,
// an int for a float, an enum) and the bound ops together.
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

constexpr const char* kGraph = R"(
graph: elementwise_ops
unused: ['*']   # a test of the elementwise ops: only the embedding table is read
params:
  n_embd: "{arch}.embedding_length"
inputs:
  tokens: {dtype: i32, shape: [T]}
outputs: [out]
nodes:
  - {name: embd, op: embed, tokens: tokens, weight: token_embd.weight, out: x}
  - {name: scaled, op: scale, x: x, factor: "${n_embd / 8}", out: x}   # = sqrt(n_embd) here: 64
  - {name: gate, op: slice, x: x, offset: 0, length: "${n_embd / 2}", out: gate}
  - {name: up, op: slice, x: x, offset: "${n_embd / 2}", length: "${n_embd / 2}", out: up}
  - {name: up_act, op: gelu, x: up, out: up}
  - {name: geglu, op: gelu_mul, gate: gate, up: up, approx: erf, out: g}
  - {name: cap, op: softcap, x: g, cap: 3, out: out}
)";

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

TEST(ElementwiseGraph, ScaleSliceGeluSoftcapMatchADoubleReference) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  auto model = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  const auto& table = model->tensor("token_embd.weight");
  ASSERT_EQ(table.type, GGML_TYPE_F32);
  const int64_t n_embd = static_cast<int64_t>(table.dims[0]), half = n_embd / 2;
  const float* embd = reinterpret_cast<const float*>(model->tensor_bytes(table).data());
  auto g = std::make_shared<const graph::Graph>(
      graph::load_graph_text(kGraph, "elementwise_ops.yaml", model));

  const std::vector<int32_t> tokens = {1, 403, 19, 7, 511, 250};
  std::vector<double> want;
  const double factor = static_cast<float>(n_embd / 8);
  for (int32_t t : tokens) {
    const float* e = embd + static_cast<int64_t>(t) * n_embd;
    for (int64_t i = 0; i < half; ++i) {
      const double gate = e[i] * factor, up = e[half + i] * factor;
      want.push_back(3.0 * std::tanh(gelu_erf(gate) * gelu_tanh(up) / 3.0));
    }
  }
  for (const auto& plugin : test::usable_kernel_plugins()) {
    SCOPED_TRACE(plugin.name);
    exec::Session session(g, *plugin.table);
    ASSERT_EQ(session.output_width(), half);
    std::vector<float> got;
    session.prefill(tokens, &got);
    ASSERT_EQ(got.size(), want.size());
    double max_abs = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-6 + 1e-6 * std::fabs(want[i])) << "at " << i;
      max_abs = std::max(max_abs, std::fabs(want[i]));
    }
    EXPECT_GT(max_abs, 0.5);  // the values are not all near 0 (a vacuous comparison)
    // A prompt whose caller keeps only the last row: softcap, the graph output, computes that
    // row alone (StepView::last_output_only), with the same values.
    session.reset();
    const auto last = session.prefill(tokens);
    ASSERT_EQ(static_cast<int64_t>(last.size()), half);
    for (int64_t i = 0; i < half; ++i)
      ASSERT_EQ(last[static_cast<size_t>(i)], got[(tokens.size() - 1) * half + i]);
    // Decode (one token per step) gives the same rows.
    session.reset();
    for (size_t t = 0; t < tokens.size(); ++t) {
      const auto row = session.decode(tokens[t]);
      for (int64_t i = 0; i < half; ++i)
        ASSERT_EQ(row[static_cast<size_t>(i)], got[t * half + i]) << "token " << t;
    }
  }
}

}  // namespace
}  // namespace gguflow
