#include "tests/ops/op_harness.h"

#include <cstring>

#include "ops/error.h"
#include "ops/op_binder.h"
#include "ops/op_registry.h"
#include "tests/ops/test_kernels.h"

namespace gguflow::test {
namespace {

class SerialParallel final : public ops::Parallel {
 public:
  int concurrency() const override { return 1; }
  int thread_index() const override { return 0; }
  void split(int64_t n, int64_t, ops::RangeBody body) const override { body(0, n); }
};

const ops::OpSchema& schema_of(const OpCase& c) {
  const ops::OpSchema* op = ops::find_op(c.op);
  if (!op) throw error("no op '", c.op, "' in the registry");
  return *op;
}

ops::Attrs attrs_of(const ops::OpSchema& op, const OpCase& c) {
  ops::Attrs attrs;
  for (const ops::AttrSpec& spec : op.attrs) {
    bool given = false;
    for (const auto& [name, value] : c.attrs)
      if (name == spec.name) attrs.set(name, value), given = true;
    if (!given && !spec.required) attrs.set(spec.name, spec.default_value);
  }
  return attrs;
}

class TestBinder final : public ops::Binder {
 public:
  TestBinder(const OpCase& c, ops::Attrs attrs, std::vector<ops::Shape> outputs, int64_t max_tokens)
      : c_(c), attrs_(std::move(attrs)), outputs_(std::move(outputs)), max_tokens_(max_tokens) {}

  std::string where() const override { return "node '" + c_.op + "' (test)"; }
  const GguflowKernels& kernels() const override { return scalar_f32_test_kernels(); }
  const ops::Parallel& parallel() const override { return parallel_; }
  int64_t max_tokens() const override { return max_tokens_; }
  int64_t n_ctx() const override { return max_tokens_; }
  int max_threads() const override { return 1; }
  const ops::Attrs& attrs() const override { return attrs_; }
  const ops::Shape* input_shape(size_t slot) const override { return &c_.inputs.at(slot); }
  const ops::Shape& output_shape(size_t slot) const override { return outputs_.at(slot); }
  bool writes_graph_output() const override { return c_.graph_output; }
  bool has_weight(size_t slot) const override { return slot < c_.weight_data.size(); }
  const std::string& weight_name(size_t) const override { return weight_name_; }
  ops::WeightView weight(size_t) const override { throw error("test binder: f32 weights only"); }
  const ops::WeightView* weight_slot(size_t, bool) override {
    throw error("test binder: f32 weights only");
  }
  const float* f32_weight(size_t slot) override {
    return has_weight(slot) ? c_.weight_data[slot].data() : nullptr;
  }
  ops::KvCacheView kv_cache() const override { return {}; }

 private:
  const OpCase& c_;
  ops::Attrs attrs_;
  std::vector<ops::Shape> outputs_;
  int64_t max_tokens_;
  SerialParallel parallel_;
  std::string weight_name_ = "test.weight";
};

}  // namespace

std::string shape_message(const OpCase& c, std::vector<ops::Shape>* outputs) {
  const ops::OpSchema& op = schema_of(c);
  const ops::Attrs attrs = attrs_of(op, c);
  ops::ShapeQuery q;
  q.attrs = &attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    q.inputs.push_back(&c.inputs[i]);
    q.input_names.push_back(op.inputs.at(i).name);
  }
  // One entry per weight slot, nullptr for an absent one, as the graph builder passes them.
  for (size_t w = 0; w < op.weights.size(); ++w) {
    q.weights.push_back(w < c.weights.size() ? &c.weights[w] : nullptr);
    q.weight_names.push_back(std::string("test.") + op.weights[w].name);
  }
  std::vector<ops::Shape> out;
  std::string message = op.shape(q, &out);
  if (outputs) *outputs = std::move(out);
  return message;
}

std::vector<float> run_op(const OpCase& c, const std::vector<std::vector<float>>& inputs,
                          int64_t n_tokens, bool last_output_only, bool* honoured) {
  const ops::OpSchema& op = schema_of(c);
  std::vector<ops::Shape> out_shapes;
  if (std::string message = shape_message(c, &out_shapes); !message.empty())
    throw error("shape rule of ", c.op, ": ", message);
  TestBinder binder(c, attrs_of(op, c), out_shapes, n_tokens);
  const ops::BoundOp bound = op.bind(binder);
  if (honoured) *honoured = bound.writes_last_output_only;

  // One arena: inputs, outputs, scratch, each 64-byte aligned.
  std::vector<size_t> sizes;
  for (const auto& in : inputs) sizes.push_back(in.size() * sizeof(float));
  const size_t n_out_floats = static_cast<size_t>(out_shapes.at(0).elements(n_tokens));
  sizes.push_back(n_out_floats * sizeof(float));
  for (size_t s : bound.scratch_bytes) sizes.push_back(s);
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t s : sizes) offsets.push_back(total), total += (s + 63) / 64 * 64;
  std::vector<float> arena_store(total / sizeof(float) + 16, 0.0f);
  std::byte* arena = reinterpret_cast<std::byte*>(arena_store.data());

  ops::NodeIo io;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy(arena + offsets[i], inputs[i].data(), sizes[i]);
    io.inputs.push_back(offsets[i]);
  }
  io.outputs.push_back(offsets[inputs.size()]);
  for (size_t s = 0; s < bound.scratch_bytes.size(); ++s)
    io.scratch.push_back(offsets[inputs.size() + 1 + s]);
  const ops::StepSequence whole{0, n_tokens, 0, 0, n_tokens};
  ops::StepView step{arena, n_tokens, last_output_only};
  step.sequences = &whole;
  bound.run(step, io);

  std::vector<float> y(n_out_floats);
  std::memcpy(y.data(), arena + io.outputs[0], n_out_floats * sizeof(float));
  return y;
}

std::vector<float> i32_input(const std::vector<int32_t>& values) {
  std::vector<float> out(values.size());
  std::memcpy(out.data(), values.data(), sizeof(int32_t) * values.size());
  return out;
}

std::string bind_error(const OpCase& c, int64_t n_tokens) {
  try {
    const ops::OpSchema& op = schema_of(c);
    std::vector<ops::Shape> out_shapes;
    if (std::string message = shape_message(c, &out_shapes); !message.empty())
      throw error("shape rule of ", c.op, ": ", message);
    TestBinder binder(c, attrs_of(op, c), out_shapes, n_tokens);
    op.bind(binder);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace gguflow::test
