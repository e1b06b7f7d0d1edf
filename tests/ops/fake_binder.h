// A Binder for op unit tests: attributes, input shapes and small f32 weights set by the test,
// the scalar test kernels; anything else (weight views, the cache, the thread pool) throws, so a
// bind that reaches it fails the test visibly.
#pragma once

#include <string>
#include <vector>

#include "ops/error.h"
#include "ops/op_binder.h"
#include "tests/ops/test_kernels.h"

namespace gguflow::test {

class FakeBinder final : public ops::Binder {
 public:
  ops::Attrs node_attrs;               // as a bound node has them: every attribute, defaults filled
  std::vector<ops::Shape> inputs;      // per input slot
  std::vector<const float*> weights;   // per weight slot; nullptr = absent
  int64_t tokens = 1, ctx = 0;

  std::string where() const override { return "node 'test' (fake) at test.yaml:1:1"; }
  const GguflowKernels& kernels() const override { return scalar_f32_test_kernels(); }
  const ops::Parallel& parallel() const override { throw unavailable("the thread pool"); }
  int64_t max_tokens() const override { return tokens; }
  int64_t n_ctx() const override { return ctx; }
  int max_threads() const override { return 1; }
  const ops::Attrs& attrs() const override { return node_attrs; }
  const ops::Shape* input_shape(size_t slot) const override {
    return slot < inputs.size() ? &inputs[slot] : nullptr;
  }
  const ops::Shape& output_shape(size_t) const override { return inputs.at(0); }
  bool writes_graph_output() const override { return false; }
  bool has_weight(size_t slot) const override { return slot < weights.size() && weights[slot]; }
  const std::string& weight_name(size_t) const override { return name_; }
  ops::WeightView weight(size_t) const override { throw unavailable("weight views"); }
  const ops::WeightView* weight_slot(size_t, bool) override { throw unavailable("weight slots"); }
  const float* f32_weight(size_t slot) override { return has_weight(slot) ? weights[slot] : nullptr; }
  ops::KvCacheView kv_cache() const override { throw unavailable("a kv cache"); }

  static Error unavailable(const char* what) { return Error(std::string("fake binder: no ") + what); }

 private:
  std::string name_ = "test.weight";
};

}  // namespace gguflow::test
