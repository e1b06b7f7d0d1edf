// `gguflow <command> [options]`: dispatches to a subcommand and turns bad-input errors into
// one line on stderr and a non-zero exit status.
#include <cstdio>
#include <cstring>
#include <exception>

#include "runtime/cli/commands.h"
#include "ops/error.h"

namespace {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: gguflow <command> [options]\n\n"
               "Runs GGUF language models on CPUs as dataflow graphs.\n\ncommands:\n");
  for (const auto& c : gguflow::cli::commands()) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(out, "\nRun 'gguflow <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(stdout);
    return 0;
  }
  for (const auto& c : gguflow::cli::commands()) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 2, argv + 2);
    } catch (const gguflow::Error& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "gguflow %s: error: %s\n", c.name, e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "gguflow %s: unexpected error: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "gguflow: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}
