// KV caches in smaller element types in a session (SessionOptions::cache_type_k/v, the graph's
// state attributes): the bytes allocated, the state attribute and its precedence, and a
// sliding window's ring of quantized rows (rows wrap) giving the bits of a ring that does not
// wrap. Slots with q8_0 caches: session_slots_test.cc.
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/graph/load.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/error_of.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

using ops::KvCacheType;

const GguflowKernels& kernels() { return *usable_kernel_plugins().front().table; }

exec::SessionOptions options(std::optional<KvCacheType> k, std::optional<KvCacheType> v, int64_t n_ctx) {
  exec::SessionOptions o;
  o.n_threads = 2;
  o.n_ctx = n_ctx;
  o.cache_type_k = k;
  o.cache_type_v = v;
  return o;
}

// stories260K: 5 layers, rows of 4 heads x 8 = 32 elements: f32 128 bytes, f16 64, q8_0 one
// 34-byte block, q4_0 one 18-byte block (a row's bytes, kept in 4 head blocks or whole). 64
// rows per block of the storage (multiples of 64 bytes, so no padding).
TEST(KvCacheTypes, SessionAllocatesTheBytesOfEachType) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto g = load_default_graph("stories260K.gguf");
  const std::pair<KvCacheType, size_t> row_bytes[] = {
      {KvCacheType::kF32, 128}, {KvCacheType::kF16, 64}, {KvCacheType::kQ8_0, 34}, {KvCacheType::kQ4_0, 18}};
  for (const auto& [kt, k_bytes] : row_bytes)
    for (const auto& [vt, v_bytes] : row_bytes) {
      exec::Session s(g, kernels(), options(kt, vt, 64));
      EXPECT_EQ(s.kv_cache_bytes(), 5 * 64 * (k_bytes + v_bytes));
      // A block per KV head (head-major) where both types hold a head of 8 elements (f32, f16);
      // whole rows where a head is part of a block (q8_0, q4_0): the same bytes either way.
      const auto per_element = [](KvCacheType t) { return t == KvCacheType::kF32 || t == KvCacheType::kF16; };
      for (const ops::KvCacheView& c : s.kv_caches()) {
        EXPECT_EQ(c.k_type, kt);
        EXPECT_EQ(c.v_type, vt);
        EXPECT_EQ(c.heads, per_element(kt) && per_element(vt) ? 4 : 1);
        EXPECT_EQ(c.k_bytes(), 64 * k_bytes);
        EXPECT_EQ(c.v_bytes(), 64 * v_bytes);
      }
      const std::string summary = s.kv_cache_summary();
      EXPECT_EQ(summary.rfind(std::to_string(s.kv_cache_bytes()) + " bytes = ", 0), 0u) << summary;
      if (kt != KvCacheType::kF32 || vt != KvCacheType::kF32) {
        EXPECT_NE(summary.find(std::string("K ") + ops::kv_cache_type_name(kt) + ", V " + ops::kv_cache_type_name(vt)),
                  std::string::npos) << summary;
      }
    }
}

// A windowed layer's ring of quantized rows: phi3-tiny with a 16-token window on every layer
// (rows of 2 heads x 64: four q8_0 blocks); 4-token steps wrap the rings (16 + 3 rows) over 40
// tokens, one 64-token step does not wrap. Same rows, same order: the same bits.
TEST(KvCacheTypes, QuantizedRingsWrapAndKeepTheBits) {
  GGUFLOW_REQUIRE_DATA("models/synth-phi3-tiny-f32.gguf");
  const auto g = load_default_graph("synth-phi3-tiny-f32.gguf", {{"n_swa", "16"}});
  for (KvCacheType t : {KvCacheType::kQ8_0, KvCacheType::kQ4_0, KvCacheType::kF16}) {
    exec::SessionOptions wrapping = options(t, t, 64), whole = options(t, t, 64);
    wrapping.max_batch = 4;
    whole.max_batch = 64;
    exec::Session a(g, kernels(), wrapping), b(g, kernels(), whole);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < 40; ++i) ids.push_back(static_cast<int32_t>((i * 37 + 11) % a.n_vocab()));
    EXPECT_NE(a.kv_cache_summary().find("x 19 rows (window ring)"), std::string::npos) << a.kv_cache_summary();
    std::vector<float> got, want;
    a.prefill(ids, &got);
    b.prefill(ids, &want);
    EXPECT_TRUE(got == want) << ops::kv_cache_type_name(t);
  }
}

// gemma2-tiny's rows are 2 heads x 24 = 48 elements: no whole 32-element blocks.
TEST(KvCacheTypes, RowsOfNoWholeBlocksAreAClearError) {
  GGUFLOW_REQUIRE_DATA("models/synth-gemma2-tiny-f32.gguf");
  const auto g = load_default_graph("synth-gemma2-tiny-f32.gguf");
  EXPECT_EQ(error_of([&] { exec::Session s(g, kernels(), options(std::nullopt, KvCacheType::kQ4_0, 64)); }),
            "state 'kv.0' V cache: a q4_0 cache stores rows in blocks of 32 elements: expected a row "
            "width (n_head_kv * head_dim) that is a multiple of 32, found 48");
  exec::Session f16(g, kernels(), options(KvCacheType::kF16, KvCacheType::kF16, 64));  // any width
  EXPECT_EQ(f16.kv_caches()[0].k_type, KvCacheType::kF16);
}

// rewind (bench --n-depth): the kept rows of a q8_0 cache give the same next logits, bit for
// bit; a ring that wrapped cannot be rewound.
TEST(KvCacheTypes, RewindKeepsTheFirstTokens) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  exec::Session s(load_default_graph("stories260K.gguf"), kernels(), options(KvCacheType::kQ8_0, KvCacheType::kQ8_0, 64));
  const std::vector<int32_t> prompt = {1, 403, 407, 261, 466, 31, 278};
  s.prefill(prompt);
  const std::span<const float> first = s.decode(365);
  const std::vector<float> want(first.begin(), first.end());
  s.decode(42);
  s.decode(43);
  EXPECT_TRUE(s.can_rewind());
  s.rewind(static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(s.n_past(), static_cast<int64_t>(prompt.size()));
  const std::span<const float> again = s.decode(365);
  EXPECT_TRUE(std::vector<float>(again.begin(), again.end()) == want);
  EXPECT_EQ(error_of([&] { s.rewind(100); }), "rewind to 100 tokens: expected 0 to 8 (the tokens cached)");

  GGUFLOW_REQUIRE_DATA("models/synth-phi3-tiny-f32.gguf");
  exec::SessionOptions ring = options(KvCacheType::kQ8_0, KvCacheType::kQ8_0, 64);
  ring.max_batch = 4;
  exec::Session w(load_default_graph("synth-phi3-tiny-f32.gguf", {{"n_swa", "16"}}), kernels(), ring);
  std::vector<int32_t> ids(24, 5);
  w.prefill(ids);
  EXPECT_FALSE(w.can_rewind());
  EXPECT_NE(error_of([&] { w.rewind(10); }).find("ring of 19 rows has overwritten"), std::string::npos);
}

// decode.yaml's state with cache_type_k: q8_0, through `extends`.
std::string write_graph(const std::string& name, const std::string& cache_types) {
  const std::string path = (temp_dir() / name).string();
  std::ofstream out(path);
  out << "extends: " << graph::find_shipped_graph("decode.yaml") << "\n"
      << "graph: decode-cache-types\n"
      << "state:\n"
      << "  - {name: \"kv.{i}\", kind: kv_cache, repeat: n_layer, n_head_kv: $n_head_kv, head_dim: $head_dim"
      << cache_types << "}\n";
  return path;
}

TEST(KvCacheTypes, GraphStateAttributeSetsTheTypeAndOptionsOverrideIt) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  auto model = GgufFile::open(data_path("models/stories260K.gguf").string());
  const auto g = std::make_shared<const graph::Graph>(
      graph::load_graph(write_graph("q8k.yaml", ", cache_type_k: q8_0, cache_type_v: f16"), model));
  {
    exec::Session s(g, kernels(), options(std::nullopt, std::nullopt, 32));
    EXPECT_EQ(s.kv_caches()[0].k_type, KvCacheType::kQ8_0);
    EXPECT_EQ(s.kv_caches()[0].v_type, KvCacheType::kF16);
  }
  {
    exec::Session s(g, kernels(), options(KvCacheType::kQ4_0, std::nullopt, 32));
    EXPECT_EQ(s.kv_caches()[0].k_type, KvCacheType::kQ4_0);  // the option wins
    EXPECT_EQ(s.kv_caches()[0].v_type, KvCacheType::kF16);   // the graph's, not given
  }
  const std::string bad = error_of([&] { graph::load_graph(write_graph("bad.yaml", ", cache_type_v: q5_0"), model); });
  EXPECT_NE(bad.find("'cache_type_v' expected one of f32, f16, q8_0, q4_0, found 'q5_0'"), std::string::npos) << bad;
}

}  // namespace
}  // namespace gguflow::test
