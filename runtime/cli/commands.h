// The list of `gguflow` subcommands. Each lives in its own cmd_<name>.cc and is registered
// explicitly in commands.cc (no static self-registration).
#pragma once

#include <span>

namespace gguflow::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv after the subcommand name; returns the exit code
};

std::span<const Command> commands();

int run_inspect(int argc, char** argv);
int run_quantize(int argc, char** argv);
int run_synth(int argc, char** argv);
int run_tensor(int argc, char** argv);
int run_tokenize(int argc, char** argv);
int run_detokenize(int argc, char** argv);
int run_lower(int argc, char** argv);
int run_graph(int argc, char** argv);
int run_ops(int argc, char** argv);
int run_kernels(int argc, char** argv);
int run_kv(int argc, char** argv);
int run_run(int argc, char** argv);
int run_embed(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_serve(int argc, char** argv);

}  // namespace gguflow::cli
