// `gguflow quantize IN.gguf OUT.gguf TYPE`: llama-quantize-compatible re-encoding of an
// F32/F16/BF16 model (logic in runtime/tools/quantize_model.cc).
#include <chrono>
#include <cstdio>

#include "plugins/abi/ggml_type.h"
#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/core/console.h"
#include "runtime/tools/quant_mix.h"
#include "runtime/tools/quantize_model.h"

namespace gguflow::cli {

int run_quantize(int argc, char** argv) {
  Args args("quantize IN.gguf OUT.gguf TYPE",
            "Quantizes an F32/F16/BF16 GGUF model with llama-quantize's per-tensor type mix and "
            "GGML's reference quantizers; TYPE F32, F16 or BF16 also dequantizes a quantized model. "
            "TYPE is one of " + file_type_names() + ".");
  args.positional("IN.gguf", "input model (F32, F16 or BF16 tensors; for a float TYPE, any type gguflow can dequantize)")
      .positional("OUT.gguf", "output file (written under a temporary name, renamed when complete)")
      .positional("TYPE", "target file type, e.g. Q4_K_M")
      .positional_count(3, 3)
      .flag("--tensors", "list every tensor's type");
  if (!args.parse(argc, argv)) return 0;
  const auto& pos = args.positionals();
  // A malformed argument: a usage error before the model is opened (synth --type says the same).
  if (!find_file_type(pos[2])) throw usage_error("unknown TYPE '", pos[2], "'; expected one of ", file_type_names());

  const auto start = std::chrono::steady_clock::now();
  QuantizeReport report = quantize_model(pos[0], pos[1], pos[2]);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (args.has("--tensors")) {
    for (const QuantizedTensor& t : report.tensors) {
      std::printf("  %-32s %-5s -> %-5s %10llu B\n", t.name.c_str(), ggml_type_info(t.from_type)->name,
                  ggml_type_info(t.to_type)->name, static_cast<unsigned long long>(t.bytes));
    }
  }
  // Notices, on stderr (docs/CLI.md rule 1); --tensors' table, asked for, stays on stdout.
  console::start_stderr_line();
  std::fprintf(stderr, "type mix: %s\n", type_mix_summary(report).c_str());
  std::fprintf(stderr, "wrote %s: %.2f MiB of tensor data (from %.2f MiB) in %.2f s\n", pos[1].c_str(),
              report.output_bytes / 1048576.0, report.input_bytes / 1048576.0, seconds);
  return 0;
}

}  // namespace gguflow::cli
