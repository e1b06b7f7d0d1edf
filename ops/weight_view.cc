#include "ops/weight_view.h"

#include <string>

#include "plugins/abi/ggml_type.h"
#include "ops/error.h"

namespace gguflow::ops {

std::string_view type_name(uint32_t type) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (info && info->name) return info->name;
  thread_local std::string unknown;
  unknown = "type#" + std::to_string(type);
  return unknown;
}

size_t type_row_bytes(uint32_t type, int64_t n, std::string_view what) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (!info || info->block_size == 0)
    throw error(what, ": GGML type ", type_name(type), " has no known block layout");
  if (n % info->block_size != 0)
    throw error(what, ": row length ", n, " is not a multiple of the ", type_name(type),
                " block size ", info->block_size);
  return static_cast<size_t>(n / info->block_size) * info->type_size;
}

}  // namespace gguflow::ops
