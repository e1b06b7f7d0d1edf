// llama.cpp's tokenizer test vectors (shared/data/vocab/*.inp/.out): every string is its own
// test case and must tokenize to exactly the expected ids (no BOS, special text not parsed).
#include <gtest/gtest.h>

#include "runtime/tokenizer/tokenizer.h"
#include "tests/support/test_data.h"
#include "tests/tokenizer/tokenizer_test_util.h"

namespace gguflow {
namespace {

struct VectorCase {
  std::string vocab;  // "qwen2", ...
  size_t index;       // string number in the .inp file
};
void PrintTo(const VectorCase& c, std::ostream* out) { *out << c.vocab << " #" << c.index; }

// One case per string of the given files. The counts are read from the data when present; a
// checkout without the data gets one case per vocabulary that reports SKIPPED.
std::vector<VectorCase> cases_of(std::initializer_list<const char*> vocabs) {
  std::vector<VectorCase> cases;
  for (const char* vocab : vocabs) {
    const size_t n = test::vocab_vectors(vocab).size();
    for (size_t i = 0; i < std::max<size_t>(n, 1); ++i) cases.push_back({vocab, i});
  }
  return cases;
}

std::string case_name(const testing::TestParamInfo<VectorCase>& info) {
  std::string name = info.param.vocab + "_" + std::to_string(info.param.index);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

std::string ids_to_string(const std::vector<TokenId>& ids) {
  std::string out;
  for (TokenId id : ids) {
    out += ' ';
    out += std::to_string(id);
  }
  return out;
}

class VocabVectorTest : public testing::TestWithParam<VectorCase> {
 protected:
  void SetUp() override {
    const std::string file = "vocab/ggml-vocab-" + GetParam().vocab + ".gguf";
    if (!std::filesystem::exists(test::data_path(file + ".inp")))
      GTEST_SKIP() << "test data not found: " << test::data_path(file + ".inp");
    GGUFLOW_REQUIRE_DATA(file);
    tokenizer_ = &test::shared_tokenizer(file);
    vector_ = &test::vocab_vectors(GetParam().vocab).at(GetParam().index);
  }
  const Tokenizer* tokenizer_ = nullptr;
  const test::VocabVector* vector_ = nullptr;
};

TEST_P(VocabVectorTest, MatchesLlamaCpp) {
  const auto ids = tokenizer_->encode(vector_->text, {.add_special = false, .parse_special = false});
  EXPECT_EQ(ids_to_string(ids), ids_to_string(vector_->expected))
      << "text: \"" << vector_->text << "\"";
}

INSTANTIATE_TEST_SUITE_P(Vectors, VocabVectorTest,
                         testing::ValuesIn(cases_of({"llama-spm", "gpt-2", "qwen2", "bert-bge"})),
                         case_name);

// Decoding gives the text back for the lossless tokenizers (WordPiece lowercases and drops
// accents, so bert-bge is left out).
class RoundTripTest : public VocabVectorTest {};

TEST_P(RoundTripTest, DecodeOfEncodeIsTheText) {
  const auto ids = tokenizer_->encode(vector_->text, {.add_special = false, .parse_special = false});
  EXPECT_EQ(tokenizer_->decode(ids), vector_->text);
}

INSTANTIATE_TEST_SUITE_P(Vectors, RoundTripTest,
                         testing::ValuesIn(cases_of({"llama-spm", "gpt-2", "qwen2"})), case_name);

}  // namespace
}  // namespace gguflow
