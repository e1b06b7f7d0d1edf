// An op's attributes, declared once: name, C++ field, type, default, allowed values and help.
// The same declaration gives the schema's AttrSpec list (what YAML may say, `gguflow ops`) and
// parses a bound node's Attrs into the op's typed struct (at bind time, and in shape rules).
//
//   struct RopeAttrs { int64_t head_dim; int64_t n_rot; double base; RopePairing pairing; };
//   constexpr Choice<RopePairing> kPairings[] = {{"normal", RopePairing::kNormal}, ...};
//   const AttrList<RopeAttrs> list = AttrList<RopeAttrs>()
//       .required("head_dim", &RopeAttrs::head_dim, "values per head")
//       .optional("base", &RopeAttrs::base, 10000.0, "frequency base")
//       .choice("mode", &RopeAttrs::pairing, kPairings, RopePairing::kNormal, "pairing");
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/error.h"
#include "ops/op_schema.h"

namespace gguflow::ops {

// One allowed value of an enum attribute. Several names may map to one value (aliases).
template <typename E>
struct Choice {
  const char* name;
  E value;
};

// The value named `name`; throws gguflow::Error "<what> 'x' is not one of a, b, c" otherwise.
template <typename E>
E choice_value(std::span<const Choice<E>> choices, std::string_view name, std::string_view what) {
  for (const auto& c : choices)
    if (name == c.name) return c.value;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + std::string(c.name);
  throw error(what, " '", name, "' is not one of ", list);
}

template <typename A>
class AttrList {
 public:
  AttrList& required(const char* name, int64_t A::*field, const char* help) {
    return add({name, AttrType::kInt, true, AttrValue{int64_t{0}}, {}, help}, field);
  }
  AttrList& required(const char* name, std::string A::*field, const char* help) {
    return add({name, AttrType::kString, true, AttrValue{std::string()}, {}, help}, field);
  }
  AttrList& optional(const char* name, int64_t A::*field, int64_t fallback, const char* help) {
    return add({name, AttrType::kInt, false, AttrValue{fallback}, {}, help}, field);
  }
  AttrList& optional(const char* name, double A::*field, double fallback, const char* help) {
    return add({name, AttrType::kFloat, false, AttrValue{fallback}, {}, help}, field);
  }
  AttrList& required(const char* name, double A::*field, const char* help) {
    return add({name, AttrType::kFloat, true, AttrValue{0.0}, {}, help}, field);
  }
  AttrList& optional(const char* name, bool A::*field, bool fallback, const char* help) {
    return add({name, AttrType::kBool, false, AttrValue{fallback}, {}, help}, field);
  }
  template <typename E, size_t N>
  AttrList& choice(const char* name, E A::*field, const Choice<E> (&choices)[N], E fallback,
                   const char* help) {
    AttrSpec spec{name, AttrType::kEnum, false, AttrValue{std::string()}, {}, help};
    for (const auto& c : choices) {
      spec.choices.emplace_back(c.name);
      if (c.value == fallback && std::get<std::string>(spec.default_value).empty())
        spec.default_value = std::string(c.name);
    }
    specs_.push_back(std::move(spec));
    const std::span<const Choice<E>> table(choices);
    setters_.push_back([field, table, name](A& a, const AttrValue& v) {
      a.*field = choice_value(table, std::get<std::string>(v), std::string("attribute '") + name + "'");
    });
    return *this;
  }

  const std::vector<AttrSpec>& specs() const { return specs_; }

  // The typed struct of a node's attributes (every declared attribute is present in a bound
  // node; an expanded graph checked enum values against the same choices).
  A parse(const Attrs& attrs) const {
    A a{};
    for (size_t i = 0; i < specs_.size(); ++i)
      if (attrs.has(specs_[i].name)) setters_[i](a, attrs.get(specs_[i].name));
    return a;
  }

 private:
  template <typename T>
  AttrList& add(AttrSpec spec, T A::*field) {
    specs_.push_back(std::move(spec));
    setters_.push_back([field](A& a, const AttrValue& v) {
      if constexpr (std::is_same_v<T, double>) {
        // A float attribute accepts an int value (YAML `base: 10000`).
        if (const auto* i = std::get_if<int64_t>(&v)) a.*field = static_cast<double>(*i);
        else a.*field = std::get<double>(v);
      } else {
        a.*field = std::get<T>(v);
      }
    });
    return *this;
  }

  std::vector<AttrSpec> specs_;
  std::vector<std::function<void(A&, const AttrValue&)>> setters_;
};

}  // namespace gguflow::ops
