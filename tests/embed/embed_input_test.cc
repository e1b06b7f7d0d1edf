// Reading texts for `gguflow embed`: line and JSONL formats, the JSON subset, UTF-8 checking and
// errors that name the line.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/core/utf8.h"
#include "runtime/embed/embed_input.h"
#include "runtime/embed/json_line.h"
#include "tests/support/error_of.h"
#include "tests/support/test_data.h"

namespace gguflow::embed {
namespace {

InputReport read(const std::string& text, InputFormat format, bool skip_empty = false) {
  std::istringstream in(text);
  return read_embed_inputs(in, "in.txt", format, skip_empty);
}

using test::error_of;

TEST(EmbedInput, TextLinesKeepOrderIndexAndLine) {
  const InputReport r = read("first text\r\nsecond  text \nthird", InputFormat::kText);
  ASSERT_EQ(r.texts.size(), 3u);
  EXPECT_EQ(r.texts[0].text, "first text");  // '\r' of CRLF removed
  EXPECT_EQ(r.texts[1].text, "second  text ");  // inner and trailing spaces kept
  EXPECT_EQ(r.texts[2].text, "third");        // no final newline
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.texts[i].index, i);
    EXPECT_EQ(r.texts[i].line, i + 1);
  }
}

TEST(EmbedInput, EmptyLineIsAnErrorNamingTheLine) {
  const std::string msg = error_of([] { read("a\nb\n\nc\n", InputFormat::kText); });
  EXPECT_NE(msg.find("in.txt:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("empty line"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--skip-empty"), std::string::npos) << msg;
}

TEST(EmbedInput, SkipEmptyLeavesGapsInTheIndex) {
  const InputReport r = read("a\n\nb\r\n\r\nc\n", InputFormat::kText, true);
  ASSERT_EQ(r.texts.size(), 3u);
  EXPECT_EQ(r.skipped_empty, 2);
  EXPECT_EQ(r.texts[1].text, "b");
  EXPECT_EQ(r.texts[1].index, 2);
  EXPECT_EQ(r.texts[2].index, 4);
  EXPECT_EQ(r.texts[2].line, 5);
}

TEST(EmbedInput, NoTextsAtAllIsAnError) {
  EXPECT_NE(error_of([] { read("", InputFormat::kText); }).find("empty input"), std::string::npos);
  EXPECT_NE(error_of([] { read("\n\n", InputFormat::kText, true); }).find("only empty lines"),
            std::string::npos);
}

TEST(EmbedInput, InvalidUtf8NamesLineAndColumn) {
  const std::string msg = error_of([] { read("ok\nfine\nab\xC3(\n", InputFormat::kText); });
  EXPECT_NE(msg.find("in.txt:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("0xc3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 3"), std::string::npos) << msg;
}

TEST(EmbedInput, NulByteIsReportedAsBinary) {
  const std::string msg =
      error_of([] { read(std::string("text\n\x7f" "ELF\x02\x01\x01\x00\x00", 14), InputFormat::kText); });
  EXPECT_NE(msg.find("in.txt:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NUL"), std::string::npos) << msg;
  EXPECT_NE(msg.find("binary"), std::string::npos) << msg;
}

// The check embed's input reader uses (runtime/core/utf8.h, shared with the tokenizers).
TEST(EmbedInput, FindInvalidUtf8) {
  EXPECT_EQ(utf8::find_invalid_utf8("plain ascii"), std::nullopt);
  EXPECT_EQ(utf8::find_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), std::nullopt);
  EXPECT_EQ(utf8::find_invalid_utf8("a\x80"), 1u);                 // lone continuation byte
  EXPECT_EQ(utf8::find_invalid_utf8("ab\xC0\xAF"), 2u);            // overlong '/'
  EXPECT_EQ(utf8::find_invalid_utf8("\xE0\x80\xAF"), 0u);          // overlong 3-byte
  EXPECT_EQ(utf8::find_invalid_utf8("x\xED\xA0\x80"), 1u);         // surrogate U+D800
  EXPECT_EQ(utf8::find_invalid_utf8("\xF4\x90\x80\x80"), 0u);      // above U+10FFFF
  EXPECT_EQ(utf8::find_invalid_utf8("ok\xE2\x82"), 2u);            // truncated at the end
  EXPECT_EQ(utf8::find_invalid_utf8("\xFF"), 0u);
}

TEST(EmbedInput, JsonlTakesTheTextField) {
  const InputReport r = read(
      "{\"id\": 7, \"text\": \"tab\\there \\\"q\\\" \\u00e9\\ud83d\\ude00\", \"x\": [1, {\"text\": 2}]}\n"
      "  {\"meta\": {\"text\": \"nested, ignored\"}, \"text\": \"second\"}  \n",
      InputFormat::kJsonl);
  ASSERT_EQ(r.texts.size(), 2u);
  EXPECT_EQ(r.texts[0].text, "tab\there \"q\" \xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(r.texts[1].text, "second");
  EXPECT_EQ(r.texts[1].line, 2);
}

TEST(EmbedInput, JsonlWithoutTextNamesTheLine) {
  const std::string msg = error_of([] {
    read("{\"text\": \"a\"}\n{\"txt\": \"b\"}\n", InputFormat::kJsonl);
  });
  EXPECT_NE(msg.find("in.txt:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"text\" field"), std::string::npos) << msg;
}

TEST(EmbedInput, JsonlTextMustBeAString) {
  const std::string msg = error_of([] { read("{\"text\": [\"a\"]}\n", InputFormat::kJsonl); });
  EXPECT_NE(msg.find("in.txt:1:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("found a array"), std::string::npos) << msg;
}

TEST(EmbedInput, JsonlSyntaxErrorsNameLineAndColumn) {
  const std::string msg = error_of([] { read("{\"text\": \"a\"}\n{\"text\": \"b\",}\n", InputFormat::kJsonl); });
  EXPECT_NE(msg.find("in.txt:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 14"), std::string::npos) << msg;
  // Plain text in a JSONL file.
  const std::string plain = error_of([] { read("hello\n", InputFormat::kJsonl); });
  EXPECT_NE(plain.find("in.txt:1:"), std::string::npos) << plain;
  EXPECT_NE(plain.find("JSON object"), std::string::npos) << plain;
}

TEST(EmbedInput, JsonlEmptyTextFollowsTheEmptyPolicy) {
  EXPECT_NE(error_of([] { read("{\"text\": \"\"}\n", InputFormat::kJsonl); }).find("in.txt:1:"),
            std::string::npos);
  const InputReport r = read("{\"text\": \"\"}\n\n{\"text\": \"z\"}\n", InputFormat::kJsonl, true);
  ASSERT_EQ(r.texts.size(), 1u);
  EXPECT_EQ(r.texts[0].index, 2);
  EXPECT_EQ(r.skipped_empty, 2);
}

TEST(JsonLine, RejectsWhatJsonRejects) {
  for (const char* bad : {"{\"a\": 01}", "{\"a\": 1.}", "{\"a\": tru}", "{\"a\" 1}", "{a: 1}",
                          "{\"a\": \"\\x\"}", "{\"a\": \"\\ud800\"}", "{\"a\": \"open}",
                          "{\"a\": 1} {", "[1]", "{\"a\": \"\t\"}", "{\"a\": \"\\u0000\"}"}) {
    EXPECT_THROW(json_object_field(bad, "a"), Error) << bad;
  }
  const JsonField f = json_object_field("{\"a\": -1.5e+3, \"b\": null, \"c\": \"\\/\"}", "c");
  EXPECT_TRUE(f.found && f.is_string);
  EXPECT_EQ(f.value, "/");
  EXPECT_FALSE(json_object_field("{}", "c").found);
  EXPECT_THROW(json_object_field("{\"a\": 1e999}", "a"), Error);  // out of double's range
  EXPECT_EQ(json_object_field("{\"c\": true}", "c").found_type, "boolean");
}

TEST(EmbedInput, FilesStdinNameAndFormatFromExtension) {
  const auto dir = test::temp_dir();
  const std::string jsonl = (dir / "in.jsonl").string();
  std::ofstream(jsonl) << "{\"text\": \"from jsonl\"}\n";
  EXPECT_EQ(read_embed_inputs(jsonl, {}).texts.at(0).text, "from jsonl");
  InputOptions as_text;
  as_text.format = InputFormat::kText;
  EXPECT_EQ(read_embed_inputs(jsonl, as_text).texts.at(0).text, "{\"text\": \"from jsonl\"}");

  const std::string missing = (dir / "nope.txt").string();
  const std::string msg = error_of([&] { read_embed_inputs(missing, {}); });
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { read_embed_inputs(dir.string(), {}); }).find("directory"),
            std::string::npos);
  EXPECT_THROW(parse_input_format("csv"), Error);
}

}  // namespace
}  // namespace gguflow::embed
