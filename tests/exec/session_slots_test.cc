// Several sequences kept in one session's slots and stepped together (Session::step_slots, what
// a server's continuous batching runs) get exactly the logits each gets alone: prompts of
// different lengths prefilled in one step, then greedy decoding of all of them in shared steps,
// then a prompt prefilled beside sequences that decode. On llama (stories260K), qwen2 (Q/K/V
// biases, Q8_0) and gemma2 (a 16-token sliding window: each slot has its own ring), through
// every kernel plugin this CPU runs, at 2 threads; with f32 and q8_0 caches (f16 for gemma2).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/exec/greedy.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/error_of.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

using Logits = std::vector<float>;

std::vector<int32_t> prompt(int64_t length, int32_t seed, int64_t n_vocab) {
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < length; ++i) ids.push_back(static_cast<int32_t>((seed * 131 + i * 17) % n_vocab));
  return ids;
}

// One sequence alone in a fresh session: the prompt's last logits, then `steps` greedy decodes.
// `pack_first`: weights packed before the prompt (as a server that packs at start does).
std::vector<Logits> alone(const std::shared_ptr<const graph::Graph>& g, const GguflowKernels& k,
                          const std::vector<int32_t>& ids, int steps, bool pack_first,
                          ops::KvCacheType cache_type) {
  exec::SessionOptions o;
  o.cache_type_k = o.cache_type_v = cache_type;
  o.n_threads = 2;
  o.n_ctx = 64;
  exec::Session s(g, k, o);
  if (pack_first) s.pack_weights();
  std::vector<Logits> out;
  std::span<const float> logits = s.prefill(ids);
  out.emplace_back(logits.begin(), logits.end());
  for (int i = 0; i < steps; ++i) {
    logits = s.decode(exec::argmax(logits));
    out.emplace_back(logits.begin(), logits.end());
  }
  return out;
}

struct SlotCase {
  std::string model;
  ops::KvCacheType cache_type;  // K and V (quantized rows in every slot's region / ring)
};

class SessionSlots : public ::testing::TestWithParam<std::tuple<SlotCase, std::string>> {};

TEST_P(SessionSlots, SequencesSteppedTogetherMatchEachAlone) {
  const auto& [c, plugin] = GetParam();
  GGUFLOW_REQUIRE_DATA("models/" + c.model);
  const auto g = load_default_graph(c.model);
  const GguflowKernels& k = kernel_plugin(plugin);
  exec::SessionOptions o;
  o.cache_type_k = o.cache_type_v = c.cache_type;
  o.n_threads = 2;
  o.n_ctx = 64;
  o.n_slots = 4;
  exec::Session together(g, k, o);
  const int64_t n_vocab = together.n_vocab();
  const std::vector<std::vector<int32_t>> prompts = {prompt(5, 1, n_vocab), prompt(11, 2, n_vocab),
                                                     prompt(23, 3, n_vocab)};
  constexpr int kSteps = 6;

  // Three prompts in one step, then (weights packed, as decode() does) decoding all three.
  std::vector<exec::Session::SlotTokens> in;
  for (size_t i = 0; i < prompts.size(); ++i) in.push_back({static_cast<int64_t>(i), prompts[i]});
  std::vector<std::span<const float>> rows = together.step_slots(in);
  std::vector<std::vector<Logits>> got(prompts.size());
  for (size_t i = 0; i < rows.size(); ++i) got[i].emplace_back(rows[i].begin(), rows[i].end());
  together.pack_weights();
  std::vector<int32_t> next(prompts.size());
  for (int step = 0; step < kSteps; ++step) {
    in.clear();
    for (size_t i = 0; i < prompts.size(); ++i) {
      next[i] = exec::argmax(got[i].back());
      in.push_back({static_cast<int64_t>(i), std::span<const int32_t>(&next[i], 1)});
    }
    rows = together.step_slots(in);
    for (size_t i = 0; i < rows.size(); ++i) got[i].emplace_back(rows[i].begin(), rows[i].end());
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together.n_past(static_cast<int64_t>(i)), static_cast<int64_t>(prompts[i].size()) + kSteps);
    const std::vector<Logits> want = alone(g, k, prompts[i], kSteps, false, c.cache_type);
    ASSERT_EQ(got[i].size(), want.size());
    for (size_t s = 0; s < want.size(); ++s)
      EXPECT_TRUE(got[i][s] == want[s]) << "sequence " << i << ", step " << s << " differs from alone";
  }

  // A fourth prompt prefilled in the same step as the others' next tokens (packed weights on
  // both sides now).
  const std::vector<int32_t> late = prompt(9, 4, n_vocab);
  in.clear();
  for (size_t i = 0; i < prompts.size(); ++i) {
    next[i] = exec::argmax(got[i].back());
    in.push_back({static_cast<int64_t>(i), std::span<const int32_t>(&next[i], 1)});
  }
  in.push_back({3, late});
  rows = together.step_slots(in);
  const std::vector<Logits> late_alone = alone(g, k, late, 0, true, c.cache_type);
  EXPECT_TRUE(Logits(rows[3].begin(), rows[3].end()) == late_alone[0]) << "late prompt differs";
}

std::vector<std::tuple<SlotCase, std::string>> slot_params() {
  std::vector<std::tuple<SlotCase, std::string>> out;
  for (const auto& p : usable_kernel_plugin_names())
    for (const char* m : {"stories260K.gguf", "synth-qwen2-tiny-Q8_0.gguf", "synth-gemma2-tiny-Q8_0.gguf"}) {
      out.emplace_back(SlotCase{m, ops::KvCacheType::kF32}, p);
      // gemma2-tiny's rows (2 heads x 24) are no whole q8_0 blocks: its rings hold f16.
      const bool blocks = std::string(m).find("gemma2") == std::string::npos;
      out.emplace_back(SlotCase{m, blocks ? ops::KvCacheType::kQ8_0 : ops::KvCacheType::kF16}, p);
    }
  return out;
}

std::string slot_name(const ::testing::TestParamInfo<std::tuple<SlotCase, std::string>>& info) {
  std::string s = std::get<0>(info.param).model + "_" +
                  ops::kv_cache_type_name(std::get<0>(info.param).cache_type) + "_" + std::get<1>(info.param);
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Models, SessionSlots, ::testing::ValuesIn(slot_params()), slot_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SessionSlots);

TEST(SessionSlotsErrors, BadSlotsAreClearErrors) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto g = load_default_graph("stories260K.gguf");
  exec::SessionOptions o;
  o.n_threads = 1;
  o.n_ctx = 16;
  o.n_slots = 2;
  exec::Session s(g, kernel_plugin(usable_kernel_plugin_names().front()), o);
  const std::vector<int32_t> ids = {1, 2, 3};
  const std::vector<exec::Session::SlotTokens> bad_slot = {{2, ids}};
  EXPECT_EQ(error_of([&] { s.step_slots(bad_slot); }), "slot 2: expected 0 to 1");
  const std::vector<exec::Session::SlotTokens> twice = {{0, ids}, {0, ids}};
  EXPECT_EQ(error_of([&] { s.step_slots(twice); }), "slot 0 appears twice in one step");
  const std::vector<int32_t> long_ids(17, 1);
  const std::vector<exec::Session::SlotTokens> too_long = {{1, long_ids}};
  EXPECT_EQ(error_of([&] { s.step_slots(too_long); }),
            "slot 1: 17 tokens do not fit in the context: 0 already cached, context is 16 tokens (--ctx)");
  EXPECT_EQ(s.n_past(0), 0);
  EXPECT_EQ(s.n_past(1), 0);
}

}  // namespace
}  // namespace gguflow::test
