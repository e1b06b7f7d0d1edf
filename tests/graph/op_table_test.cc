// docs/GRAPH_LANGUAGE.md's op table is `gguflow ops --markdown`, i.e. the registry itself.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "ops/op_registry.h"
#include "runtime/graph/op_table.h"
#include "tests/support/test_data.h"

namespace gguflow::graph {
namespace {

TEST(OpTable, DocsShowTheRegistry) {
  const auto path = test::source_dir() / "docs" / "GRAPH_LANGUAGE.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string begin = "<!-- ops table: gguflow ops --markdown -->\n";
  const std::string end = "<!-- end of ops table -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << "no ops table marker in " << path;
  ASSERT_NE(e, std::string::npos) << "no end marker in " << path;
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), op_table_markdown())
      << "docs/GRAPH_LANGUAGE.md's op table is stale: paste `gguflow ops --markdown` into it";
}

TEST(OpTable, EveryOpWithEverySlotAndAttribute) {
  const std::string text = op_table_text();
  const std::string md = op_table_markdown();
  for (const ops::OpSchema* op : ops::all_ops()) {
    EXPECT_NE(md.find("### " + std::string(op->name) + "\n"), std::string::npos) << op->name;
    EXPECT_NE(text.find(std::string(op->name) + " ("), std::string::npos) << op->name;
    EXPECT_NE(text.find(op->shape_rule), std::string::npos) << op->name;
    for (const auto& a : op->attrs)
      EXPECT_NE(md.find("`" + std::string(a.name) + "`"), std::string::npos) << a.name;
    for (const auto& w : op->weights)
      EXPECT_NE(md.find("`" + std::string(w.name) + "`"), std::string::npos) << w.name;
  }
  // Defaults and allowed values, as declared.
  EXPECT_NE(text.find("enum normal|neox = normal"), std::string::npos);
  EXPECT_NE(text.find("float = 10000.0"), std::string::npos);
}

}  // namespace
}  // namespace gguflow::graph
