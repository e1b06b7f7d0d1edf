#include "runtime/exec/token_io.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <fstream>

#include "ops/error.h"
#include "runtime/core/output_file.h"

namespace gguflow::exec {

std::vector<int32_t> parse_token_ids(std::string_view text) {
  std::vector<int32_t> ids;
  if (text.empty()) throw error("--tokens: expected at least one token id, found none");
  size_t index = 0;
  for (;;) {  // "1,2," has an empty last item, as detokenize says
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int32_t id = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      throw error("--tokens: item ", index, " '", item,
                  "' is not a token id (expected comma-separated integers such as 1,2,3)");
    ids.push_back(id);
    ++index;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ids;
}

void write_f32_file(const std::string& path, std::span<const float> values) {
  static_assert(std::endian::native == std::endian::little, "f32 files are little-endian");
  OutputFile out(path);  // temporary name + rename: a failed write keeps the old file
  if (std::fwrite(values.data(), sizeof(float), values.size(), out.stream()) != values.size())
    throw error(path, ": write failed: ", std::strerror(errno));
  out.commit();
}

}  // namespace gguflow::exec
