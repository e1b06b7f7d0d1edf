// Writers (jsonl, tsv, npy), the temporary-file output, cosine similarity and progress text,
// checked against hand-computed values and an independent reading of the NumPy format.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/embed/embed_writer.h"
#include "runtime/embed/progress.h"
#include "runtime/embed/similarity.h"
#include "tests/support/test_data.h"

namespace gguflow::embed {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes records through a writer into a temporary file and returns its bytes.
std::string write_all(OutputFormat format, int64_t dim, bool per_token,
                      const std::vector<std::pair<int64_t, std::vector<float>>>& records) {
  const auto path = test::temp_dir() / "out.bin";
  FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  {
    auto w = make_embedding_writer(format, f, path.string(), static_cast<int64_t>(records.size()),
                                   dim, per_token);
    for (const auto& [index, values] : records)
      w->write(index, values.data(), static_cast<int64_t>(values.size()) / dim);
    w->finish();
  }
  std::fclose(f);
  return slurp(path);
}

TEST(EmbedWriter, FloatsRoundTripExactly) {
  for (float v : {0.0f, -0.0f, 1.0f, 0.1f, -3.25e-5f, 1.17549435e-38f, 3.4028235e38f, 0.33333334f}) {
    std::string s;
    append_float(&s, v);
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), v) << s;
  }
  std::string s;
  append_float(&s, 0.5f);
  EXPECT_EQ(s, "0.5");
}

TEST(EmbedWriter, JsonlOneObjectPerText) {
  const std::string out = write_all(OutputFormat::kJsonl, 2, false, {{0, {0.5f, -1.0f}}, {3, {0.25f, 2.0f}}});
  EXPECT_EQ(out, "{\"index\": 0, \"embedding\": [0.5, -1]}\n{\"index\": 3, \"embedding\": [0.25, 2]}\n");
}

TEST(EmbedWriter, JsonlPerTokenNestsRows) {
  const std::string out = write_all(OutputFormat::kJsonl, 2, true, {{1, {1, 2, 3, 4, 5, 6}}});
  EXPECT_EQ(out, "{\"index\": 1, \"tokens\": 3, \"embedding\": [[1, 2], [3, 4], [5, 6]]}\n");
}

TEST(EmbedWriter, TsvIndexThenValues) {
  EXPECT_EQ(write_all(OutputFormat::kTsv, 3, false, {{0, {1, 0.5f, -2}}, {1, {0, 0, 0}}}),
            "0\t1\t0.5\t-2\n1\t0\t0\t0\n");
  EXPECT_EQ(write_all(OutputFormat::kTsv, 1, true, {{4, {7, 8}}}), "4\t0\t7\n4\t1\t8\n");
}

TEST(EmbedWriter, NpyHeaderAndDataFollowTheFormat) {
  const std::vector<float> a = {1.5f, -2.0f, 3.0f}, b = {0.0f, 0.125f, -1e-3f};
  const std::string out = write_all(OutputFormat::kNpy, 3, false, {{0, a}, {1, b}});
  // NumPy format 1.0: magic, version 1.0, little-endian u16 header length, a Python dict
  // literal padded with spaces and ended by '\n', total a multiple of 64; then C-order data.
  ASSERT_GE(out.size(), 10u);
  EXPECT_EQ(out.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(out[6], 1);
  EXPECT_EQ(out[7], 0);
  const size_t header_len = static_cast<unsigned char>(out[8]) | (static_cast<unsigned char>(out[9]) << 8);
  const size_t data_at = 10 + header_len;
  EXPECT_EQ(data_at % 64, 0u);
  const std::string dict = out.substr(10, header_len);
  EXPECT_EQ(dict.back(), '\n');
  EXPECT_NE(dict.find("'descr': '<f4'"), std::string::npos) << dict;
  EXPECT_NE(dict.find("'fortran_order': False"), std::string::npos) << dict;
  EXPECT_NE(dict.find("'shape': (2, 3)"), std::string::npos) << dict;
  ASSERT_EQ(out.size(), data_at + 6 * sizeof(float));
  float got[6];
  std::memcpy(got, out.data() + data_at, sizeof got);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i], a[i]);
    EXPECT_EQ(got[3 + i], b[i]);
  }
}

TEST(EmbedWriter, NpyRefusesPoolingNone) {
  FILE* f = std::tmpfile();
  try {
    make_embedding_writer(OutputFormat::kNpy, f, "x", 1, 4, true);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--pooling none"), std::string::npos) << e.what();
  }
  std::fclose(f);
  EXPECT_THROW(parse_output_format("csv"), Error);
}

TEST(OutputFileTest, RenamedOnlyOnCommit) {
  const auto dir = test::temp_dir() / "out";
  std::filesystem::create_directories(dir);
  const auto target = dir / "vectors.jsonl";
  {
    OutputFile out(target.string());
    std::fputs("partial\n", out.stream());
    EXPECT_FALSE(std::filesystem::exists(target));
  }  // not committed: nothing left behind
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  {
    OutputFile out(target.string());
    std::fputs("complete\n", out.stream());
    out.commit();
  }
  EXPECT_EQ(slurp(target), "complete\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  EXPECT_THROW(OutputFile((dir / "missing-dir" / "x").string()), Error);
}

TEST(Similarity, CosineOfKnownVectors) {
  // Rows: e1, 2*e1 (parallel), -e1 (opposite), e2 (orthogonal), (1,1)/..., zero.
  const std::vector<float> v = {1, 0, 2, 0, -1, 0, 0, 3, 1, 1, 0, 0};
  const auto m = cosine_matrix(v, 6, 2);
  EXPECT_DOUBLE_EQ(m[0 * 6 + 1], 1.0);
  EXPECT_DOUBLE_EQ(m[0 * 6 + 2], -1.0);
  EXPECT_DOUBLE_EQ(m[0 * 6 + 3], 0.0);
  EXPECT_NEAR(m[3 * 6 + 4], 1 / std::sqrt(2.0), 1e-15);
  EXPECT_EQ(m[5 * 6 + 0], 0.0);  // a zero vector is similar to nothing
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_EQ(m[i * 6 + j], m[j * 6 + i]);
}

TEST(Similarity, TableShowsValuesAndLegend) {
  const std::vector<float> v = {1, 0, 0, 1};
  const std::string t = similarity_table(cosine_matrix(v, 2, 2),
                                         {{0, 1, "first text"}, {12, 14, "second\ttext"}});
  EXPECT_NE(t.find("cosine similarity of 2 texts"), std::string::npos) << t;
  EXPECT_NE(t.find("[0]  1.000  0.000"), std::string::npos) << t;
  EXPECT_NE(t.find("[12]  0.000  1.000"), std::string::npos) << t;
  EXPECT_NE(t.find("[12] line 14: second text"), std::string::npos) << t;
}

TEST(Similarity, SnippetCutsWholeCharacters) {
  EXPECT_EQ(text_snippet("h\xC3\xA9llo world", 4), "h\xC3\xA9ll...");
  EXPECT_EQ(text_snippet("a\nb", 10), "a b");
  EXPECT_EQ(text_snippet("short", 5), "short");
}

TEST(ProgressText, BarRateEtaAndSummary) {
  EXPECT_EQ(Progress::bar_line(25, 100, 5.0, 8), "[##......]  25/100 texts  5.0 texts/s  ETA 15s");
  EXPECT_EQ(Progress::bar_line(0, 10, 0.0, 4), "[....]  0/10 texts  ETA ?");
  EXPECT_EQ(Progress::bar_line(10, 10, 2.0, 4), "[####] 10/10 texts  5.0 texts/s  ETA 0s");
  EXPECT_EQ(Progress::format_duration(125), "2m05s");
  EXPECT_EQ(Progress::format_duration(3 * 3600 + 120), "3h02m");
  EXPECT_EQ(Progress::summary_line(10, 250, 2.0),
            "embedded 10 texts (250 tokens) in 2.00 s: 5.0 texts/s, 125.0 tokens/s");
}

TEST(ProgressText, NonTerminalPrintsOnlyTheSummary) {
  FILE* f = std::tmpfile();
  Progress p(f, 3, false);
  p.update(1, 5);
  p.message("warning: something");
  p.update(3, 12);
  p.finish();
  std::rewind(f);
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string s(buf, n);
  EXPECT_EQ(s.find('\r'), std::string::npos) << s;
  EXPECT_EQ(s.rfind("warning: something\nembedded 3 texts (12 tokens) in ", 0), 0u) << s;
}

TEST(ProgressText, LiveBarRedrawsInPlace) {
  FILE* f = std::tmpfile();
  Progress p(f, 2, true);
  p.update(1, 5);
  p.update(2, 9);
  p.finish();
  std::rewind(f);
  char buf[1024] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string s(buf, n);
  EXPECT_EQ(s.rfind("\r[", 0), 0u) << s;
  EXPECT_NE(s.find("2/2 texts"), std::string::npos) << s;
  EXPECT_NE(s.find("\nembedded 2 texts (9 tokens)"), std::string::npos) << s;
}

}  // namespace
}  // namespace gguflow::embed
