// Sessions that multiply packed weights (runtime/exec/packed_weights.h) against sessions that
// multiply the GGUF rows directly, at 1 and 2 threads. The first prompt runs before anything is
// packed, so its logits are identical bit for bit. The decode steps after it (which pack at the
// first step) and a prompt after those use the packed kernels, which the kernel ABI promises
// equal the row-major ones to float rounding: each of those logit rows must stay within
// kLogitTolerance of the row-major session's (relative to the row's largest logit) and pick the
// same greedy token. Also checks that packing really happened (a regression that quietly turned
// it off would otherwise pass).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/quant_blocks.h"
#include "runtime/exec/packed_weights.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

// Measured: at most 2e-7 of the largest logit on these models (float rounding of the matmuls,
// carried through the layers); a wrong weight or row moves logits by whole units.
constexpr double kLogitTolerance = 1e-4;

struct SessionRun {
  std::vector<float> prompt;   // first prompt's logits [T][n_vocab], before any packing
  std::vector<float> outputs;  // each decode step's row, then the second prompt's last row
  size_t packed_bytes = 0;
};

SessionRun run_session(std::shared_ptr<const graph::Graph> g, const GguflowKernels& k,
                const std::vector<int32_t>& prompt, bool pack, int threads) {
  exec::SessionOptions options;
  options.n_threads = threads;
  options.n_ctx = 64;
  options.pack_weights = pack;
  exec::Session session(g, k, options);
  SessionRun run;
  session.prefill(prompt, &run.prompt);
  // Prompt work never packs (it would not recover the cost); the first decode step does.
  EXPECT_EQ(session.packed_weight_bytes(), 0u);
  for (int32_t token : {3, 17, 42, 5}) {
    const auto row = session.decode(token);
    run.outputs.insert(run.outputs.end(), row.begin(), row.end());
  }
  // A second prompt after packing: prefill through the packed weights as well.
  const auto row = session.prefill(std::vector<int32_t>{9, 10, 11});
  run.outputs.insert(run.outputs.end(), row.begin(), row.end());
  run.packed_bytes = session.packed_weight_bytes();
  return run;
}

// Models whose matmuls include packable types: Q5_0 and Q8_0 (qwen2 Q4_K_M mix, rows of 64),
// Q4_K and Q6_K (llama Q4_K_M mix, rows of 256) and Q4_0.
class PackedSessionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PackedSessionTest, LogitsMatchRowMajorWeights) {
  const std::string model = GetParam();
  GGUFLOW_REQUIRE_DATA("models/" + model);
  const auto g = test::load_decode_graph(model);
  const std::vector<int32_t> prompt = {1, 15, 200, 7, 99, 4, 31, 8, 2, 64};
  int plugins_that_pack = 0;
  for (const test::KernelPlugin& p : test::usable_kernel_plugins()) {
    if (!std::any_of(std::begin(p.table->pack_rows), std::end(p.table->pack_rows), [](uint32_t g) { return g > 0; }))
      continue;
    ++plugins_that_pack;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(p.name + ", " + std::to_string(threads) + " thread(s)");
      const SessionRun row_major = run_session(g, *p.table, prompt, false, threads);
      const SessionRun packed = run_session(g, *p.table, prompt, true, threads);
      EXPECT_EQ(row_major.packed_bytes, 0u);
      EXPECT_GT(packed.packed_bytes, 0u) << "no weight of " << model << " was packed";
      ASSERT_EQ(packed.prompt.size(), row_major.prompt.size());
      EXPECT_EQ(std::memcmp(packed.prompt.data(), row_major.prompt.data(), sizeof(float) * packed.prompt.size()), 0)
          << "logits of the prompt before packing differ";
      ASSERT_EQ(packed.outputs.size(), row_major.outputs.size());
      const size_t n_vocab = packed.outputs.size() / 5;  // 4 decode steps + the second prompt
      for (size_t row = 0; row < 5; ++row) {
        const float* a = &packed.outputs[row * n_vocab];
        const float* b = &row_major.outputs[row * n_vocab];
        double largest = 0.0, worst = 0.0;
        for (size_t i = 0; i < n_vocab; ++i) {
          largest = std::max(largest, std::fabs(double(b[i])));
          worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
        }
        EXPECT_LE(worst, kLogitTolerance * largest) << "output row " << row << " (largest logit " << largest << ")";
        EXPECT_EQ(std::max_element(a, a + n_vocab) - a, std::max_element(b, b + n_vocab) - b)
            << "greedy token of output row " << row;
      }
    }
  }
  if (plugins_that_pack == 0) GTEST_SKIP() << "no kernel plugin this CPU runs has a packed layout";
}

// Two tensors of a crafted file may share bytes; a node must still get its own shape.
TEST(PackedWeightsSlots, SameBytesWithAnotherShapeIsAnotherSlot) {
  const GguflowKernels no_packing{};  // pack_rows all 0: slots stay row-major
  exec::PackedWeights packed(no_packing, true);
  std::vector<uint8_t> bytes(34 * 8 * 64);
  ops::WeightView a{GGML_TYPE_Q8_0, bytes.data(), 34 * 8, 256, 64};
  ops::WeightView b = a;
  b.n_rows = 8;
  const ops::WeightView* slot_a = packed.slot(a, true);
  EXPECT_EQ(packed.slot(a, false), slot_a);  // the same weight shares its slot
  const ops::WeightView* slot_b = packed.slot(b, true);
  EXPECT_NE(slot_b, slot_a);
  EXPECT_EQ(slot_a->n_rows, 64);
  EXPECT_EQ(slot_b->n_rows, 8);
}

// Packing releases the row-major pages only from a file mapping: on other memory (a GgufFile
// parsed from bytes) MADV_DONTNEED would zero them under any other reader.
TEST(PackedWeightsSlots, PackingLeavesMemoryThatIsNotAFileMappingIntact) {
  const test::KernelPlugin* plugin = nullptr;
  for (const test::KernelPlugin& p : test::usable_kernel_plugins())
    if (p.table->pack_rows[GGML_TYPE_Q8_0] == 8) plugin = &p;
  if (!plugin) GTEST_SKIP() << "no kernel plugin this CPU runs packs Q8_0";
  constexpr int64_t kRows = 512, kN = 1024;  // 34 KiB x 16: whole pages inside
  const size_t row_bytes = kN / 32 * sizeof(block_q8_0);
  std::vector<uint8_t> bytes(row_bytes * kRows);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  for (int64_t r = 0; r < kRows; ++r)  // finite scales: fp16 1.0 in every block
    for (int64_t b = 0; b < kN / 32; ++b) {
      const uint16_t one = 0x3c00;
      std::memcpy(&bytes[r * row_bytes + b * sizeof(block_q8_0)], &one, 2);
    }
  const std::vector<uint8_t> before = bytes;
  exec::PackedWeights packed(*plugin->table, true);
  const ops::WeightView row_major{GGML_TYPE_Q8_0, bytes.data(), row_bytes, kN, kRows};  // file_mapped false
  const ops::WeightView* slot = packed.slot(row_major, true);
  packed.pack_all();
  EXPECT_EQ(slot->pack_rows, 8u);
  EXPECT_EQ(packed.bytes(), bytes.size());
  EXPECT_TRUE(bytes == before) << "pack_all changed memory that is not a file mapping";
}

INSTANTIATE_TEST_SUITE_P(Models, PackedSessionTest,
                         ::testing::Values("synth-qwen2-tiny-Q4_K_M.gguf", "synth-llama-tiny-Q4_K_M.gguf",
                                           "stories260K-Q4_0.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace gguflow
