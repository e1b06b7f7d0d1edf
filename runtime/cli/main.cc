// `gguflow <command> [options]`: dispatches to a subcommand and turns errors into one line on
// stderr and the exit status docs/CLI.md promises: 0 ok, 1 bad input or runtime error, 2 a
// usage error (unknown command or option, malformed or conflicting option values).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "gguflow_version.h"
#include "ops/error.h"
#include "runtime/core/console.h"
#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/plugins/kernel_plugins.h"

namespace {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: gguflow <command> [options]\n"
               "       gguflow --version\n\n"
               "Runs GGUF language models on CPUs as dataflow graphs.\n\ncommands:\n");
  for (const auto& c : gguflow::cli::commands()) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(out, "\nRun 'gguflow <command> --help' for a command's options.\n");
}

// Version, commit and the kernel plugins this executable finds (what a bug report needs).
int print_version() {
  std::printf("gguflow %s (commit %s)\n", GGUFLOW_VERSION, GGUFLOW_GIT_COMMIT);
  try {
    for (const auto& p : gguflow::plugins::scan_plugins())
      std::printf("plugin %-8s %-8s %s%s%s\n", p.name.c_str(),
                  p.target.empty() ? "?" : p.target.c_str(), p.path.c_str(),
                  p.usable ? "" : "  (unusable: ", p.usable ? "" : (p.reason + ")").c_str());
  } catch (const gguflow::Error& e) {
    std::printf("plugins: none usable: %s\n", e.what());
  }
  return 0;
}

// Library errors may start with the command's own name ("bench: -r ..."); the prefix printed
// here already says it.
std::string_view without_command_prefix(std::string_view message, std::string_view command) {
  if (message.size() > command.size() + 2 && message.substr(0, command.size()) == command &&
      message.substr(command.size(), 2) == ": ")
    message.remove_prefix(command.size() + 2);
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    print_usage(stdout);
    return 0;
  }
  if (first == "--version") return print_version();
  for (const auto& c : gguflow::cli::commands()) {
    if (first != c.name) continue;
    // Whatever was printed to stdout goes first; the error starts on a fresh line.
    const auto report = [&](const char* kind, const char* what) {
      gguflow::console::start_stderr_line();
      std::fprintf(stderr, "gguflow %s: %s: %.*s\n", c.name, kind,
                   static_cast<int>(without_command_prefix(what, c.name).size()),
                   without_command_prefix(what, c.name).data());
    };
    try {
      const int status = c.run(argc - 2, argv + 2);
      // Output the command wrote to stdout but the system refused (a full disk, /dev/full) is
      // a failure, not a success with a lost result.
      const bool flushed = std::fflush(stdout) == 0;
      const int flush_errno = errno;  // an earlier write's errno is gone by now: only this one's
      if (!flushed || std::ferror(stdout)) {
        report("error", flushed ? "<stdout>: write failed"
                                : ("<stdout>: write failed: " + std::string(std::strerror(flush_errno))).c_str());
        return 1;
      }
      return status;
    } catch (const gguflow::cli::UsageError& e) {
      report("error", e.what());
      return 2;
    } catch (const gguflow::Error& e) {
      report("error", e.what());
      return 1;
    } catch (const std::bad_alloc&) {
      report("error", "out of memory (a limit in docs/RELIABILITY.md may help)");
      return 1;
    } catch (const std::exception& e) {
      report("unexpected error", e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "gguflow: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return 2;
}
