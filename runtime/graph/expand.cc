// Repeat expansion and per-node parsing against the op registry.
#include "runtime/graph/expand.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ops/op_registry.h"
#include "runtime/core/checked_math.h"
#include "runtime/graph/limits.h"

namespace gguflow::graph {

namespace {

struct Var {
  std::string name;
  int64_t value;
};

// Replaces `{var}` by its value for every repeat variable in scope (not `${...}`, which is an
// expression that sees the variable as a param).
std::string substitute(std::string text, const std::vector<Var>& vars) {
  for (const auto& v : vars) {
    const std::string pattern = "{" + v.name + "}";
    for (size_t at = 0; (at = text.find(pattern, at)) != std::string::npos;) {
      if (at > 0 && text[at - 1] == '$') {
        at += pattern.size();
        continue;
      }
      const std::string value = std::to_string(v.value);
      text.replace(at, pattern.size(), value);
      at += value.size();
    }
  }
  return text;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best = ops::closest_name(word, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string scalar_of(const YAML::Node& n, const std::string& file, const char* what) {
  if (!n.IsScalar()) fail_at(location_of(n, file), "expected ", what, ", found ",
                             n.IsMap() ? "a map" : n.IsSequence() ? "a list" : "nothing");
  return n.Scalar();
}

// A value written in YAML for an attribute or a count: `$name`, `${expr}` or a literal.
AttrValue value_of(const std::string& text, const Location& where, ParamResolver& params,
                   const std::string& what) {
  if (text.size() > 3 && text.rfind("${", 0) == 0 && text.back() == '}')
    return params.evaluate_required(text.substr(2, text.size() - 3), where, what);
  if (text.size() > 1 && text[0] == '$') return params.evaluate_required(text.substr(1), where, what);
  AttrValue v;
  if (parse_number(text, &v)) return v;
  if (text == "true") return true;
  if (text == "false") return false;
  return text;
}

AttrValue typed_attr(const ops::OpSchema& op, const ops::AttrSpec& spec, const AttrValue& v,
                     const Location& where) {
  auto mismatch = [&](const char* expected) {
    fail_at(where, "attribute '", spec.name, "' of op ", op.name, ": expected ", expected, ", found '",
            ops::attr_to_string(v), "'");
  };
  switch (spec.type) {
    case ops::AttrType::kInt:
      if (!std::holds_alternative<int64_t>(v)) mismatch("an integer");
      return v;
    case ops::AttrType::kFloat:
      if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
      if (!std::holds_alternative<double>(v)) mismatch("a number");
      if (!std::isfinite(std::get<double>(v))) mismatch("a finite number");  // nan, inf: never meant
      return v;
    case ops::AttrType::kBool:
      if (!std::holds_alternative<bool>(v)) mismatch("true or false");
      return v;
    case ops::AttrType::kString:
      return ops::attr_to_string(v);
    case ops::AttrType::kEnum: {
      const std::string s = ops::attr_to_string(v);
      if (std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end()) {
        std::string choices;
        for (const auto& c : spec.choices) choices += (choices.empty() ? "" : ", ") + c;
        fail_at(where, "attribute '", spec.name, "' of op ", op.name, ": expected one of ", choices,
                ", found '", s, "'", did_you_mean(s, spec.choices));
      }
      return s;
    }
  }
  return v;
}

[[noreturn]] void over_node_budget(const Location& where, const std::string& what, uint64_t limit) {
  fail_at(where, what, ", more than the limit of ", limit, " graph items (nodes and repeat iterations; set ",
          kMaxNodesEnv, " to raise it)");
}

// A repeat count against the limit (GGUFLOW_MAX_REPEAT).
void check_repeat_count(int64_t n, const Location& where, uint64_t limit) {
  if (static_cast<uint64_t>(n) > limit)
    fail_at(where, "repeat: count ", n, " is more than the limit of ", limit, " (set ", kMaxRepeatEnv,
            " to raise it)");
}

class Expander {
 public:
  Expander(ParamResolver& params) : params_(params), limits_(graph_limits()) {}

  // Every item visited counts one (a node, or a repeat block once per iteration of its parent),
  // so the work and the memory of an expansion are bounded by limits_.max_nodes.
  void items(const std::vector<SpecItem>& list, const std::string& group) {
    for (const auto& item : list) {
      if (++expanded_ > limits_.max_nodes)
        over_node_budget(item.yaml.where(), "the graph expands to " + std::to_string(expanded_) + " items", limits_.max_nodes);
      if (item.is_repeat) repeat(item);
      else out.push_back(node(item.yaml, group));
    }
  }

  std::vector<RawNode> out;

 private:
  // The items `list` expands to (as counted by items()), evaluating each nested repeat count
  // with the enclosing variables at 0; stops as soon as the total passes `budget` (returns
  // nullopt then), so estimating costs at most `budget` steps. Run before a repeat unrolls, so
  // an oversized graph fails before a single node of it is built.
  std::optional<uint64_t> estimate(const std::vector<SpecItem>& list, uint64_t budget) {
    uint64_t total = 0;
    for (const auto& item : list) {
      if (++total > budget) return std::nullopt;
      if (!item.is_repeat) continue;
      const int64_t n = count_of(item.count);
      if (n == 0) continue;
      vars_.push_back({item.var, 0});
      params_.push_var(item.var, 0);
      const auto body = estimate(item.body, budget - total);
      params_.pop_var();
      vars_.pop_back();
      if (!body) return std::nullopt;
      const auto all = checked_mul<uint64_t>(static_cast<uint64_t>(n), *body);
      if (!all || *all > budget - total) return std::nullopt;
      total += *all;
    }
    return total;
  }

  int64_t count_of(const Sourced& count) {
    const std::string text = substitute(scalar_of(count.node, count.file, "a repeat count"), vars_);
    AttrValue v = value_of(text, count.where(), params_, "repeat count");
    // A bare name (`repeat: n_layer`) is a param reference too.
    if (const auto* s = std::get_if<std::string>(&v)) v = params_.evaluate_required(*s, count.where(), "repeat count");
    const auto* n = std::get_if<int64_t>(&v);
    if (!n || *n < 0)
      fail_at(count.where(), "repeat: expected a non-negative integer count, found '",
              ops::attr_to_string(v), "'");
    check_repeat_count(*n, count.where(), limits_.max_repeat);
    return *n;
  }

  void repeat(const SpecItem& item) {
    const int64_t n = count_of(item.count);
    if (n > 0) {
      const uint64_t left = limits_.max_nodes - expanded_;
      vars_.push_back({item.var, 0});
      params_.push_var(item.var, 0);
      const auto body = estimate(item.body, left);
      params_.pop_var();
      vars_.pop_back();
      const auto all = body ? checked_mul<uint64_t>(static_cast<uint64_t>(n), *body) : std::nullopt;
      if (!all || *all > left)
        over_node_budget(item.count.where(),
                         "repeat: " + std::to_string(n) + " iterations of " +
                             (body ? std::to_string(*body) : "more than " + std::to_string(left)) +
                             " items each would expand the graph to more than " +
                             std::to_string(limits_.max_nodes) + " items",
                         limits_.max_nodes);
    }
    for (int64_t i = 0; i < n; ++i) {
      vars_.push_back({item.var, i});
      params_.push_var(item.var, i);
      const std::string group =
          item.group.empty() ? item.var + "=" + std::to_string(i) : substitute(item.group, vars_);
      items(item.body, group);
      params_.pop_var();
      vars_.pop_back();
    }
  }

  RawNode node(const Sourced& yaml, const std::string& group) {
    const std::string& file = yaml.file;
    RawNode r;
    r.where = yaml.where();
    r.group = group;
    const YAML::Node op_node = yaml.node["op"];
    const std::string op_name = scalar_of(op_node, file, "an op name");
    r.schema = ops::find_op(op_name);
    if (!r.schema) {
      std::vector<std::string> names;
      for (const auto& op : ops::all_ops()) names.push_back(op->name);
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      fail_at(location_of(op_node, file), "unknown op '", op_name, "': expected one of ", list,
              did_you_mean(op_name, names));
    }
    const ops::OpSchema& op = *r.schema;
    r.inputs.resize(op.inputs.size());
    r.outputs.resize(op.outputs.size());
    r.weights.resize(op.weights.size());
    std::vector<bool> attr_given(op.attrs.size(), false);
    std::vector<std::pair<AttrValue, Location>> attr_values(op.attrs.size());

    std::vector<std::string> keys = {"op", "name", "group", "in", "out", "shape"};
    for (const auto& s : op.inputs) keys.push_back(s.name);
    for (const auto& s : op.weights) keys.push_back(s.name);
    for (const auto& s : op.attrs) keys.push_back(s.name);

    auto names_of = [&](const YAML::Node& n, const char* what) {
      std::vector<NameRef> refs;
      if (n.IsSequence()) {
        for (const auto& e : n) refs.push_back({substitute(scalar_of(e, file, what), vars_), location_of(e, file)});
      } else {
        refs.push_back({substitute(scalar_of(n, file, what), vars_), location_of(n, file)});
      }
      return refs;
    };

    // One value per input slot: with both `in:` and the slot's name, one of them won silently.
    const auto set_input = [&](size_t slot, NameRef ref, const Location& where) {
      if (!r.inputs[slot].name.empty())
        fail_at(where, "op ", op.name, ": input '", op.inputs[slot].name, "' given twice (by `in:` and by name)");
      r.inputs[slot] = std::move(ref);
    };

    for (const auto& kv : yaml.node) {
      const std::string key = kv.first.Scalar();
      const YAML::Node& value = kv.second;
      const Location key_where = location_of(kv.first, file);
      const Location where = location_of(value, file);
      if (key == "op") continue;
      if (key == "name") {
        r.name = substitute(scalar_of(value, file, "a node name"), vars_);
      } else if (key == "in") {
        auto refs = names_of(value, "a tensor name");
        if (refs.size() > op.inputs.size())
          fail_at(where, "op ", op.name, ": expected at most ", op.inputs.size(), " inputs, found ",
                  refs.size());
        for (size_t i = 0; i < refs.size(); ++i) set_input(i, refs[i], where);
      } else if (key == "out") {
        auto refs = names_of(value, "a tensor name");
        if (refs.size() != op.outputs.size())
          fail_at(where, "op ", op.name, ": expected ", op.outputs.size(), " output name(s), found ",
                  refs.size());
        r.outputs = refs;
      } else if (key == "group") {
        r.group = substitute(scalar_of(value, file, "a group label"), vars_);
      } else if (key == "shape") {
        r.expect_shape = parse_shape({value, file}, params_);
        r.shape_where = where;
      } else if (int i = op.input_index(key); i >= 0) {
        set_input(static_cast<size_t>(i), {substitute(scalar_of(value, file, "a tensor name"), vars_), where},
                  key_where);
      } else if (int w = op.weight_index(key); w >= 0) {
        WeightRef& ref = r.weights[static_cast<size_t>(w)];
        ref.where = where;
        if (value.IsMap()) {  // lowered form {tensor, type, dims}
          if (!value["tensor"]) fail_at(where, "expected {tensor: NAME, type: T, dims: [..]}, found no 'tensor'");
          ref.text = substitute(value["tensor"].Scalar(), vars_);
          if (value["type"]) ref.expect_type = value["type"].Scalar();
          if (value["dims"]) {
            std::vector<uint64_t> dims;
            for (const auto& d : value["dims"]) dims.push_back(d.as<uint64_t>());
            ref.expect_dims = dims;
          }
        } else {
          ref.text = substitute(scalar_of(value, file, "a GGUF tensor name"), vars_);
        }
      } else if (int a = op.attr_index(key); a >= 0) {
        const auto& spec = op.attrs[static_cast<size_t>(a)];
        const std::string text = substitute(scalar_of(value, file, "an attribute value"), vars_);
        AttrValue v = value_of(text, where, params_, std::string("attribute '") + spec.name + "'");
        attr_values[static_cast<size_t>(a)] = {typed_attr(op, spec, v, where), where};
        attr_given[static_cast<size_t>(a)] = true;
      } else {
        std::string valid;
        for (size_t k = 1; k < keys.size(); ++k) valid += (valid.empty() ? "" : ", ") + keys[k];
        fail_at(key_where, "unknown attribute '", key, "' for op ", op.name, ": expected one of ", valid,
                did_you_mean(key, keys));
      }
    }

    for (size_t i = 0; i < op.inputs.size(); ++i)
      if (!op.inputs[i].optional && r.inputs[i].name.empty())
        fail_at(r.where, "op ", op.name, " (node '", r.name.empty() ? op.name : r.name,
                "'): missing required input '", op.inputs[i].name, "': expected `", op.inputs[i].name,
                ": TENSOR` or `in:`, found none");
    for (size_t w = 0; w < op.weights.size(); ++w)
      if (!op.weights[w].optional && r.weights[w].text.empty())
        fail_at(r.where, "op ", op.name, " (node '", r.name.empty() ? op.name : r.name,
                "'): missing required weight '", op.weights[w].name, "': expected `", op.weights[w].name,
                ": GGUF_TENSOR_NAME`, found none");
    if (r.outputs.empty() || r.outputs[0].name.empty())
      fail_at(r.where, "op ", op.name, ": missing 'out': expected the name of the output tensor");
    for (size_t a = 0; a < op.attrs.size(); ++a) {
      const auto& spec = op.attrs[a];
      if (attr_given[a]) {
        r.attrs.values.emplace_back(spec.name, attr_values[a].first);
        r.attr_where.push_back(attr_values[a].second);
      } else if (spec.required) {
        fail_at(r.where, "op ", op.name, " (node '", r.name.empty() ? op.name : r.name,
                "'): missing required attribute '", spec.name, "' (", ops::attr_type_name(spec.type),
                "): ", spec.help);
      } else {
        r.attrs.values.emplace_back(spec.name, spec.default_value);
        r.attr_where.push_back(r.where);
      }
    }
    if (r.name.empty()) r.name = std::string(op.name) + "." + std::to_string(unnamed_++);
    return r;
  }

  ParamResolver& params_;
  GraphLimits limits_;
  uint64_t expanded_ = 0;  // items visited so far (see items())
  std::vector<Var> vars_;
  int unnamed_ = 0;
};

}  // namespace

Shape parse_shape(const Sourced& list, ParamResolver& params) {
  if (!list.node.IsSequence()) fail_at(list.where(), "expected a shape such as [T] or [$n_embd, T]");
  Shape s;
  for (const auto& d : list.node) {
    const Location where = location_of(d, list.file);
    const std::string text = scalar_of(d, list.file, "a dimension");
    if (text == "T") {
      s.dims.push_back(kTokenDim);
      continue;
    }
    AttrValue v = value_of(text, where, params, "dimension");
    const auto* n = std::get_if<int64_t>(&v);
    if (!n || *n <= 0) fail_at(where, "expected a positive integer dimension or T, found '", text, "'");
    s.dims.push_back(*n);
  }
  return s;
}

std::vector<RawNode> expand_nodes(const GraphSpec& spec, ParamResolver& params) {
  Expander e(params);
  e.items(spec.items, "");
  return std::move(e.out);
}

std::vector<State> expand_states(const GraphSpec& spec, ParamResolver& params) {
  std::vector<State> out;
  for (const auto& s : spec.states) {
    if (!s.node.IsMap()) fail_at(s.where(), "expected a state {name, kind, ...}, found something else");
    int64_t count = 1;
    std::string var = "i";
    const bool repeated = static_cast<bool>(s.node["repeat"]);
    if (s.node["as"]) var = s.node["as"].Scalar();
    if (repeated) {
      const YAML::Node c = s.node["repeat"];
      const Location where = location_of(c, s.file);
      AttrValue v = value_of(scalar_of(c, s.file, "a repeat count"), where, params, "repeat count");
      if (const auto* str = std::get_if<std::string>(&v)) v = params.evaluate_required(*str, where, "repeat count");
      const auto* n = std::get_if<int64_t>(&v);
      if (!n || *n < 0)
        fail_at(where, "repeat: expected a non-negative integer count, found '", ops::attr_to_string(v), "'");
      check_repeat_count(*n, where, graph_limits().max_repeat);
      count = *n;
    }
    for (int64_t i = 0; i < count; ++i) {
      std::vector<Var> vars;
      if (repeated) vars.push_back({var, i}), params.push_var(var, i);
      State st;
      st.where = s.where();
      for (const auto& kv : s.node) {
        const std::string key = kv.first.Scalar();
        const Location where = location_of(kv.second, s.file);
        const std::string text = substitute(scalar_of(kv.second, s.file, "a state field"), vars);
        if (key == "repeat" || key == "as") continue;
        if (key == "name") st.name = text;
        else if (key == "kind") st.kind = text;
        else st.attrs.set(key, value_of(text, where, params, "state field '" + key + "'"));
      }
      if (repeated) params.pop_var();
      if (st.name.empty()) fail_at(st.where, "state: expected a 'name', found none");
      if (st.kind != "kv_cache")
        fail_at(st.where, "state '", st.name, "': expected kind kv_cache, found '", st.kind, "'");
      for (const char* field : {"n_head_kv", "head_dim"}) {
        if (!st.attrs.has(field) || !std::holds_alternative<int64_t>(st.attrs.get(field)) ||
            st.attrs.get_int(field) <= 0)
          fail_at(st.where, "state '", st.name, "' (kv_cache): expected a positive integer '", field, "'");
      }
      st.n_head_kv = st.attrs.get_int("n_head_kv");
      st.head_dim = st.attrs.get_int("head_dim");
      const std::pair<const char*, std::optional<ops::KvCacheType>*> cache_types[] = {
          {"cache_type_k", &st.cache_type_k}, {"cache_type_v", &st.cache_type_v}};
      for (const auto& [field, slot] : cache_types) {
        if (!st.attrs.has(field)) continue;
        const std::string name = ops::attr_to_string(st.attrs.get(field));
        const auto type = ops::find_kv_cache_type(name);
        if (!type)
          fail_at(st.where, "state '", st.name, "' (kv_cache): '", field, "' expected one of ",
                  ops::kv_cache_type_names(), ", found '", name, "'");
        *slot = *type;
      }
      st.layout = {st.n_head_kv * st.head_dim, st.n_head_kv * st.head_dim};  // until a writer says
      for (const auto& other : out)
        if (other.name == st.name)
          fail_at(st.where, "state '", st.name, "' is declared twice (first at ", other.where.to_string(), ")");
      out.push_back(std::move(st));
    }
  }
  return out;
}

}  // namespace gguflow::graph
