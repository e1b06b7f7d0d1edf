// Parameters of a graph bound to one model: `params:` entries evaluated lazily against GGUF
// metadata (with `??` defaults), `--set name=value` overrides, and repeat variables.
//
// A param value is one of: a number (literal); a string (an expression, see expression.h);
// `{value: X}` (a literal string or number, as `gguflow lower` writes them); or
// `{switch: EXPR, cases: {KEY: VALUE, ...}, default: VALUE}` (a table, e.g. rope mode by arch).
// `arch` (general.architecture) is always defined unless the graph declares its own.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/graph/expression.h"
#include "runtime/graph/spec.h"

namespace gguflow::graph {

class ParamResolver : public ExprScope {
 public:
  ParamResolver(const GraphSpec& spec, const GgufFile& model,
                const std::vector<std::pair<std::string, std::string>>& overrides);

  // Every declared param, resolved, in declaration order (`arch` first when built in).
  std::vector<Param> resolve_all();
  // The metadata keys the params looked up (present in the model or not), "{arch}" expanded.
  const std::set<std::string>& metadata_read() const { return metadata_read_; }

  // Evaluates an expression that must produce a value (an attribute, a repeat count).
  // `what` names the thing in the error when the value is missing.
  AttrValue evaluate_required(const std::string& text, const Location& where, const std::string& what);

  // Repeat variables shadow params while a repeat body is expanded.
  void push_var(const std::string& name, int64_t value) { vars_.emplace_back(name, value); }
  void pop_var() { vars_.pop_back(); }

  ExprValue param(const std::string& name, const Location& where) override;
  ExprValue metadata(const std::string& key, const Location& where) override;
  ExprValue tensor_dim(const std::string& tensor, int64_t axis, const Location& where) override;

 private:
  struct Entry {
    const ParamSpec* spec = nullptr;  // null for the built-in `arch` and for overrides only
    enum { kUnresolved, kInProgress, kDone } state = kUnresolved;
    ExprValue value;
    std::string source;
    bool overridden = false;
    std::string override_text;
  };
  ExprValue resolve(const std::string& name, Entry& entry);
  ExprValue evaluate_spec(const ParamSpec& spec);

  const GraphSpec& spec_;
  const GgufFile& model_;
  std::string arch_;
  std::vector<std::string> order_;
  std::map<std::string, Entry> entries_;
  std::vector<std::pair<std::string, int64_t>> vars_;
  std::vector<std::string> resolving_;  // the chain being evaluated, for cycle messages
  std::set<std::string> metadata_read_;
};

}  // namespace gguflow::graph
