// `gguflow detokenize --model M 1 2 3`: the text of token ids, written exactly (no newline is
// added). Ids may also come as one argument separated by spaces or commas ("1, 2, 3").
// An id outside the vocabulary is an error naming the id and the vocabulary size.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::cli {
namespace {

// Ids as separate arguments or as lists in them: "1 2 3", "1,2,3", "[1, 2, 3]" (what
// `tokenize --json` prints). Throws a UsageError naming the bad item; an empty item between
// commas ("1,,2", a trailing comma) is one.
std::vector<TokenId> parse_ids(const std::vector<std::string>& words) {
  std::string all;
  for (const std::string& word : words) all += word + ' ';
  for (char& c : all)
    if (c == '[' || c == ']') c = ' ';
  std::vector<TokenId> ids;
  size_t field_start = 0;
  const bool has_commas = all.find(',') != std::string::npos;
  while (field_start <= all.size()) {
    const size_t comma = std::min(all.find(',', field_start), all.size());
    std::istringstream field(all.substr(field_start, comma - field_start));
    std::string item;
    bool empty = true;
    while (field >> item) {
      empty = false;
      long long value = 0;
      const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (ec != std::errc() || ptr != item.data() + item.size() || value < INT32_MIN ||
          value > INT32_MAX)
        throw usage_error("token id '", item, "': expected an integer");
      ids.push_back(static_cast<TokenId>(value));
    }
    if (empty && has_commas) throw usage_error("token ids: an empty item between commas");
    field_start = comma + 1;
  }
  if (ids.empty()) throw usage_error("expected at least one token id, found none");
  return ids;
}

}  // namespace

int run_detokenize(int argc, char** argv) {
  Args args("detokenize --model MODEL.gguf ID... [options]",
            "Print the text of token ids with the model's own tokenizer, exactly (no newline "
            "added). Control tokens (<s>, <|im_end|>) print nothing unless --render-special. "
            "As llama2.c, the leading space of the first piece (and of a piece after BOS) is "
            "dropped for SentencePiece models unless --continuation.");
  args.option("-m,--model", "MODEL.gguf", "the model (or tokenizer-only GGUF) to use").env("GGUFLOW_MODEL")
      .flag("--render-special", "print the text of control tokens")
      .flag("--continuation", "the ids continue a text: keep the first piece's leading space")
      .positional("ID", "token ids (separate arguments, or one list with spaces or commas)")
      .positional_count(1, SIZE_MAX);
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model"))
    throw usage_error("--model: expected a GGUF file, found none");

  const std::vector<TokenId> ids = parse_ids(args.positionals());
  const auto file = GgufFile::open(args.get("--model"));
  const Tokenizer tokenizer = Tokenizer::from_gguf(*file);
  for (TokenId id : ids) tokenizer.check_id(id);
  const std::string text = tokenizer.decode(
      ids, {.render_special = args.has("--render-special"),
            .at_sequence_start = !args.has("--continuation")});
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace gguflow::cli
