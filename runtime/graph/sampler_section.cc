#include "runtime/graph/sampler_section.h"

#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "runtime/graph/spec.h"

namespace gguflow::graph {
namespace {

namespace fs = std::filesystem;

// Base files first; `depth` bounds a recursive chain (the graph loader reports cycles itself,
// with the chain; this reader only has to terminate).
void read_chain(const std::string& path, SamplerSection& section, int depth) {
  if (depth > 32)
    throw error(path, ": sampler: expected an extends chain of at most 32 files, found more "
                      "(recursive extends?)");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw error(path, ": cannot read the graph file");
  } catch (const YAML::Exception& e) {
    fail_at(Location{path, e.mark.line + 1, e.mark.column + 1}, "YAML syntax: ", e.msg);
  }
  if (!root.IsMap()) return;  // the graph loader says what is wrong with such a file
  if (const YAML::Node base = root["extends"]; base && base.IsScalar())
    read_chain((fs::path(path).parent_path() / base.Scalar()).lexically_normal().string(),
               section, depth + 1);

  const YAML::Node sampler = root["sampler"];
  if (!sampler) return;
  if (!sampler.IsMap())
    fail_at(location_of(sampler, path),
            "sampler: expected a map of settings (input: logits, temperature: 0.8, ...), found ",
            sampler.IsSequence() ? "a list" : sampler.IsNull() ? "nothing" : "a plain value");
  section.present = true;
  for (const auto& kv : sampler) {
    const std::string key = kv.first.Scalar();
    if (!kv.second.IsScalar())
      fail_at(location_of(kv.second, path), "sampler: ", key,
              ": expected a plain value (a number or a word), found ",
              kv.second.IsMap() ? "a map" : kv.second.IsSequence() ? "a list" : "nothing");
    const Location where = location_of(kv.second, path);
    if (key == "input") {
      section.input = kv.second.Scalar();
      section.input_where = where;
      continue;
    }
    StageSetting setting{key, kv.second.Scalar(), where};
    bool replaced = false;
    for (StageSetting& existing : section.settings)
      if (existing.key == key) existing = setting, replaced = true;
    if (!replaced) section.settings.push_back(setting);
  }
}

}  // namespace

SamplerSection load_sampler_section(const std::string& path) {
  SamplerSection section;
  read_chain(path, section, 0);
  return section;
}

std::string sampler_section_yaml(const SamplerSection& section) {
  if (!section.present) return "";
  std::string out = "sampler:\n";
  if (!section.input.empty()) out += "  input: " + section.input + "\n";
  for (const auto& s : section.settings) out += "  " + s.key + ": " + s.value + "\n";
  return out;
}

int sampler_input_tensor(const SamplerSection& section, const Graph& graph) {
  if (graph.outputs.empty()) throw error("graph '", graph.name, "' declares no outputs to sample");
  if (section.input.empty()) return graph.outputs.front();
  std::string names;
  for (int t : graph.outputs) {
    if (graph.tensors[t].name == section.input) return t;
    names += (names.empty() ? "" : ", ") + graph.tensors[t].name;
  }
  fail_at(section.input_where, "sampler: input: expected one of the graph's outputs (", names,
          "), found '", section.input, "'");
}

}  // namespace gguflow::graph
