#include "ops/matmul.h"

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

struct MatmulCase {
  int64_t n = 32, rows = 10, n_act = 3;
  std::vector<float> w = test::random_floats(n * rows, 4);
  std::vector<float> x = test::random_floats(n * n_act, 5);
  std::vector<float> bias = test::random_floats(rows, 6);
  ops::WeightView view() const { return {GGML_TYPE_F32, w.data(), sizeof(float) * n, n, rows}; }

  std::vector<double> reference(int64_t n_used_act, bool with_bias) const {
    std::vector<double> y(n_used_act * rows);
    for (int64_t a = 0; a < n_used_act; ++a)
      for (int64_t r = 0; r < rows; ++r) {
        double s = with_bias ? bias[r] : 0.0;
        for (int64_t i = 0; i < n; ++i) s += double(w[r * n + i]) * x[a * n + i];
        y[a * rows + r] = s;
      }
    return y;
  }
};

TEST(MatmulOp, BatchWithBiasMatchesDoubleReference) {
  const auto& k = test::scalar_f32_test_kernels();
  MatmulCase c;
  const auto w = c.view();
  std::vector<uint8_t> act(ops::activation_row_bytes(k, w) * c.n_act);
  ops::quantize_activations(k, w, c.x.data(), c.n_act, act.data());
  std::vector<float> y(c.n_act * c.rows);
  ops::matmul_rows(k, w, act.data(), c.n_act, 0, c.rows, c.bias.data(), y.data(), c.rows);
  test::expect_close(y, c.reference(c.n_act, true), 1e-5, 1e-5);
}

TEST(MatmulOp, SingleRowUsesTheVectorPathAndRowSplitsAgreeBitForBit) {
  const auto& k = test::scalar_f32_test_kernels();
  MatmulCase c;
  const auto w = c.view();
  std::vector<uint8_t> act(ops::activation_row_bytes(k, w));
  ops::quantize_activations(k, w, c.x.data(), 1, act.data());
  std::vector<float> whole(c.rows), split(c.rows);
  ops::matmul_rows(k, w, act.data(), 1, 0, c.rows, nullptr, whole.data(), c.rows);
  ops::matmul_rows(k, w, act.data(), 1, 0, 4, nullptr, split.data(), c.rows);
  ops::matmul_rows(k, w, act.data(), 1, 4, 7, nullptr, split.data(), c.rows);
  ops::matmul_rows(k, w, act.data(), 1, 7, c.rows, nullptr, split.data(), c.rows);
  EXPECT_EQ(whole, split);
  test::expect_close(whole, c.reference(1, false), 1e-5, 1e-5);
}

TEST(MatmulOp, RejectsAWeightTypeWithoutKernel) {
  const std::vector<uint8_t> bytes(34);
  const ops::WeightView w{GGML_TYPE_Q8_0, bytes.data(), 34, 32, 1};
  try {
    ops::check_matmul_supported(test::scalar_f32_test_kernels(), w, "blk.0.attn_q.weight");
    FAIL() << "Q8_0 accepted by an F32-only table";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("blk.0.attn_q.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Q8_0"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace gguflow
