// `gguflow tensor MODEL.gguf NAME [--rows A:B] [--out FILE.f32 | --print]`: one tensor (or a
// row range) decoded to f32 through the reference dequantizers (runtime/tools/tensor_rows.cc).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/core/console.h"
#include "runtime/core/output_file.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/tools/tensor_rows.h"

namespace gguflow::cli {

int run_tensor(int argc, char** argv) {
  Args args("tensor (MODEL.gguf | -m MODEL.gguf) NAME [--rows A:B] [-o FILE.f32 | --print]",
            "Decodes one tensor (or rows A..B-1 of it) to f32 through the reference "
            "dequantizers. Without --out or --print, prints its shape, type and statistics.");
  args.positional("MODEL.gguf", "model file")
      .positional("NAME", "tensor name, e.g. blk.0.attn_q.weight")
      .positional_count(1, 2)
      .option("--rows", "A:B", "row range (rows are ne1*ne2*ne3 rows of ne0 values)")
      .option("-o,--output,--out", "FILE.f32", "write raw little-endian f32 [rows][ne0]")
      .flag("--print", "print the values, one row per line");
  model_alias_option(args);
  if (!args.parse(argc, argv)) return 0;
  if (args.has("--out") && args.has("--print")) throw usage_error("give --out or --print, not both");

  std::vector<std::string> rest;
  auto file = GgufFile::open(model_argument(args, 1, &rest));
  const GgufTensorInfo& t = file->tensor(rest[0]);
  const int64_t n_rows = static_cast<int64_t>(t.n_rows());
  RowRange range{0, n_rows};
  if (args.has("--rows")) range = as_usage([&] { return parse_row_range(args.get("--rows"), n_rows); });
  const int64_t ne0 = static_cast<int64_t>(t.row_length());

  if (args.has("--out")) {
    const std::string path = args.get("--out");
    // Written under a temporary name and renamed into place: a failed write keeps the old file.
    OutputFile out(path);
    dequantize_tensor_rows(*file, t, range, [&](const float* v, int64_t rows) {
      const size_t n = static_cast<size_t>(rows * ne0);
      if (std::fwrite(v, sizeof(float), n, out.stream()) != n)
        throw error(path, ": write failed: ", std::strerror(errno));
    });
    out.commit();
    console::start_stderr_line();
    std::fprintf(stderr, "wrote %s: %lld rows x %lld f32 of %s (%s)\n", path.c_str(),
                static_cast<long long>(range.end - range.begin), static_cast<long long>(ne0),
                t.name.c_str(), t.type_name());
    return 0;
  }
  if (args.has("--print")) {
    dequantize_tensor_rows(*file, t, range, [&](const float* v, int64_t rows) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < ne0; ++i) std::printf(i ? " %.9g" : "%.9g", v[r * ne0 + i]);
        std::printf("\n");
      }
    });
    return 0;
  }
  double sum = 0, sum2 = 0;
  float lo = INFINITY, hi = -INFINITY;
  dequantize_tensor_rows(*file, t, range, [&](const float* v, int64_t rows) {
    for (int64_t i = 0; i < rows * ne0; ++i) {
      sum += v[i];
      sum2 += static_cast<double>(v[i]) * v[i];
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
  });
  const double n = static_cast<double>((range.end - range.begin) * ne0);
  std::string dims;
  for (uint64_t d : t.dims) {
    if (!dims.empty()) dims += ", ";
    dims += std::to_string(d);
  }
  std::printf("%s [%s] %s rows %lld:%lld: min %.6g max %.6g mean %.6g rms %.6g\n", t.name.c_str(),
              dims.c_str(), t.type_name(), static_cast<long long>(range.begin),
              static_cast<long long>(range.end), lo, hi, sum / n, std::sqrt(sum2 / n));
  return 0;
}

}  // namespace gguflow::cli
