#include "runtime/cli/args.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "ops/op_registry.h"

namespace gguflow::cli {
namespace {

constexpr size_t kHelpColumn = 30;

std::string pad_to_column(std::string left) {
  left.append(left.size() < kHelpColumn ? kHelpColumn - left.size() : 1, ' ');
  return left;
}

std::vector<std::string> split_names(const std::string& names) {
  std::vector<std::string> out;
  std::stringstream in(names);
  for (std::string name; std::getline(in, name, ',');) out.push_back(name);
  return out;
}

// `text` broken into lines of at most `width` characters at spaces. Each of its own lines
// ('\n') is wrapped alone, so paragraphs and lists keep their breaks; a line that fits is kept
// as written (aligned columns), and a longer one's leading spaces indent its continuation lines.
std::string wrap(const std::string& text, size_t width) {
  std::string out;
  std::stringstream lines(text);
  for (std::string source; std::getline(lines, source);) {
    if (source.size() <= width) {
      out += source + "\n";
      continue;
    }
    const std::string indent = source.substr(0, std::min(source.find_first_not_of(' '), source.size()));
    std::string line = indent;
    std::stringstream words(source);
    for (std::string word; words >> word;) {
      if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
        out += line + "\n";
        line = indent;
      }
      line += (line.size() > indent.size() ? " " : "") + word;
    }
    out += line + "\n";
  }
  return out;
}

// Help in gguflow's layout: synopsis, description, the positional arguments with their own
// help (CLI11 sees one list of words; the per-word help is ours), then the options.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter(std::string usage, std::string arguments)
      : usage_(std::move(usage)), arguments_(std::move(arguments)) {
    column_width(kHelpColumn);
  }
  std::string make_description(const CLI::App*) const override { return ""; }
  std::string make_usage(const CLI::App* app, std::string) const override {
    return "usage: gguflow " + usage_ + "\n\n" + wrap(app->get_description(), 96) + "\n";
  }
  std::string make_positionals(const CLI::App*) const override { return arguments_; }

 private:
  std::string usage_, arguments_;
};

}  // namespace

// Marks a word CLI11 must take as it is (see parse()): ASCII unit separator, which no text a
// user types on a command line starts with.
constexpr char kVerbatimMark = '\x1f';

Args::Args(std::string usage, std::string description)
    : usage_(std::move(usage)), app_(std::make_unique<CLI::App>(std::move(description))) {
  app_->set_help_flag("-h,--help", "show this help and exit");
  app_->allow_extras(true);  // unknown options are reported by parse(), with a suggestion
  app_->add_option("ARGS", positionals_)->expected(0, -1)->group("");
}

Args::~Args() = default;

std::string Args::cli11_names(const std::vector<std::string>& names, std::string* help) {
  std::string kept, aliases;
  const auto long_name = std::find_if(names.begin(), names.end(),
                                      [](const std::string& n) { return n.rfind("--", 0) == 0; });
  for (const std::string& n : names) {
    if (n.size() > 2 && n[0] == '-' && n[1] != '-') {
      GGUFLOW_CHECK(long_name != names.end());  // a word alias stands for a "--" name
      word_aliases_.emplace_back(n, *long_name);
      aliases += (aliases.empty() ? "" : ", ") + n;
    } else {
      kept += (kept.empty() ? "" : ",") + n;
    }
  }
  if (!aliases.empty()) *help = "(" + aliases + ") " + *help;
  return kept;
}

Args& Args::option(std::string names, std::string metavar, std::string help,
                   std::string default_value) {
  Spec& s = specs_.emplace_back();
  s.names = split_names(names);
  names = cli11_names(s.names, &help);
  s.metavar = std::move(metavar);
  s.default_value = std::move(default_value);
  s.takes_value = true;
  // A default the help text already explains is not repeated.
  s.help = help;
  if (!s.default_value.empty() && help.find("default") == std::string::npos)
    s.help += " (default: " + s.default_value + ")";
  s.option = app_->add_option(names, s.values, s.help)
                 ->type_name(s.metavar)
                 ->expected(1)
                 ->allow_extra_args(false)
                 ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return *this;
}

Args& Args::flag(std::string names, std::string help) {
  Spec& s = specs_.emplace_back();
  s.names = split_names(names);
  names = cli11_names(s.names, &help);
  s.help = std::move(help);
  s.option = app_->add_flag(names, s.flag_count, s.help);
  return *this;
}

Args& Args::env(std::string variable) {
  GGUFLOW_CHECK(!specs_.empty());
  specs_.back().option->envname(std::move(variable));
  return *this;
}

Args& Args::positional(std::string metavar, std::string help) {
  positional_help_.emplace_back(std::move(metavar), std::move(help));
  return *this;
}

Args& Args::positional_count(size_t min, size_t max) {
  min_positionals_ = min;
  max_positionals_ = max;
  return *this;
}

const Args::Spec& Args::spec(std::string_view name) const {
  for (const Spec& s : specs_)
    if (std::find(s.names.begin(), s.names.end(), name) != s.names.end()) return s;
  GGUFLOW_CHECK(!"option queried but never declared");
  return specs_.front();
}

std::string Args::unknown_option_message(const std::string& word) const {
  std::string name = word.substr(0, word.find('='));
  std::vector<std::string> candidates;
  for (const Spec& s : specs_) candidates.insert(candidates.end(), s.names.begin(), s.names.end());
  const std::string best = ops::closest_name(name, candidates);
  return "unknown option '" + name + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
         "; see 'gguflow " + usage_.substr(0, usage_.find(' ')) + " --help'";
}

bool Args::parse(int argc, char** argv) {
  std::ostringstream arguments;
  if (!positional_help_.empty()) {
    arguments << "Arguments:\n";
    for (auto& [meta, text] : positional_help_) arguments << pad_to_column("  " + meta) << text << "\n";
  }
  app_->formatter(std::make_shared<HelpFormatter>(usage_, arguments.str()));

  std::vector<std::string> words(argv, argv + argc);
  // Word aliases ("-ctk q8_0", "-ctk=q8_0") become their "--" names, up to a "--".
  for (std::string& w : words) {
    if (w == "--") break;
    for (const auto& [alias, long_name] : word_aliases_)
      if (w == alias || w.rfind(alias + "=", 0) == 0) w = long_name + w.substr(alias.size());
  }
  // CLI11 reads a positional word that starts with '[' and ends with ']' as a list ("[1,2]" ->
  // 1, 2; "[CLS] hi [SEP]" -> "CLS] hi [SEP"): such words (and, so that the mark can always be
  // taken off again, words that start with the mark) go in behind kVerbatimMark.
  for (std::string& w : words)
    if ((w.size() >= 2 && w.front() == '[' && w.back() == ']') || (!w.empty() && w.front() == kVerbatimMark))
      w.insert(w.begin(), kVerbatimMark);
  std::reverse(words.begin(), words.end());  // CLI11 takes them last-first
  const auto unmark = [](std::string& w) {
    if (!w.empty() && w.front() == kVerbatimMark) w.erase(w.begin());
  };
  try {
    app_->parse(words);
  } catch (const CLI::CallForHelp&) {
    std::fputs(help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    // CLI11 names the option; ours adds the way to the help.
    throw usage_error(e.what(), "; see 'gguflow ", usage_.substr(0, usage_.find(' ')), " --help'");
  }
  for (std::string& w : positionals_) unmark(w);
  for (Spec& s : specs_)
    for (std::string& v : s.values) unmark(v);
  // CLI11 lists a "--" (end of options) among the extras too: it is not an unknown option.
  for (std::string extra : app_->remaining()) {
    unmark(extra);
    if (extra != "--") throw UsageError(unknown_option_message(extra));
  }
  if (positionals_.size() < min_positionals_ || positionals_.size() > max_positionals_) {
    std::ostringstream msg;
    msg << "expected ";
    if (min_positionals_ == max_positionals_) msg << min_positionals_;
    else if (max_positionals_ == SIZE_MAX) msg << "at least " << min_positionals_;
    else msg << min_positionals_ << " to " << max_positionals_;
    msg << " argument(s), got " << positionals_.size() << "; usage: gguflow " << usage_;
    throw UsageError(msg.str());
  }
  return true;
}

bool Args::has(std::string_view name) const {
  const Spec& s = spec(name);
  return s.takes_value ? !s.values.empty() : s.flag_count > 0;
}

std::string Args::get(std::string_view name) const {
  const Spec& s = spec(name);
  return s.values.empty() ? s.default_value : s.values.back();
}

std::vector<std::string> Args::all(std::string_view name) const { return spec(name).values; }

int64_t Args::get_int(std::string_view name) const {
  std::string text = get(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw usage_error("option '", name, "' expects an integer, got '", text, "'");
  return value;
}

int64_t Args::get_int_in(std::string_view name, int64_t min, int64_t max) const {
  const int64_t value = get_int(name);
  if (value < min || value > max)
    throw usage_error("option '", name, "': expected an integer from ", min, " to ", max,
                      ", found ", value);
  return value;
}

double Args::get_double(std::string_view name) const {
  std::string text = get(name);
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw usage_error("option '", name, "' expects a number, got '", text, "'");
}

std::string Args::help() const { return app_->help(); }

}  // namespace gguflow::cli
