// The registry's self-test: every op unit declares a usable, unambiguous schema. A node's YAML
// keys are its slot and attribute names, so they must be distinct per op and not collide with
// the keys every node has; enum defaults must be allowed values; feeds and state rules must be
// complete.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "ops/op_registry.h"

namespace gguflow::ops {
namespace {

TEST(OpRegistry, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const OpSchema* op : all_ops()) {
    EXPECT_TRUE(names.insert(op->name).second) << op->name;
    EXPECT_EQ(find_op(op->name), op);
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  EXPECT_GE(names.size(), 11u);
}

TEST(OpRegistry, EveryOpIsComplete) {
  for (const OpSchema* op : all_ops()) {
    SCOPED_TRACE(op->name);
    EXPECT_NE(op->shape, nullptr);
    EXPECT_NE(op->bind, nullptr);
    ASSERT_NE(op->shape_rule, nullptr);
    EXPECT_NE(std::string(op->shape_rule).find("->"), std::string::npos);
    EXPECT_FALSE(op->outputs.empty());
    if (op->state.kind) {
      EXPECT_NE(op->state.check, nullptr);
      const int a = op->attr_index(op->state.attr);
      ASSERT_GE(a, 0) << "the state attribute is declared";
      EXPECT_EQ(op->attrs[static_cast<size_t>(a)].type, AttrType::kString);
      EXPECT_TRUE(op->attrs[static_cast<size_t>(a)].required);
    }
  }
}

TEST(OpRegistry, YamlKeysOfAnOpAreDistinct) {
  const std::set<std::string> node_keys = {"op", "name", "group", "in", "out", "shape"};
  for (const OpSchema* op : all_ops()) {
    SCOPED_TRACE(op->name);
    std::set<std::string> keys;
    auto add = [&](const char* key) {
      EXPECT_EQ(node_keys.count(key), 0u) << key;
      EXPECT_TRUE(keys.insert(key).second) << key;
    };
    for (const auto& s : op->inputs) add(s.name);
    for (const auto& s : op->weights) add(s.name);
    for (const auto& s : op->attrs) add(s.name);
  }
}

TEST(OpRegistry, EnumDefaultsAreAllowedValues) {
  for (const OpSchema* op : all_ops()) {
    for (const AttrSpec& a : op->attrs) {
      if (a.type != AttrType::kEnum) continue;
      SCOPED_TRACE(std::string(op->name) + "." + a.name);
      ASSERT_FALSE(a.choices.empty());
      const std::string& fallback = std::get<std::string>(a.default_value);
      EXPECT_NE(std::find(a.choices.begin(), a.choices.end(), fallback), a.choices.end());
    }
  }
}

TEST(OpRegistry, FedSlotsAreIntegerAndIndexWhatTheyClaim) {
  for (const OpSchema* op : all_ops()) {
    for (const InputSpec& in : op->inputs) {
      SCOPED_TRACE(std::string(op->name) + "." + in.name);
      if (in.feed != Feed::kNone) {
        EXPECT_EQ(in.dtype, DType::kI32);
      }
      if (in.indexes_weight >= 0) {
        EXPECT_EQ(in.feed, Feed::kTokenIds);
        EXPECT_LT(static_cast<size_t>(in.indexes_weight), op->weights.size());
      }
    }
  }
}

}  // namespace
}  // namespace gguflow::ops
