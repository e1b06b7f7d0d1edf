// The command-line parser every subcommand uses: CLI11 (Debian's libcli11-dev) underneath, so
// that option syntax is the usual one (`-n 5`, `-n5`, `--n-predict=5`, `--`, `-` for stdin,
// negative numbers as values) and `--help` is generated from the declarations parsing uses.
// This class keeps the declarations short and gives typed getters whose errors name the option.
//
//   Args args("run [GRAPH.yaml] -m MODEL.gguf -p TEXT [options]", "Generates text ...");
//   args.option("-m,--model", "FILE", "GGUF model").env("GGUFLOW_MODEL")
//       .option("-n,--n-predict", "N", "tokens to generate", "-1");
//   if (!args.parse(argc, argv)) return 0;  // --help was printed
//   int64_t n = args.get_int("--n-predict");
//
// Command-line mistakes throw UsageError: the CLI exits 2 for them (1 for bad input files and
// runtime errors; docs/CLI.md).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ops/error.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gguflow::cli {

// The most worker threads an option accepts (--threads).
inline constexpr int64_t kMaxThreads = 4096;

// A mistake on the command line (unknown option, missing or malformed value, wrong argument
// count, options that exclude each other): exit status 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

template <typename... Parts>
UsageError usage_error(Parts&&... parts) {
  return UsageError(error(std::forward<Parts>(parts)...).what());
}

// Runs a library check of an option's value (a parser, a range check) and rethrows its
// gguflow::Error as a UsageError: a malformed value given on the command line exits 2 like any
// other, whichever part of the program noticed it.
template <typename F>
decltype(auto) as_usage(F&& check) {
  try {
    return std::forward<F>(check)();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

class Args {
 public:
  // `usage` is the synopsis after "gguflow", e.g. "inspect MODEL.gguf [options]".
  Args(std::string usage, std::string description);
  ~Args();
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;

  // Declares an option taking a value. `names` is "--long", "-s,--long" or several aliases
  // ("-c,--ctx-size,--ctx"); any of them works in the getters. A single-dash name of several
  // letters (llama.cpp's "-ctk") is accepted on the command line as the first "--" name (CLI11
  // only knows one-letter short names) and shown in the help. Every occurrence is kept (see
  // `all`); `get` returns the last, as llama.cpp does.
  Args& option(std::string names, std::string metavar, std::string help,
               std::string default_value = "");
  // Declares a boolean switch.
  Args& flag(std::string names, std::string help);
  // The option declared last takes its value from environment variable `variable` when it is
  // not on the command line (the help shows it).
  Args& env(std::string variable);
  // Declares a positional argument (for the help text); `min`/`max` bound how many are accepted.
  Args& positional(std::string metavar, std::string help);
  Args& positional_count(size_t min, size_t max);

  // Parses argv (the words after the subcommand name). Returns false after printing help for
  // `-h/--help`. Throws UsageError for unknown options, missing values or a wrong number of
  // positional arguments.
  bool parse(int argc, char** argv);

  bool has(std::string_view name) const;  // given (on the command line or by its environment variable)
  std::string get(std::string_view name) const;  // last value, or the declared default
  std::vector<std::string> all(std::string_view name) const;
  int64_t get_int(std::string_view name) const;    // throws naming the option if not an integer
  // get_int within [min, max]; throws naming the option, the range and the value otherwise
  // (`--threads 4294967297` was narrowed to 1 by a cast).
  int64_t get_int_in(std::string_view name, int64_t min, int64_t max) const;
  double get_double(std::string_view name) const;  // throws naming the option if not a number
  const std::vector<std::string>& positionals() const { return positionals_; }

  std::string help() const;

 private:
  struct Spec {
    std::vector<std::string> names;  // every alias, with its dashes
    std::string metavar, help, default_value;
    bool takes_value = false;
    std::vector<std::string> values;  // CLI11 writes here (hence a deque: stable addresses)
    int64_t flag_count = 0;
    CLI::Option* option = nullptr;
  };
  const Spec& spec(std::string_view name) const;
  std::string unknown_option_message(const std::string& cli11_message) const;

  std::string usage_;
  std::unique_ptr<CLI::App> app_;
  std::deque<Spec> specs_;
  std::vector<std::pair<std::string, std::string>> positional_help_;
  // Single-dash names of several letters ("-ctk") and the "--" name each stands for.
  std::vector<std::pair<std::string, std::string>> word_aliases_;
  // `names` without its word aliases (recorded in word_aliases_), as CLI11 takes them.
  std::string cli11_names(const std::vector<std::string>& names, std::string* help);
  size_t min_positionals_ = 0, max_positionals_ = 0;  // none unless positional_count says
  std::vector<std::string> positionals_;
};

}  // namespace gguflow::cli
