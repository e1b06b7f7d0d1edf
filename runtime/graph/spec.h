// The graph template as read from YAML, before binding to a model: params unevaluated, repeats
// unexpanded, `{i}` not substituted, `extends` already merged. Internal to runtime/graph.
//
// YAML nodes are kept (they carry line/column marks), each with the file it came from, so every
// later error can name file:line:column even for nodes inherited through `extends`.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "ops/error.h"
#include "runtime/graph/graph.h"

namespace gguflow::graph {

// A YAML node with the file it was read from.
//
// Assignment rebinds `node`. YAML::Node's own operator= writes through: the node it referred
// to takes the right-hand side's content, so every other handle to that node (another item of
// the same list, shifted by a vector erase or insert) would silently change too.
struct Sourced {
  YAML::Node node;
  std::string file;

  Sourced() = default;
  Sourced(YAML::Node n, std::string f) : node(std::move(n)), file(std::move(f)) {}
  Sourced(const Sourced&) = default;
  Sourced& operator=(const Sourced& other) {
    node.reset(other.node);
    file = other.file;
    return *this;
  }
  ~Sourced() = default;

  Location where() const;
};

Location location_of(const YAML::Node& node, const std::string& file);

// Throws gguflow::Error "FILE:LINE:COL: message".
template <typename... Parts>
[[noreturn]] void fail_at(const Location& where, Parts&&... parts) {
  throw error(where.to_string(), ": ", std::forward<Parts>(parts)...);
}

// One entry of a `nodes:` list: a node (a map with `op`) or a repeat block.
struct SpecItem {
  Sourced yaml;             // the whole map
  std::string name;         // the node's `name:` as written ("blk.{i}.attn_q"), "" if unnamed
  bool is_repeat = false;
  // Repeat blocks only.
  Sourced count;            // the `repeat:` value: an integer or an expression
  std::string var = "i";    // `as:` (the substituted variable)
  std::string group;        // `group:` label pattern, e.g. "blk.{i}" (pictures)
  std::vector<SpecItem> body;
};

struct ParamSpec {
  std::string name;
  Sourced value;  // a number, an expression string, or a map (switch / value)
};

struct InputSpecYaml {
  std::string name;
  Sourced spec;   // {dtype: i32, shape: [T]}
};

struct GraphSpec {
  std::string name;
  std::vector<std::string> files;  // top file first, then its bases
  std::vector<std::string> architectures;  // `architectures:` of the nearest file giving it
  std::string job;                         // `job:` of the top file only ("" when absent)
  std::vector<std::string> unused;         // `unused:` of every file in the chain, base first
  std::vector<ParamSpec> params;
  std::vector<InputSpecYaml> inputs;
  std::vector<Sourced> outputs;    // each a scalar tensor name
  std::vector<Sourced> states;     // each a map {name, kind, repeat?, ...}
  std::vector<SpecItem> items;
};

// Reads `path` and everything it extends. Throws gguflow::Error (with file:line:column) for
// YAML syntax errors, unknown top-level keys, missing or recursive `extends`, and edits
// (remove/replace/insert_*) naming nodes the base lacks.
GraphSpec load_spec(const std::string& path);
// The same from text already in memory; `file` names it in messages and anchors `extends`.
GraphSpec load_spec_text(const std::string& text, const std::string& file);

}  // namespace gguflow::graph
