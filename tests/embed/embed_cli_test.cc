// `gguflow embed` end to end on stories260K: formats agree, order and batching do not change a
// vector, --pooling none then a mean equals --pooling mean, truncation warnings, the similarity
// table, bad input errors with line numbers and no partial output, and `gguflow lower` of the
// embedding graph without an lm-head.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/test_data.h"

namespace gguflow {
namespace {

namespace fs = std::filesystem;
constexpr const char* kModel = "models/stories260K.gguf";
constexpr size_t kDim = 64;

const std::vector<std::string> kTexts = {
    "Once upon a time, there was a little girl named Lily.",
    "She liked to play outside in the sun.",
    "One day, she saw a big dog.",
    "The dog was sad because it lost its ball.",
    "Lily helped the dog look for the ball.",
    "They found it under a tree and were happy.",
};

struct Result {
  int status = 0;
  std::string out, err;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

Result embed(const std::string& args) {
  Result r;
  const std::string cmd = quote((test::binary_dir() / "gguflow").string()) + " embed --model " +
                          quote(test::data_path(kModel).string()) + " --threads 2 " + args;
  r.status = test::run_command(cmd, &r.out, &r.err);
  return r;
}

fs::path write_file(const std::string& name, const std::string& bytes) {
  const fs::path p = test::temp_dir() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string lines(const std::vector<std::string>& texts) {
  std::string s;
  for (const auto& t : texts) s += t + "\n";
  return s;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Parses `{"index": i, ["tokens": T, ]"embedding": [...]}` lines: index -> all floats in order.
std::map<int64_t, std::vector<float>> parse_jsonl(const std::string& out) {
  std::map<int64_t, std::vector<float>> m;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    EXPECT_EQ(line.rfind("{\"index\": ", 0), 0u) << line;
    const int64_t index = std::stoll(line.substr(10));
    std::vector<float>& v = m[index];
    const char* p = line.c_str() + line.find("\"embedding\": ") + 13;
    while (*p) {
      if ((*p >= '0' && *p <= '9') || *p == '-') {
        char* end = nullptr;
        v.push_back(std::strtof(p, &end));
        p = end;
      } else {
        ++p;
      }
    }
  }
  return m;
}

TEST(EmbedCli, HelpDocumentsEmptyLinesAndPoolingNone) {
  std::string out;
  ASSERT_EQ(test::run_command(quote((test::binary_dir() / "gguflow").string()) + " embed --help", &out), 0);
  EXPECT_NE(out.find("--skip-empty"), std::string::npos) << out;
  EXPECT_NE(out.find("empty text is an error"), std::string::npos) << out;
  EXPECT_NE(out.find("--pooling none keeps every token"), std::string::npos) << out;
}

TEST(EmbedCli, LoweredEmbedGraphHasNoLmHead) {
  GGUFLOW_REQUIRE_DATA(kModel);
  std::string out, err;
  const std::string cmd = quote((test::binary_dir() / "gguflow").string()) + " lower " +
                          quote(test::data_path(kModel).string()) + " --graph " +
                          quote((test::source_dir() / "graphs" / "embed.yaml").string());
  ASSERT_EQ(test::run_command(cmd, &out, &err), 0) << err;
  EXPECT_EQ(out.find("lm_head"), std::string::npos);
  EXPECT_EQ(out.find("logits"), std::string::npos);
  EXPECT_EQ(out.find("{tensor: output.weight"), std::string::npos);  // not attn_output
  EXPECT_NE(out.find("name: pool"), std::string::npos);
  EXPECT_NE(out.find("name: normalize"), std::string::npos);
}

TEST(EmbedCli, OrderAndBatchingDoNotChangeVectors) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const fs::path forward = write_file("forward.txt", lines(kTexts));
  std::vector<std::string> reversed(kTexts.rbegin(), kTexts.rend());
  const fs::path backward = write_file("backward.txt", lines(reversed));

  const Result a = embed("--input " + quote(forward.string()) + " --batch-size 4");
  ASSERT_EQ(a.status, 0) << a.err;
  const Result b = embed("--input " + quote(backward.string()) + " --batch-size 1");
  ASSERT_EQ(b.status, 0) << b.err;
  const auto va = parse_jsonl(a.out), vb = parse_jsonl(b.out);
  ASSERT_EQ(va.size(), kTexts.size());
  ASSERT_EQ(vb.size(), kTexts.size());
  const int64_t n = static_cast<int64_t>(kTexts.size());
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(va.at(i).size(), kDim);
    EXPECT_EQ(va.at(i), vb.at(n - 1 - i)) << "text " << i;
  }
  // One text per process (a fresh session each) gives the same vectors as the batch.
  for (int64_t i = 0; i < n; ++i) {
    const fs::path one = write_file("one.txt", kTexts[i] + "\n");
    const Result r = embed("--input " + quote(one.string()));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(parse_jsonl(r.out).at(0), va.at(i)) << "text " << i;
  }
  // Records come in input order.
  int64_t expect = 0;
  for (const auto& [index, v] : va) EXPECT_EQ(index, expect++);
  EXPECT_EQ(a.out.find("{\"index\": 0,"), 0u);
}

TEST(EmbedCli, StdinJsonlTsvAndNpyAgree) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const fs::path text = write_file("in.txt", lines({kTexts[0], kTexts[1], kTexts[2]}));
  std::string jsonl_in;
  for (int i = 0; i < 3; ++i) jsonl_in += "{\"id\": " + std::to_string(i) + ", \"text\": \"" + kTexts[i] + "\"}\n";
  const fs::path jsonl = write_file("in.jsonl", jsonl_in);

  const Result ref = embed("--input - < " + quote(text.string()));
  ASSERT_EQ(ref.status, 0) << ref.err;
  const auto vectors = parse_jsonl(ref.out);
  ASSERT_EQ(vectors.size(), 3u);

  const Result from_jsonl = embed("--input " + quote(jsonl.string()));
  ASSERT_EQ(from_jsonl.status, 0) << from_jsonl.err;
  EXPECT_EQ(parse_jsonl(from_jsonl.out), vectors);

  const Result tsv = embed("--input " + quote(text.string()) + " --format tsv");
  ASSERT_EQ(tsv.status, 0) << tsv.err;
  std::istringstream rows(tsv.out);
  int64_t row = 0;
  for (std::string line; std::getline(rows, line); ++row) {
    std::istringstream cells(line);
    std::string cell;
    std::getline(cells, cell, '\t');
    EXPECT_EQ(cell, std::to_string(row));
    std::vector<float> v;
    while (std::getline(cells, cell, '\t')) v.push_back(std::strtof(cell.c_str(), nullptr));
    EXPECT_EQ(v, vectors.at(row));
  }
  EXPECT_EQ(row, 3);

  const fs::path npy = test::temp_dir() / "v.npy";
  const Result n = embed("--input " + quote(text.string()) + " --format npy -o " + quote(npy.string()));
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_TRUE(n.out.empty());
  const std::string bytes = slurp(npy);
  ASSERT_GT(bytes.size(), 10u);
  const size_t header = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_NE(bytes.find("'shape': (3, 64)"), std::string::npos);
  ASSERT_EQ(bytes.size(), 10 + header + 3 * kDim * sizeof(float));
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> v(kDim);
    std::memcpy(v.data(), bytes.data() + 10 + header + r * kDim * sizeof(float), kDim * sizeof(float));
    EXPECT_EQ(v, vectors.at(static_cast<int64_t>(r)));
  }
  // Not a terminal: one summary line with the throughput.
  EXPECT_NE(n.err.find("embedded 3 texts ("), std::string::npos) << n.err;
  EXPECT_NE(n.err.find("texts/s"), std::string::npos) << n.err;
  EXPECT_NE(n.err.find("tokens/s"), std::string::npos) << n.err;
  EXPECT_EQ(n.err.find('\r'), std::string::npos);
}

TEST(EmbedCli, PoolingNoneThenMeanEqualsPoolingMean) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const fs::path in = write_file("in.txt", lines(kTexts));
  const Result none = embed("--input " + quote(in.string()) + " --pooling none --normalize none");
  ASSERT_EQ(none.status, 0) << none.err;
  const Result mean = embed("--input " + quote(in.string()) + " --pooling mean --normalize none");
  ASSERT_EQ(mean.status, 0) << mean.err;
  const auto rows = parse_jsonl(none.out), means = parse_jsonl(mean.out);
  ASSERT_EQ(rows.size(), kTexts.size());
  for (const auto& [index, all] : rows) {
    ASSERT_EQ(all.size() % kDim, 0u);
    const size_t tokens = all.size() / kDim;
    ASSERT_GT(tokens, 1u);
    EXPECT_NE(none.out.find("\"index\": " + std::to_string(index) + ", \"tokens\": " + std::to_string(tokens)),
              std::string::npos);
    for (size_t i = 0; i < kDim; ++i) {
      double m = 0;
      for (size_t t = 0; t < tokens; ++t) m += all[t * kDim + i];
      // A float mean against a double one: a few ulps of values up to ~10 (1 ulp of 8 is 1e-6).
      EXPECT_NEAR(means.at(index)[i], m / tokens, 1e-6 * std::max(1.0, std::abs(m / tokens)))
          << index << "[" << i << "]";
    }
  }
  const Result npy = embed("--input " + quote(in.string()) + " --pooling none --format npy -o " +
                           quote((test::temp_dir() / "x.npy").string()));
  EXPECT_NE(npy.status, 0);
  EXPECT_NE(npy.err.find("--pooling none"), std::string::npos) << npy.err;
}

TEST(EmbedCli, LongTextIsTruncatedWithAWarningNamingTheLine) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const fs::path in = write_file("long.txt", "Hi.\n" + kTexts[0] + " " + kTexts[1] + "\n");
  const Result r = embed("--input " + quote(in.string()) + " --ctx 8 --pooling none");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + in.string() + ":2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated to the first 8"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(in.string() + ":1:"), std::string::npos) << r.err;
  // Both texts are there; the long one with exactly 8 token rows.
  const auto v = parse_jsonl(r.out);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.at(1).size(), 8 * kDim);
  EXPECT_NE(r.out.find("\"index\": 1, \"tokens\": 8,"), std::string::npos);
}

TEST(EmbedCli, SimilarityTableMatchesTheVectors) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const fs::path in = write_file("in.txt", lines({kTexts[0], kTexts[2], kTexts[3]}));
  const fs::path vec = test::temp_dir() / "v.jsonl";
  const Result r = embed("--input " + quote(in.string()) + " --similarity -o " + quote(vec.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto v = parse_jsonl(slurp(vec));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_NE(r.out.find("cosine similarity of 3 texts"), std::string::npos) << r.out;
  std::istringstream table(r.out);
  std::string line;
  std::getline(table, line);  // title
  std::getline(table, line);  // column labels
  for (int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(std::getline(table, line));
    std::istringstream cells(line);
    std::string label;
    cells >> label;
    EXPECT_EQ(label, "[" + std::to_string(i) + "]");
    for (int64_t j = 0; j < 3; ++j) {
      double shown = 0;
      cells >> shown;
      double dot = 0, ni = 0, nj = 0;
      for (size_t k = 0; k < kDim; ++k) {
        dot += double(v.at(i)[k]) * v.at(j)[k];
        ni += double(v.at(i)[k]) * v.at(i)[k];
        nj += double(v.at(j)[k]) * v.at(j)[k];
      }
      EXPECT_NEAR(shown, dot / std::sqrt(ni * nj), 0.0005 + 1e-9) << i << "," << j;
    }
  }
  EXPECT_NE(r.out.find("[2] line 3: The dog was sad"), std::string::npos) << r.out;
}

// Each bad input: a non-zero exit, one message naming the file and line, nothing on stdout, and
// no output file (nor its temporary) left behind.
void expect_input_error(const std::string& name, const std::string& bytes, const std::string& needle,
                        const std::string& extra = "") {
  const fs::path in = write_file(name, bytes);
  const fs::path dir = test::temp_dir() / ("out-" + name);
  fs::create_directories(dir);
  const Result r = embed("--input " + quote(in.string()) + " -o " + quote((dir / "v.jsonl").string()) + " " + extra);
  EXPECT_NE(r.status, 0) << name;
  EXPECT_NE(r.err.find(needle), std::string::npos) << name << ": " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(fs::is_empty(dir)) << name;
}

TEST(EmbedCli, BadInputsNameTheLine) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const std::string dir = test::temp_dir().string();
  expect_input_error("utf8.txt", "fine\nalso fine\nbad \xFF byte\n", "utf8.txt:3: expected UTF-8 text");
  expect_input_error("garbage.bin", std::string("\x7f" "ELF\x02\x01\x01\x00\x00\x00\x00\x00", 12) + "\n",
                     "garbage.bin:1: expected text, found a NUL byte");
  expect_input_error("notext.jsonl", "{\"text\": \"ok\"}\n{\"body\": \"x\"}\n",
                     "notext.jsonl:2: expected a JSON object with a \"text\" field");
  expect_input_error("empty.txt", "one\n\nthree\n", "empty.txt:2: expected a text to embed, found an empty line");

  const Result missing = embed("--input " + quote(dir + "/no-such-file.txt"));
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("no-such-file.txt: cannot open the input"), std::string::npos) << missing.err;
}

TEST(EmbedCli, SkipEmptyKeepsTheOriginalIndex) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const fs::path in = write_file("gaps.txt", kTexts[0] + "\n\n" + kTexts[1] + "\n");
  const Result r = embed("--input " + quote(in.string()) + " --skip-empty");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto v = parse_jsonl(r.out);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v.count(0) && v.count(2));
  EXPECT_NE(r.err.find("1 empty text skipped"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gguflow
