// `gguflow bench` end to end on stories260K with tiny tests (-p 8 -n 4 -r 2, a 16 MiB bandwidth
// buffer), checking the output formats and argument errors. No timing is asserted: tokens/s are
// only checked to be positive, finite and ordered min <= median <= max.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "tests/support/json_value.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

constexpr const char* kModel = "models/stories260K.gguf";

std::string bench_command(const std::string& options) {
  return (binary_dir() / "gguflow").string() + " bench --model " + data_path(kModel).string() +
         " --bandwidth-mib 16 " + options;
}

// Runs bench expecting success; returns stdout (and stderr in *err when given).
std::string run_bench_ok(const std::string& options, std::string* err = nullptr) {
  std::string out, errors;
  const int status = run_command(bench_command(options), &out, &errors);
  EXPECT_EQ(status, 0) << errors;
  if (err) *err = errors;
  return out;
}

// Weight bytes one decode step reads, computed independently of runtime/bench from the tensor
// table: every tensor in full, except the token embedding, which counts one row unless it is
// also the lm-head (no output.weight).
uint64_t expected_weight_bytes(const std::string& path) {
  auto file = GgufFile::open(path);
  bool tied = true;
  for (const GgufTensorInfo& t : file->tensors())
    if (t.name == "output.weight") tied = false;
  uint64_t total = 0;
  for (const GgufTensorInfo& t : file->tensors())
    total += (t.name == "token_embd.weight" && !tied) ? t.row_bytes() : t.n_bytes();
  return total;
}

TEST(BenchCli, JsonRowsHaveEveryKeyAndSaneNumbers) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const JsonValue rows = parse_json(run_bench_ok("-p 8 -n 4 -r 2 -t 1,2 --format json"));
  ASSERT_EQ(rows.kind, JsonValue::Kind::kArray);
  ASSERT_EQ(rows.array.size(), 4u);  // (pp8, tg4) x (1, 2 threads), in that order
  const char* tests[] = {"pp8", "tg4", "pp8", "tg4"};
  const int threads[] = {1, 1, 2, 2};
  const uint64_t model_bytes = std::filesystem::file_size(data_path(kModel));
  std::set<std::string> kernels;
  for (size_t i = 0; i < rows.array.size(); ++i) {
    const JsonValue& row = rows.array[i];
    SCOPED_TRACE("row " + std::to_string(i));
    for (const char* key : {"test", "threads", "kernels", "tokens_per_s_median", "tokens_per_s_min",
                            "tokens_per_s_max", "peak_rss_bytes", "seconds",
                            "bandwidth_bytes_per_s", "weight_bytes_per_token", "kv_cache_bytes"})
      ASSERT_TRUE(row.object.count(key) != 0) << key;
    EXPECT_EQ(row["test"].string, tests[i]);
    EXPECT_EQ(row["threads"].number, threads[i]);
    kernels.insert(row["kernels"].string);
    const double median = row["tokens_per_s_median"].number;
    const double lo = row["tokens_per_s_min"].number, hi = row["tokens_per_s_max"].number;
    EXPECT_TRUE(std::isfinite(lo) && lo > 0);
    EXPECT_LE(lo, median);
    EXPECT_LE(median, hi);
    EXPECT_TRUE(std::isfinite(hi));
    // Each repetition's seconds give back the reported rates.
    ASSERT_EQ(row["seconds"].array.size(), 2u);
    const double n = row["n_tokens"].number;
    const double r0 = n / row["seconds"].array[0].number, r1 = n / row["seconds"].array[1].number;
    EXPECT_NEAR(lo, std::min(r0, r1), 1e-6 * lo);
    EXPECT_NEAR(hi, std::max(r0, r1), 1e-6 * hi);
    // The process maps the model and runs a session: at least the file's pages can be resident,
    // and never terabytes.
    const double rss = row["peak_rss_bytes"].number;
    EXPECT_GT(rss, 1e6);
    EXPECT_LT(rss, 64e9);
    EXPECT_GT(row["bandwidth_bytes_per_s"].number, 1e8);  // > 0.1 GB/s on any machine
    EXPECT_EQ(row["weight_bytes_per_token"].number, expected_weight_bytes(data_path(kModel)));
    EXPECT_LT(row["weight_bytes_per_token"].number, static_cast<double>(model_bytes));
    // --ctx defaults to max(512, largest test).
    EXPECT_EQ(row["n_ctx"].number, 512);
    const bool tg = row["test"].string.rfind("tg", 0) == 0;
    EXPECT_EQ(row.object.count("roofline_fraction") != 0, tg);
    if (tg) {
      // The definition: tokens/s x weight bytes per token / bandwidth.
      const double expected = median * row["weight_bytes_per_token"].number /
                              row["bandwidth_bytes_per_s"].number;
      EXPECT_NEAR(row["roofline_fraction"].number, expected, 1e-9 + 1e-6 * expected);
      EXPECT_GT(row["roofline_fraction"].number, 0);
    }
  }
  EXPECT_EQ(kernels.size(), 1u);
  EXPECT_FALSE(kernels.begin()->empty());
}

// -d prefills a depth before the tg runs, -ctk/-ctv choose the cache: stories260K at the
// default ctx max(512, 8 + 2) has 5 layers x 512 rows x (34 + 18) bytes of q8_0 K, q4_0 V.
TEST(BenchCli, DepthAndCacheTypesAreReported) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const JsonValue rows = parse_json(run_bench_ok("-p 0 -n 2 -d 8 -r 2 -t 1 -ctk q8_0 -ctv q4_0 --format json"));
  ASSERT_EQ(rows.kind, JsonValue::Kind::kArray);
  ASSERT_EQ(rows.array.size(), 1u);
  EXPECT_EQ(rows.array[0]["n_depth"].number, 8);
  EXPECT_EQ(rows.array[0]["kv_cache_bytes"].number, 5 * 512 * (34 + 18));
  EXPECT_NE(rows.array[0]["kv_cache_summary"].string.find("K q8_0, V q4_0"), std::string::npos);
}

// A depth beyond a sliding window's ring (gemma2-tiny: 16 + 63 rows for 100 tokens) cannot be
// rewound: each run prefills it again and the bench still reports its rows.
TEST(BenchCli, DepthBeyondAWindowRingIsPrefilledPerRun) {
  const std::string gemma = "models/synth-gemma2-tiny-f32.gguf";
  GGUFLOW_REQUIRE_DATA(gemma);
  std::string out, err;
  const int status = run_command((binary_dir() / "gguflow").string() + " bench --model " + data_path(gemma).string() +
                                     " --bandwidth-mib 16 -p 0 -n 2 -d 100 -r 2 -t 1 --format json",
                                 &out, &err);
  ASSERT_EQ(status, 0) << err;
  const JsonValue rows = parse_json(out);
  ASSERT_EQ(rows.array.size(), 1u);
  EXPECT_EQ(rows.array[0]["n_depth"].number, 100);
  EXPECT_NE(rows.array[0]["kv_cache_summary"].string.find("(window ring)"), std::string::npos);
}

TEST(BenchCli, ForcedKernelsAreNamedInEveryRow) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const JsonValue rows = parse_json(run_bench_ok("-p 4 -n 2 -r 1 -t 1 --kernels scalar --format json"));
  ASSERT_EQ(rows.array.size(), 2u);
  for (const JsonValue& row : rows.array) EXPECT_EQ(row["kernels"].string, "scalar");
}

// A thread count above what oneTBB runs was measured at that many and labelled with the count
// asked for; it is lowered with a warning, as --threads of every command is, and measured once.
TEST(BenchCli, ThreadCountsAboveTheMachineAreLoweredNotMislabelled) {
  GGUFLOW_REQUIRE_DATA(kModel);
  std::string err;
  const std::string out = run_bench_ok("-p 0 -n 2 -r 1 -t 1,4096,4095 --format json", &err);
  const JsonValue rows = parse_json(out);
  ASSERT_GE(rows.array.size(), 1u);
  ASSERT_LE(rows.array.size(), 2u);
  for (const JsonValue& row : rows.array) EXPECT_LT(row["threads"].number, 4095);
  EXPECT_NE(err.find("gguflow: warning: --threads 4096: this machine runs at most "), std::string::npos) << err;
}

TEST(BenchCli, MarkdownTableHasOneLinePerTest) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const std::string out = run_bench_ok("-p 4,8 -n 2 -r 1 -t 1");
  EXPECT_NE(out.find("streaming read bandwidth, 1 thread(s):"), std::string::npos) << out;
  EXPECT_NE(out.find("| kernels | threads | test | t/s median | t/s min | t/s max | peak RSS | roofline |"),
            std::string::npos) << out;
  std::istringstream lines(out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0 && line.find("| 1 |") != std::string::npos) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << out;
  EXPECT_NE(rows[0].find("| pp4 |"), std::string::npos);
  EXPECT_NE(rows[1].find("| pp8 |"), std::string::npos);
  EXPECT_NE(rows[2].find("| tg2 |"), std::string::npos);
  EXPECT_NE(rows[2].find(" %"), std::string::npos);   // roofline for tg
  EXPECT_NE(rows[0].find("| - |"), std::string::npos);  // none for pp
}

TEST(BenchCli, CsvHasHeaderAndEqualFieldCounts) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const std::string out = run_bench_ok("-p 4 -n 2 -r 1 -t 1 --format csv");
  std::istringstream lines(out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << out;
  EXPECT_EQ(rows[0].rfind("test,n_tokens,threads,kernels,tokens_per_s_median,", 0), 0u);
  const auto fields = [](const std::string& s) { return std::count(s.begin(), s.end(), ',') + 1; };
  EXPECT_EQ(fields(rows[1]), fields(rows[0]));
  EXPECT_EQ(fields(rows[2]), fields(rows[0]));
  EXPECT_EQ(rows[1].rfind("pp4,4,1,", 0), 0u);
  EXPECT_EQ(rows[2].rfind("tg2,2,1,", 0), 0u);
}

struct BadArguments {
  std::string options;
  std::string message;  // a part of the one-line error
};

class BenchCliErrors : public ::testing::TestWithParam<BadArguments> {};

TEST_P(BenchCliErrors, OneLineErrorAndNonZeroExit) {
  GGUFLOW_REQUIRE_DATA(kModel);
  std::string out, err;
  const int status = run_command(bench_command(GetParam().options), &out, &err);
  EXPECT_NE(status, 0);
  EXPECT_NE(err.find(GetParam().message), std::string::npos) << err;
  // One error line; progress lines ("[bench] ...", plain off a terminal) may come before it.
  std::string errors;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("[bench] ", 0) != 0) errors += line + "\n";
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 1) << err;
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, BenchCliErrors,
    ::testing::Values(BadArguments{"-n 2 --format xml", "--format must be md, json or csv, found 'xml'"},
                      BadArguments{"-p 4,abc", "-p expects comma-separated integers, found '4,abc'"},
                      BadArguments{"-p 4 -t -1", "-t: thread counts must be 0..4096 (0: every core), found -1"},
                      BadArguments{"-p 4 -r 0", "-r must be 1..100000, found 0"},
                      BadArguments{"-p -3", "-p sizes must be 0..16777216"},
                      BadArguments{"-p 99999999999", "-p sizes must be 0..16777216"},
                      BadArguments{"-p 0 -n 0", "no test to run"},
                      BadArguments{"-p 600 -n 0 --ctx 256", "a test of 600 tokens does not fit in --ctx 256"},
                      BadArguments{"-p 0 -n 8 -d 250 --ctx 256",
                                   "a test of 8 tokens after 250 tokens of depth does not fit in --ctx 256"},
                      BadArguments{"-p 0 -n 2 -ctv q3_K", "--cache-type-v: expected one of f32, f16, q8_0, q4_0, found 'q3_K'"},
                      BadArguments{"-p 4 --model /nonexistent/model.gguf", "/nonexistent/model.gguf"},
                      BadArguments{"-p 4 --kernels nosuchplugin", "nosuchplugin"}));

TEST(BenchCli, ModelIsRequired) {
  std::string out, err;
  const int status = run_command((binary_dir() / "gguflow").string() + " bench -p 4", &out, &err);
  EXPECT_NE(status, 0);
  EXPECT_NE(err.find("--model FILE is required"), std::string::npos) << err;
}

}  // namespace
}  // namespace gguflow::test
