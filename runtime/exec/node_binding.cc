#include "runtime/exec/node_binding.h"

#include "ops/error.h"

namespace gguflow::exec {
namespace {

class SessionBinder final : public ops::Binder {
 public:
  SessionBinder(const graph::Graph& g, int index, const BindContext& ctx)
      : g_(g), node_(g.nodes[static_cast<size_t>(index)]), ctx_(ctx) {}

  std::string where() const override {
    return "node '" + node_.name + "' (" + node_.schema->name + ") at " + node_.where.to_string();
  }
  const GguflowKernels& kernels() const override { return *ctx_.kernels; }
  const ops::Parallel& parallel() const override { return *ctx_.parallel; }
  int64_t max_tokens() const override { return ctx_.max_tokens; }
  int64_t n_ctx() const override { return ctx_.n_ctx; }
  int max_threads() const override { return ctx_.max_threads; }
  const ops::Attrs& attrs() const override { return node_.attrs; }

  const ops::Shape* input_shape(size_t slot) const override {
    const int t = node_.inputs[slot];
    return t < 0 ? nullptr : &g_.tensors[static_cast<size_t>(t)].shape;
  }
  const ops::Shape& output_shape(size_t slot) const override {
    return g_.tensors[static_cast<size_t>(node_.outputs[slot])].shape;
  }
  bool writes_graph_output() const override {
    return !g_.outputs.empty() && node_.outputs[0] == g_.outputs[0];
  }

  bool has_weight(size_t slot) const override { return node_.weights[slot].has_value(); }
  const std::string& weight_name(size_t slot) const override { return binding(slot).tensor; }

  ops::WeightView weight(size_t slot) const override {
    const graph::WeightBinding& b = binding(slot);
    const GgufFile& file = b.file ? *b.file : *g_.model_file;
    ops::WeightView w;
    w.type = b.type;
    w.data = file.tensor_bytes(*b.info).data();
    w.file_mapped = file.is_file_mapping();
    w.row_bytes = b.info->row_bytes();
    w.n = static_cast<int64_t>(b.info->row_length());
    w.n_rows = static_cast<int64_t>(b.info->n_rows());
    return w;
  }

  const ops::WeightView* weight_slot(size_t slot, bool matmul) override {
    return ctx_.packed->slot(weight(slot), matmul);
  }

  const float* f32_weight(size_t slot) override {
    if (!has_weight(slot)) return nullptr;
    const ops::WeightView w = weight(slot);
    if (w.type == GGML_TYPE_F32) return static_cast<const float*>(w.data);
    const GguflowKernels& k = kernels();
    if (w.type >= GGML_TYPE_COUNT || k.act_type[w.type] == GGML_TYPE_COUNT)
      throw error(where(), ": weight ", weight_name(slot), " has type ", ops::type_name(w.type),
                  ", which kernel plugin ", k.target_name, " cannot decode");
    auto& out = ctx_.widened->emplace_back(static_cast<size_t>(w.n * w.n_rows));
    for (int64_t r = 0; r < w.n_rows; ++r) k.dequantize_row(w.type, w.row(r), out.data() + r * w.n, w.n);
    return out.data();
  }

  ops::KvCacheView kv_cache() const override {
    GGUFLOW_CHECK(node_.state >= 0);
    return (*ctx_.caches)[static_cast<size_t>(node_.state)];
  }

 private:
  const graph::WeightBinding& binding(size_t slot) const {
    const auto& b = node_.weights[slot];
    GGUFLOW_CHECK(b.has_value() && b->info);
    return *b;
  }

  const graph::Graph& g_;
  const graph::Node& node_;
  const BindContext& ctx_;
};

}  // namespace

BoundNode bind_node(const graph::Graph& g, int node_index, const BindContext& ctx) {
  SessionBinder binder(g, node_index, ctx);
  return g.nodes[static_cast<size_t>(node_index)].schema->bind(binder);
}

}  // namespace gguflow::exec
