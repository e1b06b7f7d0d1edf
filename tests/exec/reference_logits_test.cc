// End-to-end correctness: graphs/decode.yaml on real and synthetic models, through every kernel
// plugin this CPU runs, against logits made by llama.cpp (../shared/data/reference/logits,
// DATA.md sections 3-4) and llama2.c's greedy golden output.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "runtime/exec/greedy.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

struct Case {
  const char* stem;        // reference/logits/<stem>.{bin,json}
  double max_rel_rms;      // rms(ours - ref) / rms(ref) over all positions
  bool argmax_everywhere;  // the predicted token must match at every position
  // The bound for the x86 plugins (AVX2 and up) where it differs: their block-32 kernels add in
  // another float order than llama.cpp (below). 0: max_rel_rms for every plugin.
  double max_rel_rms_x86 = 0;
  // The reference ran with an f16 KV cache (keys and values, <stem> *.kvf16): so does ours.
  bool f16_cache = false;
};

// F32 models: 1e-4 (the bound). Quantized models: the plugins quantize activations
// exactly as llama.cpp does. Models whose matmuls all use Q8_0 activations (Q8_0, Q4_0 and F16
// weights): the portable plugins (scalar, sse4) also add every block in GGML's scalar order and
// agree to ~1e-7 (measured 0..1.1e-7): bound 1e-5. The x86 plugins add a row's blocks in the
// packed kernels' order (plugins/kernels/kernels_panels.cc says why), so a last-place difference
// in a layer's output can round one later Q8_0 activation the other way and spread through
// attention: measured 3.3e-3 on synth-qwen2-tiny-Q8_0 (0 on the stories260K files, whose
// argmax still holds everywhere); bound 1e-2, under the 2.5 % for quantized models.
// Models with k-quants use Q8_K activations, where a ~1e-7 upstream float difference can flip
// one rounding the same way (DATA.md section 4: exact emulation still gives up to 2.5%);
// measured 2e-7..1.2e-2 depending on the plugin, so they keep the 2.5% bound.
const Case kCases[] = {
    {"stories260K.prompt1", 1e-4, true},
    {"synth-llama-tiny-f32.s1", 1e-4, true},
    {"synth-qwen2-tiny-f32.s1", 1e-4, true},
    {"stories260K-Q8_0.prompt1", 1e-5, true, 1e-2},
    {"stories260K-Q4_0.prompt1", 1e-5, true, 1e-2},
    {"synth-qwen2-tiny-Q8_0.s1", 1e-5, false, 1e-2},
    {"synth-qwen2-tiny-Q4_K_M.s1", 0.025, false},
    {"synth-llama-tiny-Q4_0.s1", 0.025, false},  // output.weight is Q6_K
    {"synth-llama-tiny-Q4_K_M.s1", 0.025, false},
    {"synth-llama-tiny-Q5_K_M.s1", 0.025, false},
    {"synth-llama-tiny-Q6_K.s1", 0.025, false},
    {"synth-llama-tiny-Q2_K.s1", 0.025, false},
    {"synth-llama-tiny-Q3_K_M.s1", 0.025, false},
    // f16 keys and values on both sides. llama.cpp also rounds the f32 side of its f16 x f32
    // products to f16 (the queries for K.Q, the softmax weights for V); gguflow keeps them f32,
    // which leaves 1.7e-4..2.3e-4 (measured, every plugin). Bound 2.5e-4: an f32 cache against
    // the same references measures 2.7e-4..3.5e-4, so the bound also tells that the f16 cache
    // was used.
    {"stories260K.prompt1.kvf16", 2.5e-4, true, 0, true},
    {"synth-llama-tiny-f32.s1.kvf16", 2.5e-4, true, 0, true},
    {"synth-qwen2-tiny-f32.s1.kvf16", 2.5e-4, true, 0, true},
};

int64_t argmax_row(const float* row, int64_t n) {
  return std::max_element(row, row + n) - row;
}

class ReferenceLogitsTest
    : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

TEST_P(ReferenceLogitsTest, MatchesLlamaCpp) {
  const auto& [plugin, c] = GetParam();
  GGUFLOW_REQUIRE_DATA(std::string("reference/logits/") + c.stem + ".json");
  const test::ReferenceLogits ref = test::read_reference_logits(c.stem);
  ASSERT_FALSE(ref.logits.empty()) << c.stem;
  const auto got = test::run_prompt(test::load_decode_graph(ref.model), test::kernel_plugin(plugin),
                                    ref.tokens, 1, exec::Scheduler::kFlowGraph,
                                    c.f16_cache ? std::optional(ops::KvCacheType::kF16) : std::nullopt);
  ASSERT_EQ(got.size(), ref.logits.size());
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (double(got[i]) - ref.logits[i]) * (double(got[i]) - ref.logits[i]);
    norm += double(ref.logits[i]) * ref.logits[i];
  }
  const double rel_rms = std::sqrt(err / norm);
  const std::string target = test::kernel_plugin(plugin).target_name;
  const bool x86 = target == "AVX2" || target == "AVX3" || target == "AVX3_DL";
  EXPECT_LE(rel_rms, x86 && c.max_rel_rms_x86 > 0 ? c.max_rel_rms_x86 : c.max_rel_rms) << c.stem << " with " << plugin;
  RecordProperty("rel_rms", std::to_string(rel_rms));
  std::printf("[ measured ] %s %s rel_rms %.3g\n", plugin.c_str(), c.stem, rel_rms);
  if (c.argmax_everywhere) {
    for (size_t t = 0; t < ref.tokens.size(); ++t) {
      EXPECT_EQ(argmax_row(got.data() + t * ref.n_vocab, ref.n_vocab),
                argmax_row(ref.logits.data() + t * ref.n_vocab, ref.n_vocab))
          << "position " << t;
    }
  }
}

std::vector<std::tuple<std::string, Case>> all_cases() {
  std::vector<std::tuple<std::string, Case>> out;
  for (const auto& p : test::usable_kernel_plugin_names())
    for (const Case& c : kCases) out.emplace_back(p, c);
  return out;
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<std::string, Case>>& info) {
  std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param).stem;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Plugins, ReferenceLogitsTest, ::testing::ValuesIn(all_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReferenceLogitsTest);

class PerPluginTest : public ::testing::TestWithParam<std::string> {};

// llama2.c's run.c golden: 200 argmax steps from BOS, decoded one token per step.
TEST_P(PerPluginTest, GreedyFromBosReproducesLlama2cGolden) {
  GGUFLOW_REQUIRE_DATA("golden/stories260K.greedy_ids_from_bos.txt");
  std::ifstream in(test::data_path("golden/stories260K.greedy_ids_from_bos.txt"));
  std::vector<int32_t> want;
  for (int32_t id; in >> id;) want.push_back(id);
  ASSERT_EQ(want.size(), 200u);
  exec::SessionOptions options;
  options.n_threads = 1;
  exec::Session session(test::load_decode_graph("stories260K.gguf"), test::kernel_plugin(GetParam()),
                        options);
  const std::vector<int32_t> bos = {1};
  EXPECT_EQ(exec::greedy_generate(session, bos, 200), want);
}

// Row splits and concurrent branches must not change a single bit; nor may the scheduler.
TEST_P(PerPluginTest, OneAndTwoThreadsGiveBitIdenticalLogits) {
  for (const char* stem : {"synth-qwen2-tiny-Q4_K_M.s1", "stories260K.prompt1"}) {
    GGUFLOW_REQUIRE_DATA(std::string("reference/logits/") + stem + ".json");
    const test::ReferenceLogits ref = test::read_reference_logits(stem);
    const auto g = test::load_decode_graph(ref.model);
    const auto& k = test::kernel_plugin(GetParam());
    const auto one = test::run_prompt(g, k, ref.tokens, 1);
    EXPECT_EQ(one, test::run_prompt(g, k, ref.tokens, 2)) << stem;
    EXPECT_EQ(one, test::run_prompt(g, k, ref.tokens, 2, exec::Scheduler::kTopologicalLoop)) << stem;
  }
}

// Prefill in one batch (mat_mat) and token-by-token decode (mat_vec) agree bit for bit on the
// same (row-major) weights. (Decode with packed weights agrees to float rounding:
// packed_session_test.)
TEST_P(PerPluginTest, DecodeStepsMatchPrefillRows) {
  GGUFLOW_REQUIRE_DATA("reference/logits/synth-llama-tiny-Q4_K_M.s1.json");
  const test::ReferenceLogits ref = test::read_reference_logits("synth-llama-tiny-Q4_K_M.s1");
  const auto g = test::load_decode_graph(ref.model);
  const auto& k = test::kernel_plugin(GetParam());
  const auto batch = test::run_prompt(g, k, ref.tokens, 2);
  exec::SessionOptions options;
  options.n_threads = 2;
  options.pack_weights = false;
  exec::Session session(g, k, options);
  for (size_t t = 0; t < ref.tokens.size(); ++t) {
    const auto row = session.decode(ref.tokens[t]);
    ASSERT_TRUE(std::equal(row.begin(), row.end(), batch.begin() + t * ref.n_vocab))
        << "position " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Plugins, PerPluginTest,
                         ::testing::ValuesIn(test::usable_kernel_plugin_names()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PerPluginTest);

}  // namespace
}  // namespace gguflow
