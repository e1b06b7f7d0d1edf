// Sessions that multiply packed weights (runtime/exec/packed_weights.h) against sessions that
// multiply the GGUF rows directly: the kernel ABI promises the same bits, so every output of a
// prompt, of the decode steps after it (which pack at the first step) and of a prompt after
// those must be identical, at 1 and 2 threads. Also checks that packing really happened (a
// regression that quietly turned it off would otherwise pass).
#include <cstring>

#include <gtest/gtest.h>

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
