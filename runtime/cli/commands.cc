#include "runtime/cli/commands.h"

#include <array>

namespace gguflow::cli {

std::span<const Command> commands() {
  static constexpr std::array kCommands = {
      Command{"inspect", "print a GGUF file's header, hyperparameters and tensor type mix",
              run_inspect},
      Command{"quantize", "quantize an F32/F16/BF16 model with llama-quantize's type mix",
              run_quantize},
      Command{"synth", "write a random-weight model with a real model's shape and type mix",
              run_synth},
      Command{"tensor", "dequantize one tensor (or rows of it) to f32", run_tensor},
      Command{"tokenize", "print the token ids and pieces a model's tokenizer makes of a text",
              run_tokenize},
      Command{"detokenize", "print the text of token ids", run_detokenize},
      Command{"lower", "bind a YAML graph to a model and print it fully expanded", run_lower},
      Command{"graph", "validate a YAML graph for a model and draw it (DOT / SVG)", run_graph},
      Command{"ops", "list every op a graph can use: slots, attributes, defaults, shape rules",
              run_ops},
      Command{"run", "generate text from a prompt (or chat); --tokens: evaluate ids, dump logits", run_run},
      Command{"embed", "one vector per text (graphs/embed.yaml); JSONL/TSV/NPY, cosine similarity",
              run_embed},
      Command{"serve", "an OpenAI-compatible HTTP server with continuous batching", run_serve},
      Command{"bench", "measure prefill/decode tokens/s, peak RSS and the bandwidth roofline",
              run_bench},
      Command{"kv", "low-rank KV cache: spectrum, calibrate a projection, evaluate its error and memory",
              run_kv},
      Command{"kernels", "list the kernel plugins found, what this CPU supports and which is selected",
              run_kernels},
  };
  return kCommands;
}

}  // namespace gguflow::cli
