#include "tests/support/edited_model.h"

namespace gguflow::test {

void write_edited_model(const GgufFile& source, const std::filesystem::path& out,
                        std::initializer_list<std::string_view> removed,
                        const std::function<void(GgufWriter&)>& set) {
  GgufWriter w(out.string());
  w.copy_metadata(source, removed);
  set(w);
  for (const GgufTensorInfo& t : source.tensors()) w.add_tensor(t.name, t.type, t.dims);
  w.write_header();
  for (const GgufTensorInfo& t : source.tensors()) {
    const auto bytes = source.tensor_bytes(t);
    w.write_tensor_data(bytes.data(), bytes.size());
  }
  w.finish();
}

}  // namespace gguflow::test
