#include "runtime/gguf/gguf_names.h"

#include <charconv>

namespace gguflow::names {

std::string expand(std::string_view pattern, std::string_view arch, int layer) {
  std::string out;
  out.reserve(pattern.size() + 16);
  for (size_t i = 0; i < pattern.size();) {
    if (pattern.compare(i, 6, "{arch}") == 0) {
      out += arch;
      i += 6;
    } else if (pattern.compare(i, 3, "{i}") == 0) {
      out += std::to_string(layer);
      i += 3;
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

TensorRole tensor_role(std::string_view name) {
  constexpr std::string_view kBlockPrefix = "blk.";
  if (name.substr(0, kBlockPrefix.size()) != kBlockPrefix) return {std::string(name), -1};
  std::string_view rest = name.substr(kBlockPrefix.size());
  int layer = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
  if (ec != std::errc() || end == rest.data() + rest.size() || *end != '.')
    return {std::string(name), -1};
  return {std::string(end + 1, rest.data() + rest.size()), layer};
}

}  // namespace gguflow::names
