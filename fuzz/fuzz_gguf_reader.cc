// libFuzzer target: the GGUF reader (runtime/gguf) on arbitrary bytes, parsed from memory
// (GgufFile::parse, the same parser as GgufFile::open without the mapping). For a file that
// parses it walks what the commands read: every metadata value through every accessor, the
// tensor table (sizes, lookups, tensor_bytes), a bounded number of rows of a few tensors
// through the reference dequantizers (`gguflow tensor`), the hyperparameter checks a graph
// binding runs, and the tokenizer built from the file's tokenizer.ggml.* metadata.
// gguflow::Error is the clean-error path; anything else is a finding (fuzz/fuzz_support.h).
//
// GGUFLOW_FUZZ_WRITE_SEEDS=DIR makes the program write its small generated seeds
// (fuzz/gguf_seeds.h) into DIR and exit, before any fuzzing: tools/fuzz.sh does that.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "fuzz/gguf_seeds.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/model_hparams.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tools/tensor_rows.h"

namespace {

using gguflow::Error;
using gguflow::GgufFile;
using gguflow::GgufValue;
using gguflow::GgufValueType;

// Per input at most this many tensors are read and this many values decoded from each (two
// row ranges: the first rows and the last row), so one input stays well under a millisecond
// of dequantization whatever its tensor table says.
constexpr size_t kTensorsRead = 8;
constexpr int64_t kValuesPerTensor = 1 << 14;
constexpr size_t kItemsPerArray = 4;

template <typename F>
void clean(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    gguflow::fuzz::note_clean_error(e);
  }
}

volatile double sink_value;

void walk_value(const GgufValue& v, int depth) {
  (void)v.to_string();
  (void)v.is_number();
  clean([&] { sink_value = static_cast<double>(v.as_int("k")); });
  clean([&] { sink_value = v.as_double("k"); });
  clean([&] { sink_value = v.as_bool("k"); });
  clean([&] { sink_value = static_cast<double>(v.as_string("k").size()); });
  if (v.type != GgufValueType::kArray) return;
  const size_t n = v.array_size("k");
  for (size_t i = 0; i < n && i < kItemsPerArray; ++i) {
    const GgufValue item = v.array_item(i);
    if (depth < 16) walk_value(item, depth + 1);
  }
  if (n) walk_value(v.array_item(n - 1), depth + 1);
  clean([&] { sink_value = static_cast<double>(v.as_array("k").size()); });
  clean([&] { sink_value = static_cast<double>(v.as_string_array("k").size()); });
  clean([&] { sink_value = static_cast<double>(v.as_double_array("k").size()); });
  clean([&] { sink_value = static_cast<double>(v.as_int_array("k").size()); });
}

void read_rows(const GgufFile& file, const gguflow::GgufTensorInfo& t) {
  const int64_t n_rows = static_cast<int64_t>(t.n_rows());
  const int64_t row_length = static_cast<int64_t>(t.row_length());
  const int64_t rows = std::max<int64_t>(1, std::min<int64_t>(n_rows, kValuesPerTensor / row_length));
  double sum = 0;
  auto sink = [&](const float* values, int64_t count) {
    for (int64_t i = 0; i < count * row_length; ++i) sum += values[i];
  };
  gguflow::dequantize_tensor_rows(file, t, {0, rows}, sink);
  if (n_rows > rows) gguflow::dequantize_tensor_rows(file, t, {n_rows - 1, n_rows}, sink);
  sink_value = sum;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("GGUFLOW_FUZZ_WRITE_SEEDS"); dir && *dir) {
    try {
      const int n = gguflow::fuzz::write_gguf_seeds(dir);
      std::fprintf(stderr, "wrote %d GGUF seeds into %s\n", n, dir);
    } catch (const Error& e) {
      gguflow::fuzz::fail_setup(e.what());
    }
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const GgufFile> file;
  try {
    file = GgufFile::parse("fuzz.gguf", std::vector<uint8_t>(data, data + size));
  } catch (const Error& e) {
    gguflow::fuzz::note_clean_error(e);
    return 0;
  }
  // Metadata.
  for (const auto& kv : file->metadata()) {
    walk_value(kv.value, 0);
    GGUFLOW_FUZZ_EXPECT(file->find(kv.key) == &kv.value, "metadata keys are unique: " + kv.key);
  }
  (void)file->architecture();
  clean([&] { (void)file->get("general.name"); });

  // Tensor table.
  size_t read = 0;
  for (const auto& t : file->tensors()) {
    GGUFLOW_FUZZ_EXPECT(file->find_tensor(t.name) == &t, "tensor names are unique: " + t.name);
    (void)t.type_name();
    (void)t.n_elements();
    (void)t.n_rows();
    clean([&] {
      const uint64_t bytes = t.n_bytes();
      const auto span = file->tensor_bytes(t);
      GGUFLOW_FUZZ_EXPECT(span.size() == bytes, "tensor_bytes() of " + t.name + " has n_bytes()");
    });
    if (read < kTensorsRead) {
      ++read;
      clean([&] { read_rows(*file, t); });
    }
  }
  clean([&] { (void)file->tensor("token_embd.weight"); });

  // What binding a graph and building the tokenizer read.
  clean([&] { (void)gguflow::read_model_hparams(*file); });
  clean([&] { gguflow::check_model_metadata(*file); });
  clean([&] {
    const gguflow::Tokenizer tok = gguflow::Tokenizer::from_gguf(*file);
    gguflow::EncodeOptions options;
    options.parse_special = true;
    const auto ids = tok.encode("Hello world! 123 <s></s> <|im_start|> \xc3\xa9t\xc3\xa9 \xe2\x96\x81", options);
    (void)tok.decode(ids);
    const size_t n = std::min<size_t>(tok.vocab_size(), 64);
    for (size_t i = 0; i < n; ++i) (void)tok.piece(static_cast<gguflow::TokenId>(i), true);
  });
  return 0;
}
