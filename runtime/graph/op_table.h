// The op vocabulary as text, made from the registry itself (`gguflow ops`): every op with its
// summary, shape rule, input and weight slots, attributes (type, default, allowed values),
// outputs and the state it writes. docs/GRAPH_LANGUAGE.md embeds the Markdown form; a test
// fails when the two differ.
#pragma once

#include <string>

namespace gguflow::graph {

// For a terminal: one block per op, aligned columns.
std::string op_table_text();
// For docs: one `### op` section per op with a table of its slots and attributes.
std::string op_table_markdown();

}  // namespace gguflow::graph
