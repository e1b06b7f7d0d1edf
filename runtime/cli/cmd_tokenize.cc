// `gguflow tokenize --model M "text" [--ids-only] [--no-bos] [--parse-special]`: the token ids
// (and pieces) a model's tokenizer makes of a text.
//
// Text must be valid UTF-8: invalid bytes are an error naming the byte offset (no silent
// replacement), because the ids would not encode what the user typed. Special-token text
// (<|im_start|>) is ordinary text unless --parse-special; text that looks special but is not a
// token of this vocabulary is always ordinary text.
#include <cstdio>
#include <string>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/core/console.h"
#include "runtime/core/input_file.h"
#include "runtime/core/json.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::cli {
namespace {

// A piece for display on one line: printable bytes as they are, \n \t \r and quotes escaped,
// other control bytes and bytes of incomplete UTF-8 (byte tokens) as \xNN.
std::string printable(const std::string& piece) {
  std::string out;
  for (size_t i = 0; i < piece.size(); ++i) {
    const auto byte = static_cast<unsigned char>(piece[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\\' || byte == '\'') {
      out += '\\';
      out += static_cast<char>(byte);
    } else if (byte < 0x20 || byte == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", byte);
      out += hex;
    } else if (byte < 0x80) {
      out += static_cast<char>(byte);
    } else {
      // Keep a whole valid multi-byte character; escape stray bytes.
      size_t length = (byte & 0xE0) == 0xC0 ? 2 : (byte & 0xF0) == 0xE0 ? 3
                      : (byte & 0xF8) == 0xF0 ? 4 : 0;
      bool whole = length > 0 && i + length <= piece.size();
      for (size_t k = 1; whole && k < length; ++k)
        whole = (static_cast<unsigned char>(piece[i + k]) & 0xC0) == 0x80;
      if (whole) {
        out.append(piece, i, length);
        i += length - 1;
      } else {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02X", byte);
        out += hex;
      }
    }
  }
  return out;
}

}  // namespace

int run_tokenize(int argc, char** argv) {
  Args args("tokenize -m MODEL.gguf (TEXT | -p TEXT | -f FILE | -) [options]",
            "Tokenize a text with the model's own tokenizer. Prints one token per line: its id "
            "and its piece in quotes (escaped), or with --ids-only the ids on one line, or with "
            "--json one JSON document. Text from a file or stdin loses one trailing line break, "
            "as in 'gguflow run'.");
  args.option("-m,--model", "MODEL.gguf", "the model (or tokenizer-only GGUF) to use").env("GGUFLOW_MODEL")
      .option("-p,--prompt", "TEXT", "the text to tokenize (instead of the TEXT argument)")
      .option("-f,--file", "FILE", "read the text from a file ('-': stdin)")
      .flag("--stdin", "read the text from stdin (as does the argument '-')")
      .flag("--ids-only,--ids", "print only the ids, separated by spaces, on one line")
      .flag("--json", "print {\"ids\": [...], \"pieces\": [...]} as one JSON document")
      .flag("--no-bos", "do not add BOS/EOS even if the model asks for them")
      .flag("--parse-special", "turn special-token text such as <|im_start|> into that token")
      .positional("TEXT", "the text to tokenize (valid UTF-8); '-' reads stdin")
      .positional_count(0, 1);
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model")) throw usage_error("-m/--model: expected a GGUF file, found none");
  if (args.has("--json") && args.has("--ids-only"))
    throw usage_error("expected one of --json and --ids-only, found both");
  const bool from_stdin = args.has("--stdin") || (!args.positionals().empty() && args.positionals()[0] == "-");
  const int sources = (args.positionals().empty() || args.positionals()[0] == "-" ? 0 : 1) +
                      args.has("--prompt") + args.has("--file") + from_stdin;
  if (sources != 1)
    throw usage_error("expected the text once: as TEXT, -p TEXT, -f FILE or - (stdin); found ",
                      sources, " sources");
  std::string text;
  if (from_stdin || args.get("--file") == "-") text = read_stream(stdin);  // '-' is stdin (docs/CLI.md)
  else if (args.has("--file")) text = read_input_file(args.get("--file"), "text file");
  else text = args.has("--prompt") ? args.get("--prompt") : args.positionals()[0];
  if (from_stdin || args.has("--file")) text = std::string(console::without_final_newline(text));

  const auto file = GgufFile::open(args.get("--model"));
  const Tokenizer tokenizer = Tokenizer::from_gguf(*file);
  const auto ids = tokenizer.encode(text, {.add_special = !args.has("--no-bos"),
                                           .parse_special = args.has("--parse-special")});
  if (args.has("--json")) {
    Json json = {{"ids", ids}, {"pieces", Json::array()}};
    for (TokenId id : ids) json["pieces"].push_back(tokenizer.piece(id, /*render_special=*/true));
    std::printf("%s\n", json_text(json, -1).c_str());
    return 0;
  }
  std::string out;
  if (args.has("--ids-only")) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += ' ';
      out += std::to_string(ids[i]);
    }
    out += '\n';
  } else {
    char id_text[24];
    for (TokenId id : ids) {
      std::snprintf(id_text, sizeof id_text, "%6d", id);
      out += id_text;
      out += " -> '" + printable(tokenizer.piece(id, /*render_special=*/true)) + "'\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gguflow::cli
