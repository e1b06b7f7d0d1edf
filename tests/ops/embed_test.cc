#include "ops/embed.h"

#include <gtest/gtest.h>

#include "ops/error.h"
#include "tests/ops/op_test_util.h"
#include "tests/ops/test_kernels.h"

namespace gguflow {
namespace {

TEST(EmbedOp, CopiesTheRowOfEachToken) {
  const int64_t n_embd = 6, n_vocab = 5;
  const auto table = test::random_floats(n_embd * n_vocab, 1);
  const ops::WeightView w{GGML_TYPE_F32, table.data(), sizeof(float) * n_embd, n_embd, n_vocab};
  const std::vector<int32_t> tokens = {3, 0, 4, 3};
  std::vector<float> out(tokens.size() * n_embd, -1.0f);
  ops::embed(test::scalar_f32_test_kernels(), w, tokens, out.data());
  for (size_t t = 0; t < tokens.size(); ++t)
    for (int64_t i = 0; i < n_embd; ++i)
      EXPECT_EQ(out[t * n_embd + i], table[tokens[t] * n_embd + i]) << "token " << t;
}

TEST(EmbedOp, RejectsTokenIdsOutsideTheVocabulary) {
  const std::vector<float> table(4 * 3);
  const ops::WeightView w{GGML_TYPE_F32, table.data(), sizeof(float) * 4, 4, 3};
  std::vector<float> out(4);
  for (int32_t bad : {3, -1}) {
    const std::vector<int32_t> tokens = {bad};
    try {
      ops::embed(test::scalar_f32_test_kernels(), w, tokens, out.data());
      FAIL() << "token " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("token id " + std::to_string(bad)), std::string::npos)
          << e.what();
    }
  }
}

TEST(EmbedOp, RejectsATypeTheKernelsCannotDecode) {
  const std::vector<uint8_t> bytes(18);
  const ops::WeightView w{GGML_TYPE_Q4_0, bytes.data(), 18, 32, 1};
  EXPECT_THROW(ops::check_embed_supported(test::scalar_f32_test_kernels(), w, "token_embd.weight"),
               Error);
}

}  // namespace
}  // namespace gguflow
