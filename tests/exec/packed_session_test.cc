// Sessions that multiply packed weights (runtime/exec/packed_weights.h) against sessions that
// multiply the GGUF rows directly: the kernel ABI promises the same bits, so every output of a
// prompt, of the decode steps after it (which pack at the first step) and of a prompt after
// those must be identical, at 1 and 2 threads. Also checks that packing really happened (a
// regression that quietly turned it off would otherwise pass).
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/quant_blocks.h"
#include "runtime/exec/packed_weights.h"
#include "tests/exec/exec_test_support.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

struct SessionRun {
  std::vector<float> outputs;  // prompt logits [T][n_vocab], then each decode step's row
  size_t packed_bytes = 0;
};

SessionRun run_session(std::shared_ptr<const graph::Graph> g, const GgufflowKernels& k,
                const std::vector<int32_t>& prompt, bool pack, int threads) {
  exec::SessionOptions options;
  options.n_threads = threads;
  options.n_ctx = 64;
  options.pack_weights = pack;
  exec::Session session(g, k, options);
  SessionRun run;
  session.prefill(prompt, &run.outputs);
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

// Models whose matmuls include packable types: Q5_0 (qwen2 Q4_K_M mix) and Q4_0.
class PackedSessionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PackedSessionTest, SameLogitsAsRowMajorWeights) {
  const std::string model = GetParam();
  GGUFLOW_REQUIRE_DATA("models/" + model);
  const auto g = test::load_decode_graph(model);
  const std::vector<int32_t> prompt = {1, 15, 200, 7, 99, 4, 31, 8, 2, 64};
  int plugins_that_pack = 0;
  for (const test::KernelPlugin& p : test::usable_kernel_plugins()) {
    if (p.table->pack_rows[GGML_TYPE_Q5_0] == 0 && p.table->pack_rows[GGML_TYPE_Q4_0] == 0) continue;
    ++plugins_that_pack;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(p.name + ", " + std::to_string(threads) + " thread(s)");
      const SessionRun row_major = run_session(g, *p.table, prompt, false, threads);
      const SessionRun packed = run_session(g, *p.table, prompt, true, threads);
      EXPECT_EQ(row_major.packed_bytes, 0u);
      EXPECT_GT(packed.packed_bytes, 0u) << "no weight of " << model << " was packed";
      ASSERT_EQ(packed.outputs.size(), row_major.outputs.size());
      size_t first_diff = packed.outputs.size();
      for (size_t i = 0; i < packed.outputs.size() && first_diff == packed.outputs.size(); ++i)
        if (std::memcmp(&packed.outputs[i], &row_major.outputs[i], sizeof(float)) != 0) first_diff = i;
      EXPECT_EQ(first_diff, packed.outputs.size())
          << "first different output " << first_diff << ": packed " << packed.outputs[first_diff]
          << ", row-major " << row_major.outputs[first_diff];
    }
  }
  if (plugins_that_pack == 0) GTEST_SKIP() << "no kernel plugin this CPU runs has a packed layout";
}

// Two tensors of a crafted file may share bytes; a node must still get its own shape.
TEST(PackedWeightsSlots, SameBytesWithAnotherShapeIsAnotherSlot) {
  const GgufflowKernels no_packing{};  // pack_rows all 0: slots stay row-major
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
                         ::testing::Values("synth-qwen2-tiny-Q4_K_M.gguf", "stories260K-Q4_0.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace gguflow
