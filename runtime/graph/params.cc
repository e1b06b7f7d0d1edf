// Lazy, memoised evaluation of graph parameters against a model's metadata.
#include "runtime/graph/params.h"

#include <filesystem>

#include "ops/op_registry.h"

namespace gguflow::graph {

namespace {
std::string model_name(const GgufFile& model) {
  return std::filesystem::path(model.path()).filename().string();
}
}  // namespace

ParamResolver::ParamResolver(const GraphSpec& spec, const GgufFile& model,
                             const std::vector<std::pair<std::string, std::string>>& overrides)
    : spec_(spec), model_(model), arch_(model.architecture()) {
  bool declares_arch = false;
  for (const auto& p : spec.params) declares_arch |= p.name == "arch";
  if (!declares_arch) {
    order_.push_back("arch");
    Entry& e = entries_["arch"];
    e.state = Entry::kDone;
    e.value.value = arch_;
    e.source = "general.architecture";
    if (arch_.empty()) {
      e.value.missing = true;
      e.value.missing_what = "metadata key 'general.architecture' (not in " + model_name(model) + ")";
    }
  }
  for (const auto& p : spec.params) {
    order_.push_back(p.name);
    entries_[p.name].spec = &p;
  }
  for (const auto& override_entry : overrides) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& name = override_entry.first;
    const std::string& text = override_entry.second;
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      throw error("--set ", name, "=", text, ": expected the name of one of the graph's params (",
                  [&] {
                    std::string s;
                    for (const auto& n : order_) s += (s.empty() ? "" : ", ") + n;
                    return s;
                  }(),
                  "), found '", name, "'",
                  [&]() -> std::string {
                    std::string best = ops::closest_name(name, order_);
                    return best.empty() ? "" : " (did you mean '" + best + "'?)";
                  }());
    }
    Entry& e = it->second;
    e.state = Entry::kDone;
    e.overridden = true;
    e.source = "--set";
    e.value = ExprValue{};
    if (!parse_number(text, &e.value.value)) e.value.value = text;
  }
}

ExprValue ParamResolver::evaluate_spec(const ParamSpec& p) {
  const YAML::Node& node = p.value.node;
  const Location where = p.value.where();
  if (node.IsScalar()) {
    ExprValue v;
    if (parse_number(node.Scalar(), &v.value)) return v;
    return evaluate_expression(node.Scalar(), *this, where);
  }
  if (node.IsMap() && node["value"]) {
    ExprValue v;
    const std::string text = node["value"].Scalar();
    if (!parse_number(text, &v.value)) v.value = text;
    return v;
  }
  if (node.IsMap() && node["switch"]) {
    const YAML::Node sw = node["switch"];
    ExprValue key = evaluate_expression(sw.Scalar(), *this, location_of(sw, p.value.file));
    auto literal = [](const YAML::Node& n) {
      ExprValue v;
      if (!parse_number(n.Scalar(), &v.value)) v.value = n.Scalar();
      return v;
    };
    if (!key.missing) {
      const std::string k = ops::attr_to_string(key.value);
      if (node["cases"]) {
        if (!node["cases"].IsMap())
          fail_at(location_of(node["cases"], p.value.file), "expected 'cases' to be a map of value: result");
        for (const auto& kv : node["cases"])
          if (kv.first.Scalar() == k) return literal(kv.second);
      }
    }
    if (node["default"]) return literal(node["default"]);
    if (key.missing) return key;
    fail_at(where, "param '", p.name, "': expected one of the cases for '", ops::attr_to_string(key.value),
            "' or a 'default', found neither");
  }
  fail_at(where, "param '", p.name, "': expected a number, an expression, {value: ...} or "
          "{switch: ..., cases: ..., default: ...}");
}

ExprValue ParamResolver::resolve(const std::string& name, Entry& entry) {
  if (entry.state == Entry::kDone) return entry.value;
  if (entry.state == Entry::kInProgress) {
    std::string chain;
    for (const auto& n : resolving_) chain += n + " -> ";
    fail_at(entry.spec->value.where(), "param '", name, "' depends on itself: ", chain, name);
  }
  entry.state = Entry::kInProgress;
  resolving_.push_back(name);
  entry.value = evaluate_spec(*entry.spec);
  resolving_.pop_back();
  entry.state = Entry::kDone;
  const YAML::Node& node = entry.spec->value.node;
  // Provenance for `gguflow lower` comments: the expression or table, not literal values.
  AttrValue literal;
  if (node.IsScalar()) entry.source = parse_number(node.Scalar(), &literal) ? "" : node.Scalar();
  else if (node["switch"]) entry.source = "switch on " + node["switch"].Scalar();
  else entry.source = "";
  return entry.value;
}

ExprValue ParamResolver::param(const std::string& name, const Location& where) {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->first == name) {
      ExprValue v;
      v.value = it->second;
      return v;
    }
  }
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::vector<std::string> names = order_;
    for (const auto& v : vars_) names.push_back(v.first);
    std::string best = ops::closest_name(name, names);
    fail_at(where, "expected a param name, found '", name, "'",
            best.empty() ? std::string() : " (did you mean '" + best + "'?)");
  }
  return resolve(name, it->second);
}

ExprValue ParamResolver::metadata(const std::string& pattern, const Location& where) {
  std::string key = pattern;
  for (size_t at; (at = key.find("{arch}")) != std::string::npos;) key.replace(at, 6, arch_);
  metadata_read_.insert(key);
  const GgufValue* v = model_.find(key);
  ExprValue out;
  if (!v) {
    out.missing = true;
    out.missing_what = "metadata key '" + key + "' (not in " + model_name(model_) + ")";
    return out;
  }
  if (v->is_integer()) out.value = v->as_int(key);
  else if (v->is_number()) out.value = v->as_double(key);
  else if (v->type == GgufValueType::kBool) out.value = int64_t{v->as_bool(key) ? 1 : 0};
  else if (v->type == GgufValueType::kString) out.value = std::string(v->as_string(key));
  else
    fail_at(where, "metadata key '", key, "': expected a number or a string, found ",
            gguf_value_type_name(v->type));
  return out;
}

ExprValue ParamResolver::tensor_dim(const std::string& tensor, int64_t axis, const Location& where) {
  ExprValue out;
  const GgufTensorInfo* info = model_.find_tensor(tensor);
  if (!info) {
    out.missing = true;
    out.missing_what = "tensor '" + tensor + "' (not in " + model_name(model_) + ")";
    return out;
  }
  if (axis < 0 || static_cast<size_t>(axis) >= info->dims.size())
    fail_at(where, "dim(", tensor, ", ", axis, "): expected an axis below ", info->dims.size(),
            " (the tensor's rank), found ", axis);
  out.value = static_cast<int64_t>(info->dims[static_cast<size_t>(axis)]);
  return out;
}

AttrValue ParamResolver::evaluate_required(const std::string& text, const Location& where,
                                           const std::string& what) {
  ExprValue v = evaluate_expression(text, *this, where);
  if (v.missing)
    fail_at(where, what, ": expression '", text, "' needs ", v.missing_what,
            ": expected the key in the model or a default (write '?? VALUE')");
  return v.value;
}

std::vector<Param> ParamResolver::resolve_all() {
  std::vector<Param> out;
  for (const auto& name : order_) {
    Entry& e = entries_[name];
    ExprValue v = e.spec && !e.overridden ? resolve(name, e) : e.value;
    if (v.missing) {
      const Location where = e.spec ? e.spec->value.where() : Location{};
      fail_at(where, "param '", name, "' needs ", v.missing_what,
              ": expected the key in the model or a default (write '?? VALUE')");
    }
    out.push_back(Param{name, v.value, e.source});
  }
  return out;
}

}  // namespace gguflow::graph
