// A small command-line parser shared by every subcommand, so that `--help` is generated from
// the same declarations that parsing uses (and therefore stays true).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow::cli {

// The most worker threads an option accepts (--threads).
inline constexpr int64_t kMaxThreads = 4096;

class Args {
 public:
  // `usage` is the synopsis after "gguflow", e.g. "inspect MODEL.gguf [options]".
  Args(std::string usage, std::string description);

  // Declares an option taking a value. `names` is "--long" or "-s,--long". Repeatable options
  // keep every value (see `all`).
  Args& option(std::string names, std::string metavar, std::string help,
               std::string default_value = "");
  // Declares a boolean switch.
  Args& flag(std::string names, std::string help);
  // Declares a positional argument (for the help text); `min`/`max` bound how many are accepted.
  Args& positional(std::string metavar, std::string help);
  Args& positional_count(size_t min, size_t max);

  // Parses argv (the words after the subcommand name). Returns false after printing help for
  // `-h/--help`. Throws gguflow::Error for unknown options, missing values or a wrong number
  // of positional arguments.
  bool parse(int argc, char** argv);

  bool has(std::string_view name) const;  // given on the command line (switch or option)
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
    std::string short_name, long_name, metavar, help, default_value;
    bool takes_value = false;
    std::vector<std::string> values;
    bool seen = false;
  };
  Spec* find_spec(std::string_view name);
  const Spec& spec(std::string_view name) const;

  std::string usage_, description_;
  std::vector<Spec> specs_;
  std::vector<std::pair<std::string, std::string>> positional_help_;
  size_t min_positionals_ = 0, max_positionals_ = SIZE_MAX;
  std::vector<std::string> positionals_;
};

}  // namespace gguflow::cli
