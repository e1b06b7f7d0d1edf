#include "runtime/graph/op_table.h"

#include <sstream>
#include <vector>

#include "ops/op_registry.h"

namespace gguflow::graph {
namespace {

// One row per slot, attribute, output and state of an op: what it is, its name, its type and
// default, and what it means.
struct Row {
  std::string role, name, type, help;
};

std::string choices_of(const ops::AttrSpec& a) {
  std::string s;
  for (const auto& c : a.choices) s += (s.empty() ? "" : "|") + c;
  return s;
}

std::vector<Row> rows_of(const ops::OpSchema& op) {
  std::vector<Row> rows;
  for (const auto& in : op.inputs) {
    std::string type = ops::dtype_name(in.dtype);
    if (in.optional) type += ", optional";
    if (in.feed != ops::Feed::kNone) type += std::string(", fed ") + ops::feed_name(in.feed);
    rows.push_back({"input", in.name, type, in.help});
  }
  for (const auto& w : op.weights)
    rows.push_back({"weight", w.name, w.optional ? "tensor, optional" : "tensor", w.help});
  for (const auto& a : op.attrs) {
    std::string type = ops::attr_type_name(a.type);
    if (a.type == ops::AttrType::kEnum) type += " " + choices_of(a);
    type += a.required ? ", required" : " = " + ops::attr_to_string(a.default_value);
    rows.push_back({"attribute", a.name, type, a.help});
  }
  for (const auto& o : op.outputs) rows.push_back({"output", o.name, ops::dtype_name(o.dtype), ""});
  if (op.state.kind)
    rows.push_back({"state", op.state.attr, op.state.kind,
                    "writes the named state; one writer per state"});
  return rows;
}

// Markdown cells hold no raw '|' (enum choices use it).
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

}  // namespace

std::string op_table_text() {
  std::ostringstream out;
  for (const ops::OpSchema* op : ops::all_ops()) {
    out << op->name << " (" << ops::op_kind_name(op->kind) << "): " << op->summary << "\n";
    out << "  shape      " << op->shape_rule << "\n";
    for (const Row& r : rows_of(*op)) {
      std::string line = "  " + r.role;
      line.resize(13, ' ');
      line += r.name;
      line.resize(std::max<size_t>(line.size() + 1, 25), ' ');
      line += r.type;
      if (!r.help.empty()) {
        line.resize(std::max<size_t>(line.size() + 1, 56), ' ');
        line += r.help;
      }
      out << line << "\n";
    }
    out << "\n";
  }
  return out.str();
}

std::string op_table_markdown() {
  std::ostringstream out;
  for (const ops::OpSchema* op : ops::all_ops()) {
    out << "### " << op->name << "\n\n"
        << cell(op->summary) << " (" << ops::op_kind_name(op->kind) << ")\n\n"
        << "Shape: `" << op->shape_rule << "`\n\n"
        << "| | name | type | meaning |\n|---|---|---|---|\n";
    for (const Row& r : rows_of(*op))
      out << "| " << r.role << " | `" << r.name << "` | " << cell(r.type) << " | " << cell(r.help)
          << " |\n";
    out << "\n";
  }
  return out.str();
}

}  // namespace gguflow::graph
