// YAML -> GraphSpec, including `extends` and the edits a derived graph makes to its base.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ops/op_registry.h"
#include "runtime/core/input_file.h"
#include "runtime/graph/limits.h"
#include "runtime/graph/spec.h"

namespace gguflow::graph {

namespace fs = std::filesystem;

Location location_of(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return Location{file, 0, 0};
  return Location{file, mark.line + 1, mark.column + 1};
}

Location Sourced::where() const { return location_of(node, file); }

namespace {

const std::vector<std::string> kTopKeys = {"graph",   "extends",       "architectures", "job",
                                           "unused",  "params",        "inputs",        "outputs",
                                           "state",   "nodes",         "remove",        "replace",
                                           "insert_before", "insert_after", "append",
                                           "sampler"};  // read by sampler_section.cc

const std::vector<std::string> kJobs = {"generate", "embed"};

std::string hint(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best = ops::closest_name(word, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

std::string scalar(const Sourced& s, const char* what) {
  if (!s.node.IsScalar()) fail_at(s.where(), "expected ", what, " (a plain value), found a ",
                                  s.node.IsMap() ? "map" : s.node.IsSequence() ? "list" : "null");
  return s.node.Scalar();
}

void require_kind(const Sourced& s, YAML::NodeType::value kind, const char* what) {
  if (s.node.Type() == kind) return;
  const char* found = s.node.IsMap() ? "a map" : s.node.IsSequence() ? "a list"
                      : s.node.IsScalar() ? "a plain value" : "nothing";
  fail_at(s.where(), "expected ", what, ", found ", found);
}

// A list of plain values, e.g. `architectures: [llama, qwen2]`.
std::vector<std::string> parse_words(const Sourced& list, const char* key, const char* what) {
  if (!list.node.IsSequence()) fail_at(list.where(), "expected '", key, "' to be a list of ", what, ", found ",
                                       list.node.IsMap() ? "a map" : list.node.IsNull() ? "nothing" : "a plain value");
  std::vector<std::string> words;
  for (const auto& w : list.node) words.push_back(scalar({w, list.file}, what));
  return words;
}

std::vector<SpecItem> parse_items(const Sourced& list, const char* key);

// Node and repeat entries parsed for the current load (all files of an extends chain). YAML
// aliases let a 3 KB file name 10^9 entries (malformed/graph_alias_bomb.yaml): the count is
// checked against the graph budget as each entry is parsed, before the tree grows past it.
struct ItemBudget {
  uint64_t parsed = 0;
  uint64_t limit = 0;
};
thread_local ItemBudget* item_budget = nullptr;

// Repeat blocks nest by recursion here and in expansion: a bound keeps deep nesting (YAML aliases
// make it cheap to write) a clean error instead of a stack overflow (fuzz/findings).
constexpr int kMaxRepeatNesting = 64;
thread_local int repeat_nesting = 0;

SpecItem parse_item(const Sourced& entry) {
  if (item_budget && ++item_budget->parsed > item_budget->limit)
    fail_at(entry.where(), "the graph holds more than ", item_budget->limit,
            " node and repeat entries once its YAML aliases are resolved, more than the limit of ",
            item_budget->limit, " graph items (set ", kMaxNodesEnv, " to raise it)");
  require_kind(entry, YAML::NodeType::Map, "a node (a map with 'op') or a repeat block");
  SpecItem item;
  item.yaml = entry;
  if (const auto n = entry.node["name"]) item.name = scalar({n, entry.file}, "a node name");
  if (const auto r = entry.node["repeat"]) {
    item.is_repeat = true;
    item.count = {r, entry.file};
    for (const auto& kv : entry.node) {
      const std::string key = kv.first.Scalar();
      Sourced value{kv.second, entry.file};
      if (key == "repeat" || key == "name") continue;
      if (key == "as") item.var = scalar(value, "a variable name");
      else if (key == "group") item.group = scalar(value, "a group label such as blk.{i}");
      else if (key == "nodes") {
        if (repeat_nesting >= kMaxRepeatNesting)
          fail_at(entry.where(), "repeat blocks nested deeper than ", kMaxRepeatNesting,
                  " levels: expected at most ", kMaxRepeatNesting);
        ++repeat_nesting;
        try {
          item.body = parse_items(value, "nodes");
        } catch (...) {
          --repeat_nesting;
          throw;
        }
        --repeat_nesting;
      }
      else
        fail_at(location_of(kv.first, entry.file), "unknown key '", key,
                "' in a repeat block: expected repeat, as, group, name or nodes",
                hint(key, {"repeat", "as", "group", "name", "nodes"}));
    }
    if (!entry.node["nodes"]) fail_at(entry.where(), "repeat block without 'nodes:'");
  } else if (!entry.node["op"]) {
    fail_at(entry.where(), "expected a node with 'op:' or a block with 'repeat:', found neither");
  }
  return item;
}

std::vector<SpecItem> parse_items(const Sourced& list, const char* key) {
  std::vector<SpecItem> items;
  if (list.node.IsNull()) return items;
  if (!list.node.IsSequence()) fail_at(list.where(), "expected '", key, "' to be a list, found ",
                                       list.node.IsMap() ? "a map" : "a plain value");
  for (const auto& entry : list.node) items.push_back(parse_item({entry, list.file}));
  return items;
}

// Finds the item named `name` anywhere in the tree: its list and index.
bool find_item(std::vector<SpecItem>& items, const std::string& name, std::vector<SpecItem>** list,
               size_t* index) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) {
      *list = &items, *index = i;
      return true;
    }
    if (items[i].is_repeat && find_item(items[i].body, name, list, index)) return true;
  }
  return false;
}

void collect_names(const std::vector<SpecItem>& items, std::vector<std::string>* names) {
  for (const auto& item : items) {
    if (!item.name.empty()) names->push_back(item.name);
    if (item.is_repeat) collect_names(item.body, names);
  }
}

struct Located {
  std::vector<SpecItem>* list;
  size_t index;
};

Located locate(GraphSpec& spec, const Sourced& name_node, const char* edit) {
  const std::string name = scalar(name_node, "a node name");
  Located at{nullptr, 0};
  if (!find_item(spec.items, name, &at.list, &at.index)) {
    std::vector<std::string> names;
    collect_names(spec.items, &names);
    fail_at(name_node.where(), edit, ": expected the name of a node in the base graph, found '", name,
            "'", hint(name, names));
  }
  return at;
}

GraphSpec parse_file(const YAML::Node& root, const std::string& file, std::vector<std::string>& chain);

// yaml-cpp keeps every entry of a repeated key and node[key] returns the first, so a second
// `eps:` in a node or a second `n_layer:` under `params:` was silently ignored. Every mapping
// of the file is checked (the top level is checked first, by parse_file, with its own message).
// Each mapping and list is visited once, known by its position and kind: an alias refers to the
// node it names, so a YAML alias bomb (malformed/graph_alias_bomb.yaml) is walked in time linear
// in the file, not in its 10^9 expanded entries.
void check_duplicate_keys(const YAML::Node& node, const std::string& file,
                          std::set<std::pair<int, int>>& visited) {
  if (!node.IsMap() && !node.IsSequence()) return;
  if (!visited.emplace(node.Mark().pos, static_cast<int>(node.Type())).second) return;
  if (node.IsSequence()) {
    for (const auto& item : node) check_duplicate_keys(item, file, visited);
    return;
  }
  std::map<std::string, YAML::Node> keys;
  for (const auto& kv : node) {
    if (kv.first.IsScalar()) {
      const auto [first, inserted] = keys.emplace(kv.first.Scalar(), kv.first);
      if (!inserted)
        fail_at(location_of(kv.first, file), "duplicate key '", kv.first.Scalar(),
                "' in a mapping: expected each key once, found it again (first at ",
                location_of(first->second, file).to_string(), ")");
    }
    check_duplicate_keys(kv.second, file, visited);
  }
}

GraphSpec load_file(const std::string& path, std::vector<std::string>& chain) {
  const std::string text = read_input_file(path, "graph file");
  // `run MODEL.gguf -p hi` (the model where the graph goes) read as YAML: "unknown escape character".
  if (text.rfind("GGUF", 0) == 0)
    throw error(path, ": this is a GGUF model, not a graph file (YAML): expected the model after -m/--model");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail_at(Location{path, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: ", e.msg);
  }
  return parse_file(root, path, chain);
}

GraphSpec parse_file(const YAML::Node& root, const std::string& file, std::vector<std::string>& chain) {
  if (!root.IsMap()) fail_at(location_of(root, file), "expected a graph (a map with 'graph', 'params', "
                                                      "'inputs', 'outputs', 'nodes'), found ",
                             root.IsNull() ? "an empty file" : "something else");
  std::vector<std::pair<std::string, YAML::Node>> seen_keys;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
      fail_at(location_of(kv.first, file), "unknown top-level key '", key, "': expected one of ",
              join(kTopKeys), hint(key, kTopKeys));
    // yaml-cpp keeps both entries of a repeated key and root[key] returns the first, so a
    // second `nodes:` was silently ignored.
    for (const auto& [name, first] : seen_keys)
      if (name == key)
        fail_at(location_of(kv.first, file), "duplicate top-level key '", key, "': expected each key once, found it again (first at ",
                location_of(first, file).to_string(), ")");
    seen_keys.emplace_back(key, kv.first);
  }
  std::set<std::pair<int, int>> visited;
  check_duplicate_keys(root, file, visited);
  auto get = [&](const char* key) { return Sourced{root[key], file}; };

  GraphSpec spec;
  const bool derived = static_cast<bool>(root["extends"]);
  if (derived) {
    Sourced ext = get("extends");
    const std::string base_name = scalar(ext, "the path of the base graph");
    fs::path base = fs::path(file).parent_path() / base_name;
    base = base.lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(base, ec))
      fail_at(ext.where(), "extends: expected an existing graph file, found no file at '", base.string(),
              "'");
    const std::string canonical = fs::weakly_canonical(base, ec).string();
    for (const auto& seen : chain) {
      if (seen == canonical) {
        std::string cycle;
        for (const auto& c : chain) cycle += fs::path(c).filename().string() + " -> ";
        fail_at(ext.where(), "recursive extends: expected a chain of distinct files, found ", cycle,
                fs::path(canonical).filename().string());
      }
    }
    chain.push_back(canonical);
    spec = load_file(base.string(), chain);
    chain.pop_back();
    if (root["nodes"])
      fail_at(location_of(root["nodes"], file),
              "a graph with 'extends' edits its base: expected remove, replace, insert_before, "
              "insert_after or append, found 'nodes'");
  }
  spec.files.insert(spec.files.begin(), file);
  if (root["graph"]) spec.name = scalar(get("graph"), "a graph name");

  // What the graph is for (docs/GRAPH_LANGUAGE.md "Architectures and default graphs"):
  // architectures are inherited unless restated, `job` never is (a derived graph is a default
  // only where it says so), `unused` lists accumulate along the chain.
  if (root["architectures"])
    spec.architectures = parse_words(get("architectures"), "architectures", "general.architecture values");
  spec.job.clear();
  if (root["job"]) {
    Sourced job = get("job");
    spec.job = scalar(job, "a job name");
    if (std::find(kJobs.begin(), kJobs.end(), spec.job) == kJobs.end())
      fail_at(job.where(), "job: expected one of ", join(kJobs), ", found '", spec.job, "'", hint(spec.job, kJobs));
  }
  if (root["unused"])
    for (auto& name : parse_words(get("unused"), "unused", "tensor names or patterns"))
      spec.unused.push_back(std::move(name));

  if (root["params"]) {
    Sourced params = get("params");
    require_kind(params, YAML::NodeType::Map, "'params' to be a map of name: expression");
    for (const auto& kv : params.node) {
      ParamSpec p{kv.first.Scalar(), {kv.second, file}};
      bool replaced = false;
      for (auto& existing : spec.params)
        if (existing.name == p.name) existing = p, replaced = true;
      if (!replaced) spec.params.push_back(p);
    }
  }
  if (root["inputs"]) {
    Sourced inputs = get("inputs");
    require_kind(inputs, YAML::NodeType::Map, "'inputs' to be a map of name: {dtype, shape}");
    spec.inputs.clear();
    for (const auto& kv : inputs.node) spec.inputs.push_back({kv.first.Scalar(), {kv.second, file}});
  }
  if (root["outputs"]) {
    Sourced outputs = get("outputs");
    require_kind(outputs, YAML::NodeType::Sequence, "'outputs' to be a list of tensor names");
    spec.outputs.clear();
    for (const auto& o : outputs.node) spec.outputs.push_back({o, file});
  }
  if (root["state"]) {
    Sourced states = get("state");
    require_kind(states, YAML::NodeType::Sequence, "'state' to be a list of {name, kind, ...}");
    spec.states.clear();
    for (const auto& s : states.node) spec.states.push_back({s, file});
  }
  if (!derived && root["nodes"]) spec.items = parse_items(get("nodes"), "nodes");

  // Edits of the base, in a fixed order: remove, replace, insert_before, insert_after, append.
  if (root["remove"]) {
    Sourced remove = get("remove");
    require_kind(remove, YAML::NodeType::Sequence, "'remove' to be a list of node names");
    for (const auto& n : remove.node) {
      Located at = locate(spec, {n, file}, "remove");
      at.list->erase(at.list->begin() + static_cast<long>(at.index));
    }
  }
  if (root["replace"]) {
    std::set<std::string> replaced;  // a second replacement of one node would win silently
    for (const auto& item : parse_items(get("replace"), "replace")) {
      if (item.name.empty()) fail_at(item.yaml.where(), "replace: expected a node with 'name:' naming "
                                                        "the node it replaces, found no name");
      if (!replaced.insert(item.name).second)
        fail_at(item.yaml.where(), "replace: node '", item.name, "' is replaced twice in this file");
      Located at = locate(spec, {item.yaml.node["name"], file}, "replace");
      (*at.list)[at.index] = item;
    }
  }
  for (const char* key : {"insert_before", "insert_after"}) {
    if (!root[key]) continue;
    Sourced edits = get(key);
    require_kind(edits, YAML::NodeType::Map, "a map of node name: list of nodes");
    const bool after = std::string(key) == "insert_after";
    for (const auto& kv : edits.node) {
      Located at = locate(spec, {kv.first, file}, key);
      auto items = parse_items({kv.second, file}, key);
      at.list->insert(at.list->begin() + static_cast<long>(at.index + (after ? 1 : 0)), items.begin(),
                      items.end());
    }
  }
  if (root["append"]) {
    auto items = parse_items(get("append"), "append");
    spec.items.insert(spec.items.end(), items.begin(), items.end());
  }
  return spec;
}

// Installs an ItemBudget for one top-level load (restored on exit, also by an exception).
class BudgetScope {
 public:
  BudgetScope() : saved_(item_budget) {
    budget_.limit = graph_limits().max_nodes;
    item_budget = &budget_;
  }
  ~BudgetScope() { item_budget = saved_; }
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  ItemBudget budget_;
  ItemBudget* saved_;
};

}  // namespace

GraphSpec load_spec(const std::string& path) {
  BudgetScope budget;
  std::error_code ec;
  std::vector<std::string> chain{fs::weakly_canonical(path, ec).string()};
  return load_file(path, chain);
}

GraphSpec load_spec_text(const std::string& text, const std::string& file) {
  BudgetScope budget;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail_at(Location{file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: ", e.msg);
  }
  std::error_code ec;
  std::vector<std::string> chain{fs::weakly_canonical(file, ec).string()};
  return parse_file(root, file, chain);
}

}  // namespace gguflow::graph
