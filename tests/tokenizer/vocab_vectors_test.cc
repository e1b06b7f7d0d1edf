// llama.cpp's tokenizer test vectors (shared/data/vocab/*.inp/.out): every string of every
// vocabulary must tokenize to exactly the expected ids (no BOS, special text not parsed).
//
// One test per vocabulary that checks all of its strings, each failure naming its string. Not
// one test per string: ctest lists a build's cases when it is built, so a build made before
// ../shared/data was there listed one case per vocabulary and, run later with the data,
// checked only string #0 of each and reported all green.
#include <gtest/gtest.h>

#include "runtime/tokenizer/tokenizer.h"
#include "tests/support/test_data.h"
#include "tests/tokenizer/tokenizer_test_util.h"

namespace gguflow {
namespace {

std::string ids_to_string(const std::vector<TokenId>& ids) {
  std::string out;
  for (TokenId id : ids) {
    out += ' ';
    out += std::to_string(id);
  }
  return out;
}

// The parameter is the vocabulary: "qwen2" for vocab/ggml-vocab-qwen2.gguf(.inp/.out).
class VocabVectorTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string file = "vocab/ggml-vocab-" + GetParam() + ".gguf";
    if (!std::filesystem::exists(test::data_path(file + ".inp")))
      GTEST_SKIP() << "test data not found: " << test::data_path(file + ".inp");
    GGUFLOW_REQUIRE_DATA(file);
    tokenizer_ = &test::shared_tokenizer(file);
    vectors_ = &test::vocab_vectors(GetParam());
    ASSERT_FALSE(vectors_->empty()) << file << ".inp holds no test strings";
  }
  const Tokenizer* tokenizer_ = nullptr;
  const std::vector<test::VocabVector>* vectors_ = nullptr;
};

std::string case_name(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

TEST_P(VocabVectorTest, MatchesLlamaCpp) {
  for (size_t i = 0; i < vectors_->size(); ++i) {
    const test::VocabVector& v = (*vectors_)[i];
    const auto ids = tokenizer_->encode(v.text, {.add_special = false, .parse_special = false});
    EXPECT_EQ(ids_to_string(ids), ids_to_string(v.expected)) << "string #" << i << ": \"" << v.text << "\"";
  }
  RecordProperty("strings", static_cast<int>(vectors_->size()));
}

INSTANTIATE_TEST_SUITE_P(Vectors, VocabVectorTest,
                         testing::Values("llama-spm", "gpt-2", "qwen2", "bert-bge"), case_name);

// Decoding gives the text back for the lossless tokenizers (WordPiece lowercases and drops
// accents, so bert-bge is left out).
class RoundTripTest : public VocabVectorTest {};

TEST_P(RoundTripTest, DecodeOfEncodeIsTheText) {
  for (size_t i = 0; i < vectors_->size(); ++i) {
    const test::VocabVector& v = (*vectors_)[i];
    const auto ids = tokenizer_->encode(v.text, {.add_special = false, .parse_special = false});
    EXPECT_EQ(tokenizer_->decode(ids), v.text) << "string #" << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, RoundTripTest, testing::Values("llama-spm", "gpt-2", "qwen2"),
                         case_name);

}  // namespace
}  // namespace gguflow
