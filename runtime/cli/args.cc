#include "runtime/cli/args.h"

#include <charconv>
#include <cstdio>
#include <sstream>

#include "ops/error.h"

namespace gguflow::cli {

Args::Args(std::string usage, std::string description)
    : usage_(std::move(usage)), description_(std::move(description)) {
  flag("-h,--help", "show this help and exit");
}

static void split_names(const std::string& names, std::string& short_name, std::string& long_name) {
  auto comma = names.find(',');
  if (comma == std::string::npos) {
    (names.rfind("--", 0) == 0 ? long_name : short_name) = names;
  } else {
    short_name = names.substr(0, comma);
    long_name = names.substr(comma + 1);
  }
}

Args& Args::option(std::string names, std::string metavar, std::string help,
                   std::string default_value) {
  Spec s;
  split_names(names, s.short_name, s.long_name);
  s.metavar = std::move(metavar);
  s.help = std::move(help);
  s.default_value = std::move(default_value);
  s.takes_value = true;
  specs_.push_back(std::move(s));
  return *this;
}

Args& Args::flag(std::string names, std::string help) {
  Spec s;
  split_names(names, s.short_name, s.long_name);
  s.help = std::move(help);
  specs_.push_back(std::move(s));
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

Args::Spec* Args::find_spec(std::string_view name) {
  for (auto& s : specs_)
    if (s.long_name == name || s.short_name == name) return &s;
  return nullptr;
}

const Args::Spec& Args::spec(std::string_view name) const {
  for (auto& s : specs_)
    if (s.long_name == name || s.short_name == name) return s;
  GGUFLOW_CHECK(!"option queried but never declared");
  return specs_.front();
}

bool Args::parse(int argc, char** argv) {
  bool only_positionals = false;
  for (int i = 0; i < argc; ++i) {
    std::string word = argv[i];
    if (only_positionals || word.size() < 2 || word[0] != '-' ||
        (word[1] != '-' && !std::isalpha(static_cast<unsigned char>(word[1])))) {
      positionals_.push_back(word);  // includes "-" (stdin) and negative numbers
      continue;
    }
    if (word == "--") {
      only_positionals = true;
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
      inline_value = true;
    }
    Spec* s = find_spec(word);
    if (!s) throw error("unknown option '", word, "' (see --help)");
    s->seen = true;
    if (!s->takes_value) {
      if (inline_value) throw error("option '", word, "' takes no value");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) throw error("option '", word, "' needs a value (", s->metavar, ")");
      value = argv[++i];
    }
    s->values.push_back(value);
  }
  if (has("--help")) {
    std::fputs(help().c_str(), stdout);
    return false;
  }
  if (positionals_.size() < min_positionals_ || positionals_.size() > max_positionals_) {
    std::ostringstream msg;
    msg << "expected ";
    if (min_positionals_ == max_positionals_) msg << min_positionals_;
    else if (max_positionals_ == SIZE_MAX) msg << "at least " << min_positionals_;
    else msg << min_positionals_ << " to " << max_positionals_;
    msg << " argument(s), got " << positionals_.size() << "; usage: gguflow " << usage_;
    throw Error(msg.str());
  }
  return true;
}

bool Args::has(std::string_view name) const { return spec(name).seen; }

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
    throw error("option '", name, "' expects an integer, got '", text, "'");
  return value;
}

int64_t Args::get_int_in(std::string_view name, int64_t min, int64_t max) const {
  const int64_t value = get_int(name);
  if (value < min || value > max)
    throw error("option '", name, "': expected an integer from ", min, " to ", max, ", found ", value);
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
  throw error("option '", name, "' expects a number, got '", text, "'");
}

std::string Args::help() const {
  std::ostringstream out;
  out << "usage: gguflow " << usage_ << "\n\n" << description_ << "\n";
  if (!positional_help_.empty()) {
    out << "\narguments:\n";
    for (auto& [meta, text] : positional_help_) {
      std::string left = "  " + meta;
      out << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << text << "\n";
    }
  }
  out << "\noptions:\n";
  for (auto& s : specs_) {
    std::string left = "  ";
    if (!s.short_name.empty()) left += s.short_name + (s.long_name.empty() ? "" : ", ");
    left += s.long_name;
    if (s.takes_value) left += " " + s.metavar;
    out << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << s.help;
    if (!s.default_value.empty()) out << " (default: " << s.default_value << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace gguflow::cli
