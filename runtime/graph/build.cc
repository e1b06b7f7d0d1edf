// GraphSpec + model -> Graph: params, expansion, SSA name resolution, weight binding, shape
// inference, state checks, topological order and dead-node pruning. Every failure names the
// YAML place.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "ops/op_registry.h"
#include "runtime/graph/expand.h"
#include "runtime/graph/load.h"
#include "runtime/graph/tensor_coverage.h"

namespace gguflow::graph {

namespace {

std::string model_name(const GgufFile& model) {
  return std::filesystem::path(model.path()).filename().string();
}

// The graph being assembled from expanded nodes: SSA tensors, their producers and readers.
struct Assembly {
  const GgufFile& model;
  std::vector<const GgufFile*> extra_files;  // searched after `model` for weights
  std::vector<RawNode> raw;
  std::vector<Tensor> tensors;
  std::vector<Location> tensor_where;       // where each tensor is defined
  std::vector<std::vector<int>> node_inputs;  // per raw node, per slot: tensor or -1
  std::vector<std::vector<int>> node_outputs;

  // SSA: outputs get tensors in listing order; reads resolve to the latest earlier version,
  // else a graph input, else the single later definition (order-free dataflow), else an error.
  void resolve_names(const std::vector<int>& input_tensors) {
    std::map<std::string, std::vector<std::pair<size_t, int>>> assignments;  // name -> (node, tensor)
    std::map<std::string, int> versions;
    for (int t : input_tensors) versions[tensors[static_cast<size_t>(t)].name] = 1;
    node_outputs.resize(raw.size());
    for (size_t j = 0; j < raw.size(); ++j) {
      for (const auto& o : raw[j].outputs) {
        Tensor t;
        t.name = o.name;
        t.version = versions[o.name]++;
        t.producer = static_cast<int>(j);
        t.dtype = raw[j].schema->outputs[node_outputs[j].size()].dtype;
        tensors.push_back(t);
        tensor_where.push_back(o.where);
        const int id = static_cast<int>(tensors.size() - 1);
        node_outputs[j].push_back(id);
        assignments[o.name].push_back({j, id});
      }
    }
    std::map<std::string, int> input_by_name;
    for (int t : input_tensors) input_by_name[tensors[static_cast<size_t>(t)].name] = t;

    node_inputs.resize(raw.size());
    for (size_t j = 0; j < raw.size(); ++j) {
      for (const auto& in : raw[j].inputs) {
        if (in.name.empty()) {
          node_inputs[j].push_back(-1);
          continue;
        }
        int found = -1;
        auto it = assignments.find(in.name);
        if (it != assignments.end())
          for (const auto& [node, tensor] : it->second)
            if (node < j) found = tensor;
        if (found < 0 && input_by_name.count(in.name)) found = input_by_name[in.name];
        if (found < 0 && it != assignments.end()) {
          if (it->second.size() == 1) {
            found = it->second[0].second;
          } else {
            fail_at(in.where, "node '", raw[j].name, "': '", in.name,
                    "' is used before its definition: expected it to be assigned above this node, "
                    "found its first assignment at ", tensor_where[static_cast<size_t>(it->second[0].second)].to_string());
          }
        }
        if (found < 0) {
          std::vector<std::string> names;
          for (const auto& [n, a] : assignments) names.push_back(n);
          for (const auto& [n, t] : input_by_name) names.push_back(n);
          std::string best = ops::closest_name(in.name, names);
          fail_at(in.where, "node '", raw[j].name, "': '", in.name,
                  "' is used but never defined: expected a graph input or a node's out",
                  best.empty() ? std::string() : " (did you mean '" + best + "'?)");
        }
        node_inputs[j].push_back(found);
      }
    }
  }

  // Stable Kahn order (listing order among ready nodes); a leftover set means a cycle.
  std::vector<size_t> topological_order() {
    const size_t n = raw.size();
    std::vector<std::vector<size_t>> users(n);
    std::vector<int> pending(n, 0);
    for (size_t j = 0; j < n; ++j) {
      for (int t : node_inputs[j]) {
        if (t < 0) continue;
        const int p = tensors[static_cast<size_t>(t)].producer;
        if (p < 0) continue;
        users[static_cast<size_t>(p)].push_back(j);
        ++pending[j];
      }
    }
    std::set<size_t> ready;
    for (size_t j = 0; j < n; ++j)
      if (!pending[j]) ready.insert(j);
    std::vector<size_t> order;
    while (!ready.empty()) {
      const size_t j = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(j);
      for (size_t u : users[j])
        if (--pending[u] == 0) ready.insert(u);
    }
    if (order.size() != n) {
      // Walk back along unfinished producers from any stuck node until a node repeats.
      size_t at = 0;
      while (!pending[at]) ++at;
      std::vector<size_t> path;
      std::vector<int> seen(n, -1);
      while (seen[at] < 0) {
        seen[at] = static_cast<int>(path.size());
        path.push_back(at);
        for (int t : node_inputs[at]) {
          if (t < 0) continue;
          const int p = tensors[static_cast<size_t>(t)].producer;
          if (p >= 0 && pending[static_cast<size_t>(p)]) {
            at = static_cast<size_t>(p);
            break;
          }
        }
      }
      std::string cycle;
      for (size_t k = static_cast<size_t>(seen[at]); k < path.size(); ++k)
        cycle = "'" + raw[path[k]].name + "' (" + raw[path[k]].where.to_string() + ") -> " + cycle;
      cycle += "'" + raw[at].name + "'";
      fail_at(raw[at].where, "cycle in the graph: expected tensors to flow one way, found ", cycle);
    }
    return order;
  }

  // "a ?? b?": the first alternative present in the model; nullopt when every alternative is
  // absent and the last is marked optional with '?'.
  std::optional<WeightBinding> bind_weight(const RawNode& node, size_t slot) {
    const WeightRef& ref = node.weights[slot];
    const ops::WeightSpec& spec = node.schema->weights[slot];
    if (ref.text.empty()) return std::nullopt;
    std::vector<std::string> tried;
    bool last_optional = false;
    for (size_t start = 0;;) {
      size_t end = ref.text.find("??", start);
      std::string alt = ref.text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      alt.erase(0, alt.find_first_not_of(" \t"));
      alt.erase(alt.find_last_not_of(" \t") + 1);
      last_optional = !alt.empty() && alt.back() == '?';
      if (last_optional) alt.pop_back();
      const GgufFile* holder = &model;
      const GgufTensorInfo* info = model.find_tensor(alt);
      for (size_t f = 0; !info && f < extra_files.size(); ++f)
        if ((info = extra_files[f]->find_tensor(alt))) holder = extra_files[f];
      if (info) {
        WeightBinding b{alt, info->type, info->dims, info, holder};
        if (ref.expect_type && *ref.expect_type != info->type_name())
          fail_at(ref.where, "weight '", alt, "': expected type ", *ref.expect_type, " (as written), found ",
                  info->type_name(), " in ", model_name(model));
        if (ref.expect_dims && *ref.expect_dims != info->dims)
          fail_at(ref.where, "weight '", alt, "': expected dims ", Shape{{ref.expect_dims->begin(), ref.expect_dims->end()}}.to_string(),
                  " (as written), found ", Shape{{info->dims.begin(), info->dims.end()}}.to_string(), " in ",
                  model_name(model));
        return b;
      }
      tried.push_back(alt);
      if (end == std::string::npos) break;
      start = end + 2;
    }
    if (last_optional && spec.optional) return std::nullopt;
    std::string list;
    for (const auto& t : tried) list += (list.empty() ? "'" : ", '") + t + "'";
    if (last_optional)
      fail_at(ref.where, "node '", node.name, "': weight '", spec.name, "' of op ", node.schema->name,
              " is required, but ", list, " is absent from ", model_name(model),
              ": expected a tensor of the model");
    fail_at(ref.where, "node '", node.name, "': tensor ", list, " not in the model ", model_name(model),
            ": expected a GGUF tensor name (append '?' if it may be absent)");
  }
};

void fill_model_params(Graph& g) {
  auto get_int = [&](const char* name, int64_t* out) {
    if (const Param* p = g.find_param(name))
      if (const auto* i = std::get_if<int64_t>(&p->value)) *out = *i;
  };
  auto get_double = [&](const char* name, double* out) {
    if (const Param* p = g.find_param(name)) {
      if (const auto* d = std::get_if<double>(&p->value)) *out = *d;
      if (const auto* i = std::get_if<int64_t>(&p->value)) *out = static_cast<double>(*i);
    }
  };
  auto get_string = [&](const char* name, std::string* out) {
    if (const Param* p = g.find_param(name))
      if (const auto* s = std::get_if<std::string>(&p->value)) *out = *s;
  };
  ModelParams& m = g.model;
  get_string("arch", &m.arch);
  get_int("n_layer", &m.n_layer);
  get_int("n_embd", &m.n_embd);
  get_int("n_head", &m.n_head);
  get_int("n_head_kv", &m.n_head_kv);
  get_int("head_dim", &m.head_dim);
  get_int("n_ff", &m.n_ff);
  get_int("n_vocab", &m.n_vocab);
  get_int("n_ctx_train", &m.n_ctx_train);
  get_int("n_rot", &m.n_rot);
  get_double("rope_base", &m.rope_base);
  get_string("rope_mode", &m.rope_mode);
  get_double("eps", &m.eps);
}

// What the session writes into each graph input is the feed of the slots that read it (token ids
// or positions, ops::Feed): an input read by a slot without one, or with two meanings, or no
// input of token ids, is a graph the session refuses. Checked here too, where the YAML positions
// are known, so that `lower` and `graph` refuse what `run` would (live nodes only, as the
// session sees them).
void check_input_feeds(const Assembly& b, const std::vector<size_t>& order, const std::vector<bool>& live,
                       const std::vector<int>& input_tensors, const GraphSpec& spec, const std::string& graph_name) {
  struct FirstReader {
    ops::Feed feed = ops::Feed::kNone;
    Location where;
    std::string node;
  };
  std::vector<FirstReader> first(input_tensors.size());
  bool has_token_ids = false;
  for (size_t j : order) {
    if (!live[j]) continue;
    const RawNode& r = b.raw[j];
    for (size_t s = 0; s < r.schema->inputs.size(); ++s) {
      const int t = b.node_inputs[j][s];
      const auto input = std::find(input_tensors.begin(), input_tensors.end(), t);
      if (t < 0 || input == input_tensors.end()) continue;
      const std::string& name = b.tensors[static_cast<size_t>(t)].name;
      const ops::Feed wanted = r.schema->inputs[s].feed;
      if (wanted == ops::Feed::kNone)
        fail_at(r.inputs[s].where, "node '", r.name, "': graph input '", name, "' is read by slot '",
                r.schema->inputs[s].name, "', which the executor does not fill: expected graph inputs "
                "read as token ids (e.g. embed's tokens) or positions (e.g. rope's positions)");
      FirstReader& f = first[static_cast<size_t>(input - input_tensors.begin())];
      if (f.feed != ops::Feed::kNone && f.feed != wanted)
        fail_at(r.inputs[s].where, "node '", r.name, "': graph input '", name, "' is read here as ",
                ops::feed_name(wanted), " and as ", ops::feed_name(f.feed), " by node '", f.node, "' at ",
                f.where.to_string(), ": expected one meaning per input");
      if (f.feed == ops::Feed::kNone) f = {wanted, r.inputs[s].where, r.name};
      has_token_ids = has_token_ids || wanted == ops::Feed::kTokenIds;
    }
  }
  if (!has_token_ids)
    fail_at(spec.inputs.empty() ? Location{spec.files.empty() ? std::string() : spec.files.front(), 0, 0}
                                : spec.inputs.front().spec.where(),
            "graph '", graph_name, "' has no input read as token ids (e.g. by embed's tokens)");
}

}  // namespace

Graph build_graph(const GraphSpec& spec, std::shared_ptr<const GgufFile> model_file, const LoadOptions& options) {
  const GgufFile& model = *model_file;
  Graph g;
  g.name = spec.name;
  g.files = spec.files;
  g.model_file = model_file;
  ParamResolver params(spec, model, options.set);
  g.params = params.resolve_all();
  fill_model_params(g);

  Assembly b{model, {}, expand_nodes(spec, params), {}, {}, {}, {}};
  // After the nodes: their attributes may read metadata too.
  check_reads_forward_metadata(model, params.metadata_read(), spec.files.empty() ? spec.name : spec.files.front());
  g.weight_files = options.weight_files;
  for (const auto& f : options.weight_files) b.extra_files.push_back(f.get());
  g.states = expand_states(spec, params);

  // Graph inputs are the first tensors.
  std::vector<int> input_tensors;
  for (const auto& in : spec.inputs) {
    Tensor t;
    t.name = in.name;
    const YAML::Node& n = in.spec.node;
    if (!n.IsMap() || !n["dtype"] || !n["shape"])
      fail_at(in.spec.where(), "input '", in.name, "': expected {dtype: f32|i32, shape: [...]}");
    const std::string dtype = n["dtype"].Scalar();
    if (dtype != "f32" && dtype != "i32")
      fail_at(location_of(n["dtype"], in.spec.file), "input '", in.name, "': expected dtype f32 or i32, found '",
              dtype, "'");
    t.dtype = dtype == "i32" ? DType::kI32 : DType::kF32;
    t.shape = parse_shape({n["shape"], in.spec.file}, params);
    b.tensors.push_back(t);
    b.tensor_where.push_back(in.spec.where());
    input_tensors.push_back(static_cast<int>(b.tensors.size() - 1));
  }
  g.inputs = input_tensors;

  std::map<std::string, size_t> seen_names;
  for (size_t j = 0; j < b.raw.size(); ++j) {
    auto [it, fresh] = seen_names.emplace(b.raw[j].name, j);
    if (!fresh)
      fail_at(b.raw[j].where, "node name '", b.raw[j].name, "' is already used at ",
              b.raw[it->second].where.to_string(), ": expected unique names");
  }

  b.resolve_names(input_tensors);
  const std::vector<size_t> order = b.topological_order();

  // Weights, shapes and state, in topological order so every input shape is known.
  std::vector<std::vector<std::optional<WeightBinding>>> weights(b.raw.size());
  std::vector<int> node_state(b.raw.size(), -1);
  std::vector<int> state_writer(g.states.size(), -1);
  for (size_t j : order) {
    const RawNode& r = b.raw[j];
    const ops::OpSchema& op = *r.schema;
    ops::ShapeQuery q;
    q.attrs = &r.attrs;
    for (size_t s = 0; s < op.inputs.size(); ++s) {
      const int t = b.node_inputs[j][s];
      q.inputs.push_back(t < 0 ? nullptr : &b.tensors[static_cast<size_t>(t)].shape);
      q.input_names.push_back(r.inputs[s].name);
      if (t >= 0 && b.tensors[static_cast<size_t>(t)].dtype != op.inputs[s].dtype)
        fail_at(r.inputs[s].where, "node '", r.name, "': input '", op.inputs[s].name, "' of op ", op.name,
                ": expected a ", ops::dtype_name(op.inputs[s].dtype), " tensor, found '", r.inputs[s].name,
                "' of type ", ops::dtype_name(b.tensors[static_cast<size_t>(t)].dtype));
    }
    std::vector<Shape> weight_shapes(op.weights.size());
    for (size_t w = 0; w < op.weights.size(); ++w) {
      weights[j].push_back(b.bind_weight(r, w));
      const auto& wb = weights[j].back();
      if (wb) weight_shapes[w].dims.assign(wb->dims.begin(), wb->dims.end());
      q.weights.push_back(wb ? &weight_shapes[w] : nullptr);
      q.weight_names.push_back(wb ? wb->tensor : std::string());
    }
    std::vector<Shape> out;
    if (std::string message = op.shape(q, &out); !message.empty())
      fail_at(r.where, "shape mismatch in node '", r.name, "' (op ", op.name, "): ", message);
    GGUFLOW_CHECK(out.size() == op.outputs.size());
    for (size_t o = 0; o < out.size(); ++o)
      b.tensors[static_cast<size_t>(b.node_outputs[j][o])].shape = out[o];
    if (r.expect_shape && *r.expect_shape != out[0])
      fail_at(r.shape_where, "shape mismatch in node '", r.name, "': expected ", r.expect_shape->to_string(),
              " (as written), found ", out[0].to_string(), " from the model");

    if (op.state.kind) {
      // The op names its state in one attribute; the op's rule checks that the declared state
      // fits the node and sizes its rows. One writer per state.
      const std::string& name = r.attrs.get_string(op.state.attr);
      const int s = g.find_state(name);
      const Location where = r.attr_where[static_cast<size_t>(op.attr_index(op.state.attr))];
      if (s < 0 || g.states[static_cast<size_t>(s)].kind != op.state.kind) {
        std::vector<std::string> names;
        for (const auto& st : g.states)
          if (st.kind == op.state.kind) names.push_back(st.name);
        std::string best = ops::closest_name(name, names);
        fail_at(where, "node '", r.name, "': expected a declared ", op.state.kind, " state, found '",
                name, "'", best.empty() ? std::string() : " (did you mean '" + best + "'?)");
      }
      State& st = g.states[static_cast<size_t>(s)];
      ops::KvLayout layout;
      if (std::string message = op.state.check(q, st.attrs, &layout); !message.empty())
        fail_at(where, "node '", r.name, "': ", message);
      if (state_writer[static_cast<size_t>(s)] >= 0)
        fail_at(where, "node '", r.name, "': state '", name, "' is already written by node '",
                b.raw[static_cast<size_t>(state_writer[static_cast<size_t>(s)])].name,
                "': expected one writer per state");
      state_writer[static_cast<size_t>(s)] = static_cast<int>(j);
      st.layout = layout;
      node_state[j] = s;
    }
  }

  // Outputs: the latest version of each name.
  for (const auto& o : spec.outputs) {
    const std::string name = o.node.Scalar();
    int found = -1;
    for (size_t t = 0; t < b.tensors.size(); ++t)
      if (b.tensors[t].name == name) found = static_cast<int>(t);
    if (found < 0) fail_at(o.where(), "output '", name, "': expected a tensor a node defines, found none");
    g.outputs.push_back(found);
  }

  // Live nodes: ancestors of the outputs and of every state writer. The rest is never computed.
  std::vector<bool> live(b.raw.size(), false);
  std::vector<int> stack;
  for (int t : g.outputs) stack.push_back(b.tensors[static_cast<size_t>(t)].producer);
  for (size_t j = 0; j < b.raw.size(); ++j)
    if (node_state[j] >= 0) stack.push_back(static_cast<int>(j));
  while (!stack.empty()) {
    const int j = stack.back();
    stack.pop_back();
    if (j < 0 || live[static_cast<size_t>(j)]) continue;
    live[static_cast<size_t>(j)] = true;
    for (int t : b.node_inputs[static_cast<size_t>(j)])
      if (t >= 0) stack.push_back(b.tensors[static_cast<size_t>(t)].producer);
  }

  check_input_feeds(b, order, live, input_tensors, spec, g.name);

  // Assemble: live nodes in topological order; tensors renumbered (inputs first, then outputs
  // of live nodes in node order).
  std::vector<int> tensor_map(b.tensors.size(), -1);
  for (int t : input_tensors) {
    tensor_map[static_cast<size_t>(t)] = static_cast<int>(g.tensors.size());
    g.tensors.push_back(b.tensors[static_cast<size_t>(t)]);
  }
  for (size_t j : order) {
    if (!live[j]) continue;
    const RawNode& r = b.raw[j];
    Node n;
    n.name = r.name;
    n.schema = r.schema;
    n.attrs = r.attrs;
    n.where = r.where;
    n.group = r.group;
    n.weights = std::move(weights[j]);
    n.state = node_state[j];
    const int index = static_cast<int>(g.nodes.size());
    for (int t : b.node_inputs[j]) {
      const int mapped = t < 0 ? -1 : tensor_map[static_cast<size_t>(t)];
      GGUFLOW_CHECK(t < 0 || mapped >= 0);
      n.inputs.push_back(mapped);
      if (mapped >= 0) g.tensors[static_cast<size_t>(mapped)].consumers.push_back(index);
    }
    for (int t : b.node_outputs[j]) {
      tensor_map[static_cast<size_t>(t)] = static_cast<int>(g.tensors.size());
      Tensor copy = b.tensors[static_cast<size_t>(t)];
      copy.producer = index;
      g.tensors.push_back(copy);
      n.outputs.push_back(tensor_map[static_cast<size_t>(t)]);
    }
    g.nodes.push_back(std::move(n));
  }
  g.inputs.clear();
  for (int t : input_tensors) g.inputs.push_back(tensor_map[static_cast<size_t>(t)]);
  for (int& t : g.outputs) t = tensor_map[static_cast<size_t>(t)];
  // A side file (--kv-proj) that no node reads would be ignored silently: the user asked for
  // something the graph does not do.
  for (const auto& file : g.weight_files) {
    bool read = false;
    for (const Node& n : g.nodes)
      for (const auto& w : n.weights) read = read || (w && w->file == file.get());
    if (!read)
      throw error(file->path(), ": graph '", g.name,
                  "' reads none of this file's tensors (it has no node that uses them, such as "
                  "kv_project in graphs/decode-lowrank-kv.yaml)");
  }
  return g;
}

}  // namespace gguflow::graph
