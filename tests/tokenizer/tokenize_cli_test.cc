// `gguflow tokenize` and `gguflow detokenize` as a user runs them.
#include <gtest/gtest.h>

#include "tests/support/test_data.h"
#include "tests/tokenizer/tokenizer_test_util.h"

namespace gguflow {
namespace {

std::string gguflow_bin() { return (test::binary_dir() / "gguflow").string(); }
std::string model(const char* relative) { return test::data_path(relative).string(); }

// Runs `gguflow ARGS`; returns the exit status.
int gguflow(const std::string& arguments, std::string* out, std::string* err) {
  return test::run_command(gguflow_bin() + " " + arguments, out, err);
}

TEST(TokenizeCli, IdsOnlyMatchesTheLibraryAndAddsBos) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  std::string out, err;
  ASSERT_EQ(gguflow("tokenize --model " + model("models/stories260K.gguf") +
                        " --ids-only 'Once upon a time'",
                    &out, &err),
            0)
      << err;
  const auto ids = test::shared_tokenizer("models/stories260K.gguf").encode("Once upon a time");
  std::string expected;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) expected += ' ';
    expected += std::to_string(ids[i]);
  }
  EXPECT_EQ(out, expected + "\n");
  EXPECT_EQ(out.rfind("1 ", 0), 0u) << "BOS first";

  ASSERT_EQ(gguflow("tokenize --model " + model("models/stories260K.gguf") +
                        " --ids-only --no-bos 'Once upon a time'",
                    &out, &err),
            0);
  EXPECT_NE(out.rfind("1 ", 0), 0u) << out;
}

TEST(TokenizeCli, PrintsIdAndPiecePerLine) {
  GGUFLOW_REQUIRE_DATA("vocab/ggml-vocab-qwen2.gguf");
  std::string out, err;
  ASSERT_EQ(gguflow("tokenize --model " + model("vocab/ggml-vocab-qwen2.gguf") +
                        " --parse-special '<|im_start|>Hello world'",
                    &out, &err),
            0)
      << err;
  EXPECT_EQ(out, "151644 -> '<|im_start|>'\n  9707 -> 'Hello'\n  1879 -> ' world'\n");
}

TEST(TokenizeCli, UnknownSpecialTextIsPlainText) {
  GGUFLOW_REQUIRE_DATA("vocab/ggml-vocab-qwen2.gguf");
  std::string with, without, err;
  const std::string base = "tokenize --ids-only --model " + model("vocab/ggml-vocab-qwen2.gguf");
  ASSERT_EQ(gguflow(base + " --parse-special '<|no_such|>'", &with, &err), 0) << err;
  ASSERT_EQ(gguflow(base + " '<|no_such|>'", &without, &err), 0) << err;
  EXPECT_EQ(with, without);
  EXPECT_GT(with.size(), 8u);  // several ordinary tokens
}

TEST(TokenizeCli, InvalidUtf8IsAnErrorNamingTheOffset) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  std::string out, err;
  EXPECT_EQ(gguflow("tokenize --model " + model("models/stories260K.gguf") + " \"$(printf 'ab\\377')\"", &out,
                    &err),
            1);
  EXPECT_NE(err.find("byte offset 2"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line: " << err;
}

TEST(DetokenizeCli, GoldenIdsGiveTheGoldenText) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  GGUFLOW_REQUIRE_DATA("golden/stories260K.greedy_ids_from_bos.txt");
  std::string out, err;
  ASSERT_EQ(gguflow("detokenize --model " + model("models/stories260K.gguf") + " $(cat " +
                        model("golden/stories260K.greedy_ids_from_bos.txt") + ")",
                    &out, &err),
            0)
      << err;
  EXPECT_EQ(out, test::read_file_bytes(model("golden/stories260K.llama2c_greedy_expected.txt")));
}

TEST(DetokenizeCli, RoundTripsTokenizeIncludingSpecialTokens) {
  GGUFLOW_REQUIRE_DATA("vocab/ggml-vocab-qwen2.gguf");
  std::string ids, out, err;
  const std::string m = model("vocab/ggml-vocab-qwen2.gguf");
  ASSERT_EQ(gguflow("tokenize --ids-only --parse-special --model " + m +
                        " '<|im_start|>user\nCửa Việt 🦙<|im_end|>'",
                    &ids, &err),
            0)
      << err;
  ASSERT_EQ(gguflow("detokenize --render-special --model " + m + " '" + ids + "'", &out, &err), 0)
      << err;
  EXPECT_EQ(out, "<|im_start|>user\nCửa Việt 🦙<|im_end|>");
  ASSERT_EQ(gguflow("detokenize --model " + m + " '" + ids + "'", &out, &err), 0) << err;
  EXPECT_EQ(out, "user\nCửa Việt 🦙");
}

TEST(DetokenizeCli, OutOfRangeIdNamesTheIdAndVocabularySize) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  std::string out, err;
  EXPECT_EQ(gguflow("detokenize --model " + model("models/stories260K.gguf") + " 5 600", &out,
                    &err),
            1);
  EXPECT_NE(err.find("token id 600"), std::string::npos) << err;
  EXPECT_NE(err.find("512 tokens"), std::string::npos) << err;
  // Not an id at all: a malformed argument, a usage error (docs/CLI.md's exit status 2).
  EXPECT_EQ(gguflow("detokenize --model " + model("models/stories260K.gguf") + " 5 x7", &out, &err),
            2);
  EXPECT_NE(err.find("'x7'"), std::string::npos) << err;
}

}  // namespace
}  // namespace gguflow
