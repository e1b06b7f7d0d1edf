#include "runtime/embed/embed_input.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ops/error.h"
#include "runtime/core/input_registry.h"
#include "runtime/core/utf8.h"
#include "runtime/embed/json_line.h"

namespace gguflow::embed {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

const char* format_name(InputFormat f) { return f == InputFormat::kJsonl ? "JSONL" : "text"; }

}  // namespace

InputFormat parse_input_format(std::string_view name) {
  if (name == "auto") return InputFormat::kAuto;
  if (name == "text") return InputFormat::kText;
  if (name == "jsonl") return InputFormat::kJsonl;
  throw error("--input-format: expected auto, text or jsonl, found '", name, "'");
}

InputReport read_embed_inputs(std::istream& in, const std::string& name, InputFormat format,
                              bool skip_empty) {
  GGUFLOW_CHECK(format != InputFormat::kAuto);
  InputReport report;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = name + ":" + std::to_string(line_no);
    if (const void* nul = std::memchr(line.data(), '\0', line.size()))
      throw error(where, ": expected ", format_name(format), ", found a NUL byte at column ",
                  static_cast<const char*>(nul) - line.data() + 1, " (is this a binary file?)");
    if (const std::optional<size_t> invalid = utf8::find_invalid_utf8(line)) {
      const size_t bad = *invalid;
      const unsigned byte = static_cast<unsigned char>(line[bad]);
      const char* digits = "0123456789abcdef";
      throw error(where, ": expected UTF-8 text, found the invalid byte 0x", digits[byte >> 4],
                  digits[byte & 15], " at column ", bad + 1, " (byte offset ", bad, " in the line)");
    }
    std::string text;
    if (format == InputFormat::kJsonl && !line.empty()) {
      JsonField field;
      try {
        field = json_object_field(line, "text");
      } catch (const Error& e) {
        throw error(where, ": not a JSON object: ", e.what());
      }
      if (!field.found)
        throw error(where, ": expected a JSON object with a \"text\" field, found none");
      if (!field.is_string)
        throw error(where, ": expected \"text\" to be a string, found a ", field.found_type);
      // \uXXXX escapes can spell what the raw bytes could not; they are decoded valid already.
      text = std::move(field.value);
    } else {
      text = std::move(line);
    }
    if (text.empty()) {
      if (!skip_empty)
        throw error(where, ": expected a text to embed, found an empty ",
                    format == InputFormat::kJsonl && !line.empty() ? "\"text\"" : "line",
                    " (pass --skip-empty to leave empty texts out)");
      ++report.skipped_empty;
      continue;
    }
    report.texts.push_back(EmbedInput{line_no - 1, line_no, std::move(text)});
  }
  if (in.bad()) throw error(name, ": read failed after line ", line_no, ": ", std::strerror(errno));
  if (report.texts.empty())
    throw error(name, ": expected at least one text to embed, found ",
                line_no == 0 ? "an empty input" : "only empty lines");
  return report;
}

InputReport read_embed_inputs(const std::string& path, const InputOptions& options) {
  InputFormat format = options.format;
  if (format == InputFormat::kAuto)
    format = ends_with(path, ".jsonl") || ends_with(path, ".ndjson") ? InputFormat::kJsonl
                                                                     : InputFormat::kText;
  if (path == "-") return read_embed_inputs(std::cin, "<stdin>", format, options.skip_empty);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw error(path, ": expected an input file, found a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw error(path, ": cannot open the input: ", std::strerror(errno));
  if (struct stat st {}; ::stat(path.c_str(), &st) == 0) remember_input_file(st.st_dev, st.st_ino);
  return read_embed_inputs(file, path, format, options.skip_empty);
}

}  // namespace gguflow::embed
