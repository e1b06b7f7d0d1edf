// `gguflow ops [--markdown]`: the op vocabulary from the registry itself (runtime/graph/
// op_table.h); docs/GRAPH_LANGUAGE.md holds the Markdown form.
#include <cstdio>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/graph/op_table.h"

namespace gguflow::cli {

int run_ops(int argc, char** argv) {
  Args args("ops [--markdown]",
            "Lists every op a graph can use: its slots (inputs fed by tensors, weights bound to "
            "model tensors), attributes with their types, defaults and allowed values, outputs, "
            "the state it writes, and its shape rule (ne0 first, T = tokens of the step).");
  args.flag("--markdown", "print Markdown (the table in docs/GRAPH_LANGUAGE.md)")
      .positional_count(0, 0);
  if (!args.parse(argc, argv)) return 0;
  const std::string text =
      args.has("--markdown") ? graph::op_table_markdown() : graph::op_table_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace gguflow::cli
