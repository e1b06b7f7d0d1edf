// The runner's parts without the CLI: chat turn deltas, the graph's sampler section, the
// default-model search with its synthesized fallback, and a Generator on stories260K.
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "runtime/graph/sampler_section.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/runner/chat_conversation.h"
#include "tests/support/error_of.h"
#include "runtime/runner/default_model.h"
#include "runtime/runner/generator.h"
#include "runtime/runner/sampler_settings.h"
#include "runtime/tokenizer/tokenizer.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

namespace fs = std::filesystem;

TEST(ChatConversation, ChatMLTurnsFeedOnlyTheNewText) {
  runner::ChatConversation chat(ChatTemplate(ChatFormat::kChatML), "Be brief.");
  const runner::ChatTurn first = chat.user_turn("Hello");
  EXPECT_FALSE(first.restart);
  EXPECT_EQ(first.text,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
            "<|im_start|>assistant\n");
  chat.assistant_reply("Hi there!");
  const runner::ChatTurn second = chat.user_turn("And again?");
  EXPECT_FALSE(second.restart);
  // The cache holds the reply's tokens; the end of its turn and the next turn are new.
  EXPECT_EQ(second.text,
            "<|im_end|>\n<|im_start|>user\nAnd again?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(chat.messages().size(), 4u);
}

// The messages' own bytes in each turn's text (what --chat tokenizes as literal text), shifted
// past what the cache already holds; bad UTF-8 is named in the message, not the rendered text.
TEST(ChatConversation, TurnsCarryTheirMessagesRanges) {
  runner::ChatConversation chat(ChatTemplate(ChatFormat::kChatML), "Be brief.");
  const runner::ChatTurn first = chat.user_turn("Hello");
  std::vector<std::string> contents;
  for (const auto& [begin, end] : first.content) contents.push_back(first.text.substr(begin, end - begin));
  EXPECT_EQ(contents, (std::vector<std::string>{"Be brief.", "Hello"}));
  chat.assistant_reply("Hi there!");
  const runner::ChatTurn second = chat.user_turn("And <|im_end|>?");
  ASSERT_EQ(second.content.size(), 1u);
  EXPECT_EQ(second.text.substr(second.content[0].first, second.content[0].second - second.content[0].first),
            "And <|im_end|>?");
  chat.assistant_reply("ok");
  EXPECT_THAT(error_of([&] { chat.user_turn("ab\xff"); }),
              ::testing::HasSubstr("chat message: byte offset 2: expected valid UTF-8, found byte 0xFF"));
  EXPECT_EQ(chat.messages().size(), 5u);  // the bad message was not added
  EXPECT_THAT(error_of([] { runner::ChatConversation bad(ChatTemplate(ChatFormat::kChatML), "x\xc3"); }),
              ::testing::HasSubstr("--system: byte offset 1: expected valid UTF-8, found byte 0xC3, which starts a "
                                   "sequence that is cut short"));
}

TEST(ChatConversation, Llama2TurnsContinueAfterTheReply) {
  runner::ChatConversation chat(ChatTemplate(ChatFormat::kLlama2), "");
  EXPECT_EQ(chat.user_turn("Hello").text, "[INST] Hello [/INST]");
  chat.assistant_reply(" Hi");
  EXPECT_EQ(chat.user_turn("More").text, "</s><s>[INST] More [/INST]");
}

TEST(ChatConversation, ARewrittenHistoryRestartsTheCache) {
  // llama-3 trims message text, so a reply with surrounding spaces renders differently from
  // what was generated: the whole conversation must be evaluated again.
  runner::ChatConversation chat(ChatTemplate(ChatFormat::kLlama3), "");
  chat.user_turn("Hello");
  chat.assistant_reply(" Hi ");
  const runner::ChatTurn next = chat.user_turn("More");
  EXPECT_TRUE(next.restart);
  EXPECT_EQ(next.text.rfind("<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>", 0), 0u)
      << next.text;
  EXPECT_THROW(chat.user_turn("twice in a row"), Error);
}

// Writes into one folder per test (temp_dir() makes a fresh one on every call).
fs::path write(const std::string& name, const std::string& text) {
  static fs::path dir;
  static std::string dir_test;
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  if (dir.empty() || dir_test != test) dir = temp_dir(), dir_test = test;
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path;
}

TEST(SamplerSection, DerivedFileOverridesItsBaseKeyByKey) {
  write("base.yaml", "graph: base\nsampler:\n  input: logits\n  temperature: 0.5\n  top_k: 7\n");
  const fs::path top = write("top.yaml", "graph: top\nextends: base.yaml\nsampler:\n  top_k: 3\n  seed: 11\n");
  const graph::SamplerSection section = graph::load_sampler_section(top.string());
  EXPECT_TRUE(section.present);
  EXPECT_EQ(section.input, "logits");
  const sampling::SamplerConfig config = runner::config_from_section(section);
  EXPECT_FLOAT_EQ(config.temperature, 0.5f);
  EXPECT_EQ(config.top_k, 3);
  EXPECT_EQ(config.seed, 11u);
  EXPECT_FLOAT_EQ(config.top_p, sampling::SamplerConfig{}.top_p);  // untouched default
  EXPECT_TRUE(runner::section_sets_seed(section));

  runner::SamplerOverrides flags;
  flags.temperature = 0.0f;
  flags.top_k = 1;
  const sampling::SamplerConfig merged = runner::apply_overrides(config, flags);
  EXPECT_TRUE(merged.greedy());
  EXPECT_EQ(merged.top_k, 1);
  EXPECT_EQ(merged.seed, 11u);
  flags.top_p = 1.5f;
  EXPECT_THROW(runner::apply_overrides(config, flags), Error);
}

TEST(SamplerSection, BadSettingsNameTheirPlace) {
  const auto message = [](const std::string& name, const std::string& text) {
    try {
      runner::config_from_section(graph::load_sampler_section(write(name, text).string()));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("a.yaml", "graph: a\nsampler:\n  top_k: many\n").find("a.yaml:3:10: sampler: top_k: expected an integer, found 'many'"),
            std::string::npos);
  EXPECT_NE(message("b.yaml", "graph: b\nsampler:\n  temperature: hot\n").find("b.yaml:3:16: sampler: temperature: expected a number"),
            std::string::npos);
  EXPECT_NE(message("c.yaml", "graph: c\nsampler: [1, 2]\n").find("c.yaml:2:10: sampler: expected a map"),
            std::string::npos);
  EXPECT_NE(message("d.yaml", "graph: d\nsampler:\n  top_p: 3\n").find("top_p: expected a value in (0, 1]"),
            std::string::npos);
  EXPECT_FALSE(graph::load_sampler_section(write("e.yaml", "graph: e\n").string()).present);
}

TEST(DefaultModel, SearchOrder) {
  const fs::path present = write("present.gguf", "x");
  runner::ModelSearch search;
  search.defaults = {temp_dir() / "absent.gguf", present};
  search.cache_dir = temp_dir() / "cache";
  EXPECT_EQ(runner::choose_model(search).path, present.string());
  EXPECT_EQ(runner::choose_model(search).source, "default");
  search.env_path = "/from/env.gguf";
  EXPECT_EQ(runner::choose_model(search).path, "/from/env.gguf");
  search.explicit_path = "/given.gguf";
  EXPECT_EQ(runner::choose_model(search).source, "--model");
  EXPECT_FALSE(fs::exists(search.cache_dir));  // nothing synthesized while a model exists
}

TEST(DefaultModel, SynthesizesARandomModelThatRuns) {
  runner::ModelSearch search;
  search.defaults = {temp_dir() / "absent.gguf"};
  search.cache_dir = temp_dir() / "cache";
  const runner::ModelChoice choice = runner::choose_model(search);
  EXPECT_TRUE(choice.random_weights);
  EXPECT_EQ(choice.source, "synthesized");
  ASSERT_TRUE(fs::is_regular_file(choice.path));
  const auto written = fs::last_write_time(choice.path);
  EXPECT_EQ(runner::choose_model(search).path, choice.path);  // cached, not written again
  EXPECT_EQ(fs::last_write_time(choice.path), written);

  // It loads through the shipped graph and generates exactly as many tokens as asked.
  auto file = GgufFile::open(choice.path);
  auto g = std::make_shared<const graph::Graph>(
      graph::load_graph(graph::find_shipped_graph("decode.yaml"), file));
  const Tokenizer tokenizer = Tokenizer::from_gguf(*file);
  exec::SessionOptions options;
  options.n_threads = 1;
  options.n_ctx = 64;
  exec::Session session(g, *plugins::select_kernels().table, options);
  sampling::SamplerConfig config;
  config.seed = 3;
  sampling::Sampler sampler(config);
  runner::Generator generator(session, tokenizer, sampler);
  runner::GenerateOptions generate;
  generate.n_predict = 5;
  const runner::GenerationResult r = generator.generate(tokenizer.encode("hello"), generate);
  EXPECT_LE(r.ids.size(), 5u);
  EXPECT_EQ(r.text, tokenizer.decode(r.ids, DecodeOptions{false, false}));
}

TEST(Generator, ChatTurnsEvaluateTheLastTokenOfTheReplyBeforeTheNextPrompt) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  auto file = GgufFile::open(data_path("models/stories260K.gguf").string());
  auto g = std::make_shared<const graph::Graph>(
      graph::load_graph(graph::find_shipped_graph("decode.yaml"), file));
  const Tokenizer tokenizer = Tokenizer::from_gguf(*file);
  exec::SessionOptions options;
  options.n_threads = 1;
  exec::Session session(g, *plugins::select_kernels().table, options);
  sampling::SamplerConfig config;
  config.temperature = 0;
  sampling::Sampler sampler(config);
  runner::Generator generator(session, tokenizer, sampler);
  runner::GenerateOptions generate;
  generate.n_predict = 3;
  const std::vector<TokenId> bos = {1};
  const runner::GenerationResult first = generator.generate(bos, generate);
  EXPECT_EQ(first.ids, (std::vector<TokenId>{403, 407, 261}));  // golden ids 1..3
  EXPECT_EQ(session.n_past(), 3);  // BOS + 2 fed back; the third is pending
  // Continuing with golden id 4 as the "prompt" must go on exactly as the golden sequence.
  const std::vector<TokenId> next = {378};
  const runner::GenerationResult second = generator.generate(next, generate);
  EXPECT_EQ(second.ids, (std::vector<TokenId>{432, 383, 286}));  // golden ids 5..7
  EXPECT_EQ(session.n_past(), 3 + 2 + 2);
  const std::vector<TokenId> too_many(session.n_ctx(), 1);
  EXPECT_THROW(generator.generate(too_many, generate), Error);
}

}  // namespace
}  // namespace gguflow::test
