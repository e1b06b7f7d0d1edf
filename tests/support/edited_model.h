// A copy of a model file with some metadata changed, for tests of what a reader does with a
// value no real file in the shared data has (a nan epsilon, a special-token id past the
// vocabulary, a pooling type).
#pragma once

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string_view>

#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

namespace gguflow::test {

// Writes `out`: `source`'s metadata without the keys in `removed`, then what `set` adds, and
// every tensor as it is.
void write_edited_model(const GgufFile& source, const std::filesystem::path& out,
                        std::initializer_list<std::string_view> removed,
                        const std::function<void(GgufWriter&)>& set);

}  // namespace gguflow::test
