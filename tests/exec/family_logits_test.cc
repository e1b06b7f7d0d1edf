// The model families beyond llama/qwen2 (graphs/qwen3.yaml, gemma2.yaml, gemma3.yaml, phi3.yaml,
// and Llama 3.x rope_freqs in decode.yaml) against logits of an independent runtime
// (ik_llama.cpp, ../shared/data/reference/ARCHS.md), with the graph chosen from the model as
// `gguflow run` chooses it, through every kernel plugin this CPU runs, at 1 and 2 threads.
//
// The reference stored V in f16 (ARCHS.md 0.3): an f32 cache differs by up to ~6e-4 in a logit,
// so f32 models are held to NRMSE <= 1e-3 and the same argmax everywhere.
//
// Quantized models: the reference quantizes activations in a block format of its own
// (Q8_2_X4), so no implementation reproduces its bits; ARCHS.md 0.3 measured an exact float64
// pass over the dequantized weights 1-4 % (relative RMS) away from them. Two checks:
//  - NRMSE against the reference's quantized logits <= 0.03 (qwen3, phi3: measured 0.013-0.020)
//    and <= 0.05 for the gemma fixtures (measured 0.028-0.049: 26 and 6 layers of 64/128 values
//    amplify activation-rounding differences; the 0.03 is not met there, and cannot be
//    without the reference's own rounding: the exact product of the dequantized weights is 0.033
//    and 0.039 from it on gemma2 s2; docs/ADDING_A_FAMILY.md, tools/quantized_fixture_noise.py);
//  - our quantization error, NRMSE against the reference's f32 logits, is at most 1.15 x the
//    reference's own (its quantized against its f32 logits): we lose no more accuracy to the
//    quantized weights than the reference does (measured ratios 0.95-1.07).
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "runtime/exec/greedy.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "ops/kv_cache_type.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

struct Family {
  const char* model;  // synth-<model>-{f32,Q8_0,Q4_K_M}
  bool quantized_files;
};
const Family kFamilies[] = {
    {"synth-qwen3-tiny", true}, {"synth-gemma2-tiny", true}, {"synth-gemma3-tiny", true},
    {"synth-phi3-tiny", true},  {"synth-llama3-tiny", false},
};

struct Case {
  std::string stem;  // reference/logits/<stem>.{bin,json}
  double max_nrmse;
  bool argmax_everywhere;
  std::string f32_stem;  // quantized models: the same sequence on the f32 model
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.stem; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Family& f : kFamilies)
    for (const char* seq : {"s1", "s2"}) {
      const std::string f32 = std::string(f.model) + "-f32." + seq;
      out.push_back({f32, 1e-3, true, ""});
      if (!f.quantized_files) continue;
      const bool gemma = std::string(f.model).find("gemma") != std::string::npos;
      for (const char* type : {"Q8_0", "Q4_K_M"})
        out.push_back({std::string(f.model) + "-" + type + "." + seq, gemma ? 0.05 : 0.03, false, f32});
    }
  return out;
}

// rms(got - ref) / rms(ref) over the rows [row_begin, row_end).
double nrmse(const std::vector<float>& got, const std::vector<float>& ref, int64_t n_vocab,
             int64_t row_begin, int64_t row_end) {
  double err = 0, norm = 0;
  for (int64_t i = row_begin * n_vocab; i < row_end * n_vocab; ++i) {
    const size_t j = static_cast<size_t>(i);
    err += (double(got[j]) - ref[j]) * (double(got[j]) - ref[j]);
    norm += double(ref[j]) * ref[j];
  }
  return std::sqrt(err / norm);
}

int64_t argmax_row(const float* row, int64_t n) { return std::max_element(row, row + n) - row; }

using Param = std::tuple<std::string, Case, int>;  // plugin, case, threads

class FamilyLogitsTest : public ::testing::TestWithParam<Param> {};

TEST_P(FamilyLogitsTest, MatchesReferenceRuntime) {
  const auto& [plugin, c, threads] = GetParam();
  GGUFLOW_REQUIRE_DATA("reference/logits/" + c.stem + ".json");
  const test::ReferenceLogits ref = test::read_reference_logits(c.stem);
  ASSERT_FALSE(ref.logits.empty()) << c.stem;
  const auto got = test::run_prompt(test::load_default_graph(ref.model),
                                    test::kernel_plugin(plugin), ref.tokens, threads);
  ASSERT_EQ(got.size(), ref.logits.size());
  const int64_t n = static_cast<int64_t>(ref.tokens.size());
  const double e = nrmse(got, ref.logits, ref.n_vocab, 0, n);
  EXPECT_LE(e, c.max_nrmse) << c.stem << " with " << plugin;
  std::printf("[ measured ] %s %s t%d nrmse %.3g\n", plugin.c_str(), c.stem.c_str(), threads, e);
  if (!c.f32_stem.empty()) {
    const test::ReferenceLogits f32 = test::read_reference_logits(c.f32_stem);
    ASSERT_EQ(f32.tokens, ref.tokens);
    const double ours = nrmse(got, f32.logits, ref.n_vocab, 0, n);
    const double theirs = nrmse(ref.logits, f32.logits, ref.n_vocab, 0, n);
    EXPECT_LE(ours, 1.15 * theirs) << c.stem << " with " << plugin
                                   << ": quantization error against the f32 model";
  }
  if (!c.argmax_everywhere) return;
  for (int64_t t = 0; t < n; ++t) {
    EXPECT_EQ(argmax_row(got.data() + t * ref.n_vocab, ref.n_vocab),
              argmax_row(ref.logits.data() + t * ref.n_vocab, ref.n_vocab))
        << c.stem << " position " << t;
  }
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const auto& p : test::usable_kernel_plugin_names())
    for (const Case& c : cases())
      for (int threads : {1, 2}) out.emplace_back(p, c, threads);
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param).stem + "_t" +
                  std::to_string(std::get<2>(info.param));
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Plugins, FamilyLogitsTest, ::testing::ValuesIn(all_params()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FamilyLogitsTest);

// With V cached in f16, as the reference caches it (ARCHS.md 0.3), the f32 models come to the
// issue's tighter bound: NRMSE <= 1e-4 and the same argmax everywhere. K stays f32 (the
// reference's K cache is f32). What remains is f32 summation order and V elements next to an
// f16 rounding midpoint (ARCHS.md measured <= 5e-5 relative RMS for a float64 pass that rounds V;
// measured here 2.4e-7..6.3e-5 over the plugins).
class FamilyF16ValueCacheTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyF16ValueCacheTest, MatchesReferenceToOneInTenThousand) {
  const std::string& plugin = GetParam();
  for (const Family& f : kFamilies) {
    for (const char* seq : {"s1", "s2"}) {
      const std::string stem = std::string(f.model) + "-f32." + seq;
      GGUFLOW_REQUIRE_DATA("reference/logits/" + stem + ".json");
      const test::ReferenceLogits ref = test::read_reference_logits(stem);
      exec::SessionOptions options;
      options.n_threads = 1;
      options.cache_type_v = ops::KvCacheType::kF16;
      exec::Session session(test::load_default_graph(ref.model), test::kernel_plugin(plugin), options);
      std::vector<float> got;
      session.prefill(ref.tokens, &got);
      ASSERT_EQ(got.size(), ref.logits.size()) << stem;
      const int64_t n = static_cast<int64_t>(ref.tokens.size());
      const double e = nrmse(got, ref.logits, ref.n_vocab, 0, n);
      std::printf("[ measured ] %s %s V f16 nrmse %.3g\n", plugin.c_str(), stem.c_str(), e);
      EXPECT_LE(e, 1e-4) << stem << " with " << plugin;
      for (int64_t t = 0; t < n; ++t)
        EXPECT_EQ(argmax_row(got.data() + t * ref.n_vocab, ref.n_vocab),
                  argmax_row(ref.logits.data() + t * ref.n_vocab, ref.n_vocab))
            << stem << " position " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, FamilyF16ValueCacheTest,
                         ::testing::ValuesIn(test::usable_kernel_plugin_names()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FamilyF16ValueCacheTest);

// The reference's greedy continuation of s2 (8 prompt ids, 32 argmax steps decoded one at a
// time through the KV cache) for every f32 model.
class FamilyGreedyTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(FamilyGreedyTest, ContinuationIsIdentical) {
  const auto& [plugin, threads] = GetParam();
  for (const Family& f : kFamilies) {
    const std::string stem = std::string(f.model) + "-f32.s2";
    GGUFLOW_REQUIRE_DATA("reference/logits/" + stem + ".greedy.json");
    const test::ReferenceGreedy want = test::read_reference_greedy(stem);
    ASSERT_EQ(want.generated.size(), 32u) << stem;
    exec::SessionOptions options;
    options.n_threads = threads;
    exec::Session session(test::load_default_graph(std::string(f.model) + "-f32.gguf"),
                          test::kernel_plugin(plugin), options);
    EXPECT_EQ(exec::greedy_generate(session, want.prompt, 32), want.generated) << stem;
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, FamilyGreedyTest,
                         ::testing::Combine(::testing::ValuesIn(test::usable_kernel_plugin_names()),
                                            ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_t" +
                                  std::to_string(std::get<1>(info.param));
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FamilyGreedyTest);

// The features are really used: without the sliding window (a window larger than the
// sequence), positions inside the window are unchanged and later ones move far from the
// reference (ARCHS.md section 6 measured NRMSE 0.3-0.9 there).
TEST(FamilyFeatures, SlidingWindowMatters) {
  for (const char* model : {"synth-gemma2-tiny-f32", "synth-gemma3-tiny-f32", "synth-phi3-tiny-f32"}) {
    const std::string stem = std::string(model) + ".s1";
    GGUFLOW_REQUIRE_DATA("reference/logits/" + stem + ".json");
    const test::ReferenceLogits ref = test::read_reference_logits(stem);
    const auto& k = test::usable_kernel_plugins().front();
    const int64_t window = std::string(model).find("phi3") != std::string::npos ? 32 : 16;
    const int64_t n = static_cast<int64_t>(ref.tokens.size());
    const auto wide = test::run_prompt(
        test::load_default_graph(ref.model, {{"n_swa", "100000"}}), *k.table, ref.tokens, 1);
    EXPECT_LE(nrmse(wide, ref.logits, ref.n_vocab, 0, window), 1e-3) << model;
    EXPECT_GE(nrmse(wide, ref.logits, ref.n_vocab, window, n), 0.1) << model;
  }
}

// Sliding-window layers keep a ring of window + max_batch - 1 rows: with 4-token steps the
// gemma rings (16 + 3 rows) wrap twice over the 48 tokens, and the logits still match.
TEST(FamilyFeatures, WindowRingsWrapAndKeepTheLogits) {
  for (const char* model : {"synth-gemma2-tiny-f32", "synth-gemma3-tiny-f32"}) {
    const std::string stem = std::string(model) + ".s1";
    GGUFLOW_REQUIRE_DATA("reference/logits/" + stem + ".json");
    const test::ReferenceLogits ref = test::read_reference_logits(stem);
    exec::SessionOptions options;
    options.n_threads = 2;
    options.max_batch = 4;
    exec::Session session(test::load_default_graph(ref.model),
                          *test::usable_kernel_plugins().front().table, options);
    std::vector<float> got;
    session.prefill(ref.tokens, &got);
    EXPECT_NE(session.kv_cache_summary().find("x 19 rows (window ring)"), std::string::npos)
        << session.kv_cache_summary();
    EXPECT_LE(nrmse(got, ref.logits, ref.n_vocab, 0, static_cast<int64_t>(ref.tokens.size())), 1e-3)
        << model;
  }
}

// Without the per-head q/k norms (the same graph less those nodes) qwen3 and gemma3 are far off.
TEST(FamilyFeatures, QkNormsMatter) {
  for (const char* arch : {"qwen3", "gemma3"}) {
    const std::string stem = std::string("synth-") + arch + "-tiny-f32.s1";
    GGUFLOW_REQUIRE_DATA("reference/logits/" + stem + ".json");
    const test::ReferenceLogits ref = test::read_reference_logits(stem);
    const std::string text = "graph: no-qk-norm\nextends: " +
                             (test::source_dir() / "graphs" / (std::string(arch) + ".yaml")).string() +
                             "\nunused: ['blk.*.attn_q_norm.weight', 'blk.*.attn_k_norm.weight']\n"
                             "remove: ['blk.{i}.attn_q_norm', 'blk.{i}.attn_k_norm']\n";
    auto model = GgufFile::open(test::data_path("models/" + ref.model).string());
    const auto g = std::make_shared<const graph::Graph>(
        graph::load_graph_text(text, (test::source_dir() / "graphs" / "no-qk-norm.yaml").string(), model));
    const auto got = test::run_prompt(g, *test::usable_kernel_plugins().front().table, ref.tokens, 1);
    EXPECT_GE(nrmse(got, ref.logits, ref.n_vocab, 0, static_cast<int64_t>(ref.tokens.size())), 0.1)
        << arch;
  }
}

}  // namespace
}  // namespace gguflow
