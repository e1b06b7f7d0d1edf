#include "runtime/tokenizer/chat_template.h"

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "tests/support/error_of.h"
#include "tests/support/test_data.h"
#include "tests/tokenizer/tokenizer_test_util.h"

namespace gguflow {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Name a color."}};

TEST(ChatTemplate, ChatML) {
  EXPECT_EQ(ChatTemplate(ChatFormat::kChatML).apply(kConversation),
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello!<|im_end|>\n"
            "<|im_start|>user\nName a color.<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama2) {
  EXPECT_EQ(ChatTemplate(ChatFormat::kLlama2).apply(kConversation),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello!</s>"
            "<s>[INST] Name a color. [/INST]");
}

TEST(ChatTemplate, Llama3) {
  EXPECT_EQ(ChatTemplate(ChatFormat::kLlama3).apply(kConversation, false),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nName a color.<|eot_id|>");
}

// llama.cpp's "gemma" format: no system role (its text opens the first user turn), the
// assistant is "model", contents trimmed.
TEST(ChatTemplate, Gemma) {
  EXPECT_EQ(ChatTemplate(ChatFormat::kGemma).apply(kConversation),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
            "<start_of_turn>model\nHello!<end_of_turn>\n"
            "<start_of_turn>user\nName a color.<end_of_turn>\n"
            "<start_of_turn>model\n");
}

// A system message with no user message after it has nowhere to go: refused, not dropped.
TEST(ChatTemplate, GemmaRefusesASystemMessageNoUserMessageFollows) {
  const std::vector<ChatMessage> only_system = {{"system", "Be brief."}};
  EXPECT_THROW(ChatTemplate(ChatFormat::kGemma).apply(only_system), Error);
  const std::vector<ChatMessage> system_last = {{"user", "Hi"}, {"system", "Be brief."}};
  EXPECT_THROW(ChatTemplate(ChatFormat::kGemma).apply(system_last), Error);
}

TEST(ChatTemplate, Phi3) {
  EXPECT_EQ(ChatTemplate(ChatFormat::kPhi3).apply(kConversation),
            "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello!<|end|>\n"
            "<|user|>\nName a color.<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplate, NamedFormatsAndTheErrorListingThem) {
  for (const char* name : {"chatml", "llama2", "llama3", "gemma", "phi3"})
    EXPECT_STREQ(ChatTemplate::named(name).name(), name);
  const std::string message = test::error_of([] { ChatTemplate::named("vicuna"); });
  EXPECT_NE(message.find("'vicuna'"), std::string::npos) << message;
  EXPECT_NE(message.find("chatml, llama2, llama3, gemma, phi3"), std::string::npos) << message;
}

// The family fixtures carry no tokenizer.chat_template: the format follows the architecture.
TEST(ChatTemplate, FamiliesWithoutATemplateFollowTheirArchitecture) {
  const std::pair<const char*, const char*> cases[] = {{"synth-qwen3-tiny-f32.gguf", "chatml"},
                                                       {"synth-gemma2-tiny-f32.gguf", "gemma"},
                                                       {"synth-gemma3-tiny-f32.gguf", "gemma"},
                                                       {"synth-phi3-tiny-f32.gguf", "phi3"}};
  for (const auto& [model, format] : cases) {
    GGUFLOW_REQUIRE_DATA(std::string("models/") + model);
    auto file = GgufFile::open(test::data_path(std::string("models/") + model).string());
    const Vocabulary vocab = Vocabulary::from_gguf(*file);
    EXPECT_STREQ(ChatTemplate::require(*file, vocab).name(), format) << model;
  }
}

TEST(ChatTemplate, RejectsUnknownRoles) {
  const std::vector<ChatMessage> bad = {{"tool", "x"}};
  EXPECT_THROW(ChatTemplate(ChatFormat::kChatML).apply(bad), Error);
}

TEST(ChatTemplate, RecognizesJinjaBySubstrings) {
  EXPECT_EQ(ChatTemplate::recognize(
                "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n'}}"),
            ChatFormat::kChatML);
  EXPECT_EQ(ChatTemplate::recognize("{{ '<|start_header_id|>' + message['role'] + "
                                    "'<|end_header_id|>\\n\\n' }}"),
            ChatFormat::kLlama3);
  EXPECT_EQ(ChatTemplate::recognize("{{ bos_token + '[INST] ' + content + ' [/INST]' }}"),
            ChatFormat::kLlama2);
  EXPECT_EQ(ChatTemplate::recognize("{{ '<start_of_turn>' + role }}"), ChatFormat::kGemma);
  EXPECT_EQ(ChatTemplate::recognize("{{'<|' + message['role'] + '|>' + '\\n' + content + "
                                    "'<|end|>'}}{{ '<|assistant|>\\n' }}"),
            ChatFormat::kPhi3);
  EXPECT_EQ(ChatTemplate::recognize("{{ 'USER: ' + content + ' ASSISTANT:' }}"), std::nullopt);
}

TEST(ChatTemplate, Qwen2ArchitectureIsChatMLAndTokenizesToControlTokens) {
  GGUFLOW_REQUIRE_DATA("vocab/ggml-vocab-qwen2.gguf");
  const auto file = GgufFile::open(test::data_path("vocab/ggml-vocab-qwen2.gguf").string());
  const Tokenizer& tok = test::shared_tokenizer("vocab/ggml-vocab-qwen2.gguf");
  const auto chat = ChatTemplate::detect(*file, tok.vocab());
  ASSERT_TRUE(chat.has_value());
  EXPECT_EQ(chat->format(), ChatFormat::kChatML);
  const auto ids = tok.encode(chat->apply(kConversation), {.parse_special = true});
  EXPECT_EQ(ids.front(), tok.vocab().find("<|im_start|>"));
  EXPECT_EQ(std::count(ids.begin(), ids.end(), tok.vocab().find("<|im_end|>")), 4);
}

TEST(ChatTemplate, Stories260KHasNoKnownTemplateAndSaysSo) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  const auto file = GgufFile::open(test::data_path("models/stories260K.gguf").string());
  const Tokenizer& tok = test::shared_tokenizer("models/stories260K.gguf");
  EXPECT_FALSE(ChatTemplate::detect(*file, tok.vocab()).has_value());
  try {
    ChatTemplate::require(*file, tok.vocab());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no chat template"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gguflow
