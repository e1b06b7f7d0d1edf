// `gguflow synth`: a model with a real model's shape and type mix and random weights (logic in
// runtime/tools/synth.cc).
#include <chrono>
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "plugins/abi/ggml_type.h"
#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/core/console.h"
#include "runtime/tools/synth_vocab.h"
#include "ops/error.h"
#include "runtime/tools/quant_mix.h"
#include "runtime/tools/synth.h"

namespace gguflow::cli {
namespace {

std::string preset_list() {
  std::string out;
  for (const SynthPreset& p : synth_presets()) out += std::string("\n  ") + p.name + ": " + p.description;
  return out;
}

}  // namespace

int run_synth(int argc, char** argv) {
  Args args("synth (--preset NAME | --arch A --n-embd N ...) --type TYPE -o FILE.gguf",
            "Writes a GGUF model with the shape and tensor type mix of a real model and seeded "
            "random weights (N(0, 0.02); norms about 1). Presets:" + preset_list());
  args.option("--preset", "NAME", "model shape to copy (see above)")
      .option("--type", "TYPE", "file type: " + file_type_names(), "Q4_K_M")
      .option("-o,--output", "FILE", "output GGUF file")
      .option("-s,--seed", "N", "random seed", "0")
      .option("--vocab", "FILE.gguf", "copy the tokenizer of this GGUF (its token count is n_vocab)")
      .option("--name", "TEXT", "general.name (default: synthetic <preset>)")
      .option("--arch", "A", "llama, qwen2 (Q/K/V biases), qwen3 (q/k norms), gemma2, gemma3 or phi3 (fused QKV); the family's tensor set")
      .option("--head-dim", "N", "values per attention head (default: n_embd / n_head)")
      .option("--sliding-window", "N", "attention.sliding_window (gemma2/gemma3/phi3; default: none, gemma3 512)")
      .option("--n-embd", "N", "embedding width")
      .option("--n-layer", "N", "number of blocks")
      .option("--n-head", "N", "attention heads")
      .option("--n-head-kv", "N", "key/value heads (default: --n-head)")
      .option("--n-ff", "N", "feed-forward width")
      .option("--n-vocab", "N", "vocabulary size")
      .option("--n-ctx", "N", "context length")
      .positional_count(0, 0);
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--output")) throw usage_error("-o FILE.gguf is required");

  SynthOptions options;
  std::string label = "custom";
  if (args.has("--preset")) {
    const SynthPreset* preset = find_synth_preset(args.get("--preset"));
    if (!preset) throw usage_error("unknown --preset '", args.get("--preset"), "'; presets:", preset_list());
    options.shape = preset->shape;
    label = preset->name;
  } else if (!args.has("--arch")) {
    throw usage_error("give --preset NAME or --arch with --n-embd, --n-layer, --n-head, --n-ff and --n-vocab (or --vocab)");
  }
  SynthShape& s = options.shape;
  if (args.has("--arch")) {
    s.arch = args.get("--arch");
    if (!args.has("--preset")) {
      // The family's usual defaults: Qwen and Gemma tie the lm-head to the embeddings.
      const bool qwen = s.arch == "qwen2" || s.arch == "qwen3";
      const bool gemma = s.arch == "gemma2" || s.arch == "gemma3";
      s.qkv_bias = s.arch == "qwen2";
      s.tied_output = qwen || gemma;
      s.rope_freq_base = qwen ? 1e6 : 10000.0;
      s.rms_eps = qwen || gemma ? 1e-6 : 1e-5;
      if (s.arch == "gemma3") s.sliding_window = 512;  // gemma3 files always carry it
    }
  }
  if (args.has("--n-embd")) s.n_embd = args.get_int("--n-embd");
  if (args.has("--n-layer")) s.n_layer = args.get_int("--n-layer");
  if (args.has("--n-head")) s.n_head = args.get_int("--n-head");
  s.n_head_kv = args.has("--n-head-kv") ? args.get_int("--n-head-kv")
                                          : (args.has("--preset") ? s.n_head_kv : s.n_head);
  if (args.has("--n-ff")) s.n_ff = args.get_int("--n-ff");
  // --vocab sets n_vocab to its token count; an explicit --n-vocab must agree (synth_model).
  if (args.has("--n-vocab")) s.n_vocab = args.get_int("--n-vocab");
  else if (args.has("--vocab")) s.n_vocab = vocab_token_count(args.get("--vocab"));
  if (args.has("--n-ctx")) s.n_ctx = args.get_int("--n-ctx");
  if (args.has("--head-dim")) s.head_dim = args.get_int("--head-dim");
  if (args.has("--sliding-window")) s.sliding_window = args.get_int("--sliding-window");
  options.file_type = args.get("--type");
  options.seed = static_cast<uint64_t>(args.get_int("--seed"));
  options.vocab_path = args.get("--vocab");
  options.output = args.get("--output");
  options.name = args.has("--name") ? args.get("--name") : "synthetic " + label;
  as_usage([&] { check_synth_options(options.shape, options.file_type); });

  // Progress: redrawn in place every 5% on a terminal; a plain line every 25% in a log.
  const bool terminal = console::is_terminal(stderr);
  const int step = terminal ? 5 : 25;
  const auto start = std::chrono::steady_clock::now();
  int last_percent = -1;
  SynthReport report = synth_model(options, [&](uint64_t done, uint64_t total) {
    const int percent = static_cast<int>(100 * done / std::max<uint64_t>(total, 1));
    if (percent / step == last_percent / step) return;
    std::fprintf(stderr, terminal ? "\rsynth: %3d%% of %.1f MiB" : "synth: %d%% of %.1f MiB\n",
                 percent, total / 1048576.0);
    last_percent = percent;
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (terminal) std::fprintf(stderr, "\n");

  std::map<std::string, int> mix;
  for (const SynthTensor& t : report.tensors) ++mix[ggml_type_info(t.type)->name];
  std::string mix_text;
  for (const auto& [name, n] : mix) {
    if (!mix_text.empty()) mix_text += ", ";
    mix_text += name;
    mix_text += " x" + std::to_string(n);
  }
  console::start_stderr_line();
  std::fprintf(stderr, "wrote %s: %s %s, %zu tensors, %.1f MiB of tensor data in %.1f s\ntype mix: %s\n",
              options.output.c_str(), label.c_str(), options.file_type.c_str(), report.tensors.size(),
              report.tensor_bytes / 1048576.0, seconds, mix_text.c_str());
  return 0;
}

}  // namespace gguflow::cli
