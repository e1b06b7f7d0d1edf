#include "tests/tokenizer/tokenizer_test_util.h"

#include <fstream>
#include <map>
#include <sstream>

#include "runtime/gguf/gguf_file.h"
#include "tests/support/test_data.h"

namespace gguflow::test {

const Tokenizer& shared_tokenizer(const std::string& relative_path) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[relative_path];
  if (!slot) {
    const auto file = GgufFile::open(data_path(relative_path).string());
    slot = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*file));
  }
  return *slot;
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

const std::vector<VocabVector>& vocab_vectors(const std::string& name) {
  static std::map<std::string, std::vector<VocabVector>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  std::vector<VocabVector>& vectors = cache[name];
  const auto base = data_path("vocab/ggml-vocab-" + name + ".gguf");
  if (!std::filesystem::exists(base.string() + ".inp")) return vectors;

  // .inp: each string followed by "\n__ggml_vocab_test__\n".
  const std::string inp = read_file_bytes(base.string() + ".inp");
  const std::string separator = "\n__ggml_vocab_test__\n";
  for (size_t pos = 0; pos < inp.size();) {
    const size_t end = inp.find(separator, pos);
    if (end == std::string::npos) break;
    vectors.push_back(VocabVector{inp.substr(pos, end - pos), {}});
    pos = end + separator.size();
  }
  // .out: one line per string, ids separated by spaces.
  std::ifstream out(base.string() + ".out");
  std::string line;
  for (size_t i = 0; i < vectors.size() && std::getline(out, line); ++i) {
    std::istringstream ids(line);
    for (TokenId id; ids >> id;) vectors[i].expected.push_back(id);
  }
  return vectors;
}

}  // namespace gguflow::test
