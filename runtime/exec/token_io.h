// Token ids and logits as the `gguflow run` command reads and writes them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow::exec {

// "1,2,3" (spaces allowed) -> {1, 2, 3}. Throws gguflow::Error naming the bad item.
std::vector<int32_t> parse_token_ids(std::string_view text);

// Writes values as raw f32 little-endian (row-major, no header). Throws naming the path.
void write_f32_file(const std::string& path, std::span<const float> values);

}  // namespace gguflow::exec
